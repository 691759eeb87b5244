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

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.exportable.request import ExportRequest


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
    request: ExportRequest, default_lengths: tuple[int, ...], *, task_lengths: bool = False
) -> ResolvedSettings:
    """The lengths and settings ``request.task`` is exported with: the flags first, then ``-o``, then
    ``default_lengths``. With ``task_lengths`` the task has ``prefix_lengths`` and ``suffix_tokens``
    settings of its own (ChapterBreak): a flag must agree with them, and they come before the default."""
    given = dict(request.settings)
    chosen: Any = make_task(request.task, given).settings
    if not task_lengths:
        return ResolvedSettings(request.prefix_lengths or default_lengths, None, chosen, given)
    flags = request.prefix_lengths
    lengths = tuple(sorted(set(flags))) if flags is not None else None
    _agree("prefix_lengths", lengths, chosen.prefix_lengths, given)
    _agree("suffix_tokens", request.suffix_tokens, chosen.suffix_tokens, given)
    return ResolvedSettings(
        lengths or chosen.prefix_lengths or default_lengths,
        request.suffix_tokens if request.suffix_tokens is not None else chosen.suffix_tokens,
        chosen,
        given,
    )
