"""The request a task's export maker takes, what it gives back, and finding a task's maker by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from longread.errors import LongreadError
from longread.evaluation.registry import task_class, task_names
from longread.exportable.items import TaskItems
from longread.text.tokenizers import NamedTokenizer


@dataclass(frozen=True)
class ExportRequest:
    """What ``longread export TASK`` was asked for."""

    task: str
    data: Path
    files: list[Path]
    """The data file, or the ``*.jsonl`` files of a data folder (a maker that reads more names them)."""
    tokenizer: NamedTokenizer
    """The tokenizer the cuts count in, loaded."""
    tokenizer_name: str
    """Its name as given (``gpt2``, ``smollm2``, ``gemma3``, ``hf:FOLDER``): card and YAML state it."""
    prefix_lengths: tuple[int, ...] | None = None
    """None: ``-o prefix_lengths`` or the task's default lengths."""
    suffix_tokens: int | None = None
    max_length: int | None = None
    """The evaluated model's window (tasks that fit a prompt to it: MuLD)."""
    settings: tuple[tuple[str, str], ...] = ()
    """The task's settings (``-o KEY=VALUE``) as ``longread eval`` takes them."""
    show_progress: bool = False


@dataclass
class Exported:
    items: TaskItems
    files: list[Path]
    """The files the items were read from (the card names each by name and sha256)."""


Exporter = Callable[[ExportRequest], Exported]


def exporter_of(task: str) -> Exporter:
    """The export maker ``task`` declares (its class's ``exporter``); an error naming the exportable
    tasks when it declares none."""
    target = getattr(task_class(task), "exporter", None) if task in task_names() else None
    if not target:
        raise LongreadError(
            f"cannot export task {task!r}: this version exports {', '.join(exportable_tasks())}"
        )
    module, _, attribute = str(target).partition(":")
    maker: Exporter = getattr(importlib.import_module(module), attribute)
    return maker


def exportable_tasks() -> list[str]:
    """The registered tasks that declare an export."""
    return [name for name in task_names() if getattr(task_class(name), "exporter", None)]
