"""MuLD builders: each of the six tasks' records written from its raw sources, with the
≥ 10,000-token filter and a build report beside the data.
"""

from __future__ import annotations

from longread.benchmarks.muld.builders.archetype import (
    build_archetype,
    find_mentions,
    normalise_label,
)
from longread.benchmarks.muld.builders.hotpotqa import (
    build_hotpotqa,
)
from longread.benchmarks.muld.builders.narrativeqa import (
    build_narrativeqa,
    split_path,
)
from longread.benchmarks.muld.builders.narrativeqa_story import (
    find_story,
)
from longread.benchmarks.muld.builders.opensubtitles import (
    build_opensubtitles,
)
from longread.benchmarks.muld.builders.opensubtitles_xml import (
    read_subtitles,
)
from longread.benchmarks.muld.builders.report import (
    BuildReport,
    LengthFilter,
    report_path,
)
from longread.benchmarks.muld.builders.style_change import (
    SPLITS,
    build_style_change,
    parse_documents,
    split_paths,
    style_change_report_path,
)
from longread.benchmarks.muld.builders.style_change_compose import (
    Supply,
    compose_many,
)
from longread.benchmarks.muld.builders.style_change_works import (
    paragraph_kind,
    plain_typography,
    read_works,
)
from longread.benchmarks.muld.builders.vlsp import (
    build_vlsp,
    reference_in_input,
)

__all__ = [
    "SPLITS",
    "BuildReport",
    "LengthFilter",
    "Supply",
    "build_archetype",
    "build_hotpotqa",
    "build_narrativeqa",
    "build_opensubtitles",
    "build_style_change",
    "build_vlsp",
    "compose_many",
    "find_mentions",
    "find_story",
    "normalise_label",
    "paragraph_kind",
    "parse_documents",
    "plain_typography",
    "read_subtitles",
    "read_works",
    "reference_in_input",
    "report_path",
    "split_path",
    "split_paths",
    "style_change_report_path",
]
