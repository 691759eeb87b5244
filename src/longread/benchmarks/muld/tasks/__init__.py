"""The six MuLD tasks on the generic runner: the paper's chunking baselines (retrieval, sections,
subtitle chunks, mention chunks, same-author pairs), their metrics and curves.
"""

from __future__ import annotations

from longread.benchmarks.muld.tasks.chunks import (
    ABBREVIATIONS,
    Selection,
    token_chunks,
)
from longread.benchmarks.muld.tasks.evidence import (
    F1_THRESHOLD,
    locate_evidence,
)
from longread.benchmarks.muld.tasks.inputs import (
    split_input,
    to_instance,
)
from longread.benchmarks.muld.tasks.mentions import (
    NO_MENTION_NOTE,
    find_mentions,
    mention_chunks,
    name_forms,
)
from longread.benchmarks.muld.tasks.retrieval import (
    retrieve,
    top_indices,
)
from longread.benchmarks.muld.tasks.sections import (
    by_sections,
    find_sections,
    first_tokens,
    skip_kind,
)
from longread.benchmarks.muld.tasks.style import (
    paragraphs_of,
)
from longread.benchmarks.muld.tasks.subtitle_chunks import (
    align_lines,
    chunk_selection,
    join_translations,
    line_chunks,
)

__all__ = [
    "ABBREVIATIONS",
    "F1_THRESHOLD",
    "NO_MENTION_NOTE",
    "Selection",
    "align_lines",
    "by_sections",
    "chunk_selection",
    "find_mentions",
    "find_sections",
    "first_tokens",
    "join_translations",
    "line_chunks",
    "locate_evidence",
    "mention_chunks",
    "name_forms",
    "paragraphs_of",
    "retrieve",
    "skip_kind",
    "split_input",
    "to_instance",
    "token_chunks",
    "top_indices",
]
