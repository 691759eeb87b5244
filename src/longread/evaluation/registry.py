"""Task names → task classes, imported lazily so listing tasks loads no benchmark code.

A benchmark registers itself here by module path (``register_task``); the
runner and CLI find it by name. Task settings come in as ``KEY=VALUE`` text
(from ``--option``) and are validated by the task's settings model, so a typo
is named at once with the settings the task has.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from longread.errors import LongreadError
from longread.evaluation.task import Task, TaskInfo, TaskSettings


class UnknownTaskError(LongreadError):
    pass


class TaskOptionError(LongreadError):
    pass


@dataclass(frozen=True)
class _Entry:
    module: str
    attribute: str


_TASKS: dict[str, _Entry] = {}


def register_task(name: str, target: str) -> None:
    """Register ``name`` → ``"package.module:ClassName"`` (imported when first used)."""
    module, _, attribute = target.partition(":")
    if not module or not attribute:
        raise ValueError(f"register_task({name!r}): give 'module.path:ClassName', got {target!r}")
    _TASKS[name] = _Entry(module, attribute)


def task_names() -> list[str]:
    return sorted(_TASKS)


def task_class(name: str) -> Any:
    entry = _TASKS.get(name)
    if entry is None:
        raise UnknownTaskError(
            f"unknown task {name!r}; known tasks: {', '.join(task_names())} (see `longread tasks`)"
        )
    return getattr(importlib.import_module(entry.module), entry.attribute)


def settings_model(name: str) -> type[TaskSettings]:
    model = task_class(name).settings_model
    assert isinstance(model, type) and issubclass(model, TaskSettings)
    return model


def make_task(name: str, options: Mapping[str, Any] | None = None) -> Task[Any, Any]:
    """The task ``name`` with settings from ``options`` (values may be text, as typed on a command line)."""
    model = settings_model(name)
    values = dict(options or {})
    unknown = sorted(set(values) - set(model.model_fields))
    if unknown:
        known = ", ".join(f"{key} (default {field.default!r})" for key, field in model.model_fields.items())
        raise TaskOptionError(
            f"task {name!r} has no setting {', '.join(map(repr, unknown))}; its settings: {known}"
        )
    try:
        settings = model.model_validate({key: _parse(model, key, value) for key, value in values.items()})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise TaskOptionError(f"task {name!r}, setting {where!r}: {problem['msg']}") from None
    task: Task[Any, Any] = task_class(name)(settings)
    return task


def describe_tasks() -> list[TaskInfo]:
    infos = []
    for name in task_names():
        cls = task_class(name)
        defaults = {key: field.default for key, field in cls.settings_model.model_fields.items()}
        infos.append(
            TaskInfo(
                name=name,
                description=cls.description,
                request_kinds=tuple(cls.request_kinds),
                x_axis=cls.x_axis.label,
                settings=defaults,
            )
        )
    return infos


def _parse(model: type[TaskSettings], key: str, value: Any) -> Any:
    """Command-line text for list settings may be comma-separated (``256,512``)."""
    if not isinstance(value, str):
        return value
    annotation = str(model.model_fields[key].annotation)
    if annotation.startswith(("tuple", "list")):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


register_task("chapterbreak", "longread.benchmarks.chapterbreak.task:ChapterBreakTask")
register_task("narrativexl", "longread.benchmarks.narrativexl.task:NarrativeXLTask")
register_task("narrativexl-summaries", "longread.benchmarks.narrativexl.summaries_task:SummariesTask")
register_task("muld/narrativeqa", "longread.benchmarks.muld.tasks.qa:QATask")
register_task("muld/hotpotqa", "longread.benchmarks.muld.tasks.qa:HotpotQATask")
register_task("muld/vlsp", "longread.benchmarks.muld.tasks.summarise:SummariseTask")
register_task("muld/opensubtitles", "longread.benchmarks.muld.tasks.translate:TranslateTask")
register_task("muld/character-archetype", "longread.benchmarks.muld.tasks.archetype:ArchetypeTask")
register_task("muld/style-change", "longread.benchmarks.muld.tasks.style:StyleChangeTask")
