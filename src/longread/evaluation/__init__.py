"""One evaluation loop for every benchmark: tasks, the runner, the task registry, the results shape."""

from longread.evaluation.dispatch import CapabilityError, capabilities_of, choose_request_kind
from longread.evaluation.registry import describe_tasks, make_task, register_task, task_names
from longread.evaluation.results import summarise_rows
from longread.evaluation.rows import RowFormatError, read_typed_rows
from longread.evaluation.runner import RunOptions, RunOutcome, run_task
from longread.evaluation.selection import stratified_sample
from longread.evaluation.task import Metric, Sample, SampleRow, Task, TaskSettings, XAxis

__all__ = [
    "CapabilityError",
    "Metric",
    "RowFormatError",
    "RunOptions",
    "RunOutcome",
    "Sample",
    "SampleRow",
    "Task",
    "TaskSettings",
    "XAxis",
    "capabilities_of",
    "choose_request_kind",
    "describe_tasks",
    "make_task",
    "read_typed_rows",
    "register_task",
    "run_task",
    "stratified_sample",
    "summarise_rows",
    "task_names",
]
