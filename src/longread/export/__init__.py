"""Built benchmarks for the tools people already run: Hugging Face ``datasets``, lm-eval, inspect_ai.

``export_task`` reads longread's data (ChapterBreak: ``chapterbreak.py``; NarrativeXL summaries:
``narrativexl_summaries.py``; both give ``items.TaskItems``) and writes one of three folders:

- ``hf``: parquet per prefix-length config and a dataset card (``hf.py``, ``card.py``);
- ``lm-eval``: a ``multiple_choice`` task per prefix length and a group (``lm_eval_task.py``);
- ``inspect``: an ``@task`` file over the exported JSONL (``inspect_task.py``).

Every export cuts the texts itself, in a stated tokenizer, at points whose text
re-tokenises to exactly the budget (``cuts.py``), so a harness that reads text
scores the same tokens longread scores. Layer: above ``benchmarks`` (it reads
their instances), beside ``report``, below ``cli``.
"""

from longread.export.chapterbreak import as_instance, export_chapterbreak
from longread.export.hf import read_hf_items
from longread.export.run import TARGETS, TASKS, ExportOptions, ExportReport, export_task

__all__ = [
    "TARGETS",
    "TASKS",
    "ExportOptions",
    "ExportReport",
    "as_instance",
    "export_chapterbreak",
    "export_task",
    "read_hf_items",
]
