"""Built benchmarks for the tools people already run: Hugging Face ``datasets``, lm-eval, inspect_ai.

``export_task`` asks the task's declared export (its ``exporter``, :mod:`longread.exportable`) for its
items, cut as longread cuts them, and writes one of three folders:

- ``hf``: parquet per prefix-length config and a dataset card (``hf.py``, ``card.py``);
- ``lm-eval``: a task per prefix length and a group (``lm_eval_task.py``);
- ``inspect``: an ``@task`` file over the exported JSONL (``inspect_task.py``, ``inspect_generate.py``).

No module here knows a task by name: a new benchmark declares its export beside its task. Layer: above
``benchmarks`` (the writers run what they declare), beside ``report``, below ``cli``.
"""

from longread.export.hf import read_hf_items
from longread.export.run import TARGETS, ExportOptions, ExportReport, export_task

__all__ = [
    "TARGETS",
    "ExportOptions",
    "ExportReport",
    "export_task",
    "read_hf_items",
]
