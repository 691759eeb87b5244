"""The task settings an export is cut with: ``-o KEY=VALUE`` as ``longread eval`` takes them, and the flags.

An export forms each item as the task forms its request, so the settings that
change a request change the export: ChapterBreak's ``prefix_lengths`` and
``suffix_tokens``; NarrativeXL summaries' ``prompt``, ``options_only``,
``max_scene_tokens`` and ``scoring`` (which of acc / acc_mean is longread's
prediction). The same ``-o`` a user gave ``longread eval`` can be pasted here.
A setting given both as a flag and as ``-o`` with different values is an error,
never a silent choice. Settings that do not change the items (ChapterBreak's
``truncate``) are accepted and recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from longread.benchmarks.chapterbreak.task import DEFAULT_PREFIX_LENGTHS
from longread.errors import LongreadError
from longread.evaluation.registry import make_task

SUMMARY_PREFIX_LENGTHS = (256, 1024, 4096)
"""Default scene budgets of the NarrativeXL summaries export (tokens of scene + prompt)."""
READALONG_PREFIX_LENGTHS = (1024, 4096, 16384)
"""Default prefix lengths of the NarrativeXL read-along export (tokens of the book read so far + prompt)."""


@dataclass(frozen=True)
class ResolvedSettings:
    prefix_lengths: tuple[int, ...]
    suffix_tokens: int | None
    task_settings: Any
    """The task's validated settings object (``ChapterBreakSettings`` or ``SummariesSettings``)."""
    given: dict[str, str]
    """The ``-o`` settings as given (recorded in the manifest and the card)."""


def _agree(name: str, flag: object, setting: object, given: Mapping[str, str]) -> None:
    if flag is not None and name in given and flag != setting:
        raise LongreadError(
            f"{name} is given twice with different values: the flag says {flag!r}, -o {name}={given[name]} "
            "says otherwise — give it once"
        )


def resolve_settings(
    task: str,
    prefix_lengths: tuple[int, ...] | None,
    suffix_tokens: int | None,
    settings: tuple[tuple[str, str], ...],
) -> ResolvedSettings:
    """The lengths and settings ``task`` is exported with (flags first, then ``-o``, then the defaults)."""
    given = dict(settings)
    chosen: Any = make_task(task, given).settings
    if task == "chapterbreak":
        lengths = tuple(sorted(set(prefix_lengths))) if prefix_lengths is not None else None
        _agree("prefix_lengths", lengths, chosen.prefix_lengths, given)
        _agree("suffix_tokens", suffix_tokens, chosen.suffix_tokens, given)
        return ResolvedSettings(
            lengths or chosen.prefix_lengths or DEFAULT_PREFIX_LENGTHS,
            suffix_tokens if suffix_tokens is not None else chosen.suffix_tokens,
            chosen,
            given,
        )
    if task == "narrativexl":
        return ResolvedSettings(prefix_lengths or READALONG_PREFIX_LENGTHS, None, chosen, given)
    return ResolvedSettings(prefix_lengths or SUMMARY_PREFIX_LENGTHS, None, chosen, given)
