"""What a benchmark hands ``longread export``: its items cut as longread cuts them, declared beside its task.

A task names its export maker in its class (``exporter = "module:function"``, imported when first used,
as tasks are registered); the maker takes an :class:`~.request.ExportRequest` (the data, the tokenizer
the cuts count in, the lengths and settings) and gives an :class:`~.request.Exported`: the
:class:`~.items.TaskItems` per prefix length and the files they were read from. ``longread.export``
then writes them for a harness (hf, lm-eval, inspect) and knows no task by name.

- ``cuts.py``: texts cut so that the cut TEXT re-tokenises to exactly longread's ids;
- ``items.py``: the items, what was cut, the columns every multiple-choice item carries;
- ``tokenizer.py``: the tokenizer an export counts in (GPT-2, a model's own);
- ``settings.py``: the lengths and ``-o`` settings an export is cut with;
- ``request.py``: the request a maker takes, what it gives, and finding a task's maker.

Layer: below the benchmarks (they import it), above ``evaluation`` (it asks the task registry).
"""

from longread.exportable.cuts import Cut, cut_context, cut_continuation
from longread.exportable.items import CutCounts, TaskItems, count, cut_fields
from longread.exportable.request import Exported, ExportRequest, exportable_tasks, exporter_of

__all__ = [
    "Cut",
    "CutCounts",
    "ExportRequest",
    "Exported",
    "TaskItems",
    "count",
    "cut_context",
    "cut_continuation",
    "cut_fields",
    "exportable_tasks",
    "exporter_of",
]
