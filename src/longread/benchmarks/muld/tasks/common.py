"""What the six MuLD tasks share: reading the data (bad lines reported, the run goes on), the
document-length axis, and the rows' common fields.

Besides its chunking baseline every task has the ``whole`` strategy
(``-o strategy=whole``): the whole document, cut by the backend to the model's
window from the side the task declares (``whole_cut``), the question or
instruction never cut; every row records the strategy, the side and the model
tokens cut (``document_tokens_cut``). A 32K model then reads 32K tokens of it.

x-axis: the document's length in tokens of ``length_tokenizer`` (GPT-2 BPE by
default, the tokenizer of the builders' ≥ 10,000 filter), bucketed at
``length_edges`` — accuracy against how long the document is, the length curve
of this benchmark. Every row records the model's ``prediction`` and the
``references``, so the metrics can be recomputed from ``samples.jsonl`` alone.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import field_validator

from longread.benchmarks.muld.exported import INSTANCES_PATH, load_exported_records, record_row
from longread.benchmarks.muld.names import LENGTH_TOKENIZER, full_name
from longread.benchmarks.muld.records import MuldRecord, RecordProblem, read_records
from longread.benchmarks.muld.tasks.inputs import MuldInstance, to_instance
from longread.errors import BadInputError
from longread.evaluation.exported import is_export
from longread.evaluation.task import Sample, SampleRow, TaskSettings, XAxis
from longread.models.requests import DocumentPrompt
from longread.text.tokenizers import NamedTokenizer, load_tokenizer

DEFAULT_LENGTH_EDGES = (10_000, 15_000, 20_000, 30_000, 50_000, 100_000)


class MuldSettings(TaskSettings):
    length_tokenizer: str = LENGTH_TOKENIZER
    """Tokenizer that measures document length for the x-axis (not the model's)."""
    length_edges: tuple[int, ...] = DEFAULT_LENGTH_EDGES
    """Bucket edges of the length axis, in ``length_tokenizer`` tokens."""
    strategy: Literal["chunks", "whole"] = "chunks"
    """``chunks``: the task's chunking baseline; ``whole``: the whole document cut to the model's window
    from the side the task declares, the question never cut (tokens cut recorded per row)."""

    @field_validator("length_edges")
    @classmethod
    def _increasing(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or any(b <= a for a, b in itertools.pairwise(value)) or value[0] < 1:
            raise ValueError("length_edges must be positive and increasing, e.g. 10000,20000,50000")
        return value


class MuldRow(SampleRow):
    id: str
    task: str
    line: int
    """Line of the data file the sample came from."""
    doc_tokens: int
    """Document length in ``length_tokenizer`` tokens."""
    length_bucket: str
    prediction: Any
    references: list[str]
    strategy: str = "chunks"
    cut_side: str | None = None
    """``whole``: the side the document was cut from (left: its start dropped; right: its end; middle)."""
    document_tokens_cut: int | None = None
    """``whole``: model tokens of the document cut to fit the window (0: it all fitted)."""


def length_bucket(tokens: int, edges: Sequence[int]) -> str:
    """``0–10K``, ``10–15K`` … ``100K+`` (labels sort by their first number in reports)."""
    lower = 0
    for edge in edges:
        if tokens < edge:
            return f"{_k(lower)}–{_k(edge)}K"
        lower = edge
    return f"{_k(lower)}K+"


def _k(tokens: int) -> str:
    value = tokens / 1000
    return f"{value:g}"


@functools.cache
def length_tokenizer(name: str) -> NamedTokenizer:
    """The tokenizer of the length axis and of the baselines' chunking, loaded once per process."""
    return load_tokenizer(name)


class MuldTaskBase:
    """Loading, samples and notes shared by the MuLD tasks; subclasses set ``muld_task`` and the rest."""

    muld_task: ClassVar[str]
    whole_cut: ClassVar[Literal["left", "right", "middle"]] = "right"
    """The side ``strategy=whole`` cuts a document from when it outgrows the window."""
    whole_cut_reason: ClassVar[str] = "the start of the document is kept (its end is cut)"
    x_axis: ClassVar[XAxis] = XAxis("length_bucket", "document length (GPT-2 tokens)", "category")

    def __init__(self, settings: MuldSettings) -> None:
        self._base_settings = settings
        self._problems: list[RecordProblem] = []
        self._files: list[str] = []
        self._split_rules: dict[str, int] = {}
        self._doc_tokens: dict[str, int] = {}
        self._records: dict[str, dict[str, Any]] | None = None

    # -- data ----------------------------------------------------------------------------

    def load(self, data: Path) -> list[MuldInstance]:
        """Every readable record of ``data``: a file, a directory of ``*.jsonl``/``*.jsonl.bz2``, or a
        ``longread export muld/TASK --to hf`` folder (its records as they were read)."""
        instances: list[MuldInstance] = []
        seen: dict[str, str] = {}
        self._files = [str(path) for path in data_paths(Path(data))]
        for path, line, record, where in raw_records(Path(data), full_name(self.muld_task)):
            parsed = (
                record
                if isinstance(record, RecordProblem)
                else to_instance(self.muld_task, record, path, line)
            )
            if isinstance(parsed, RecordProblem):
                self._problems.append(parsed)
                continue
            if where is not None:
                parsed = dataclasses.replace(parsed, source=where)
            place = where or f"{path}:{line}"
            if parsed.id in seen:
                self._problems.append(
                    RecordProblem(
                        parsed.source,
                        line,
                        f"id {parsed.id!r} already used at {seen[parsed.id]}",
                        "ids are unique",
                    )
                )
                continue
            seen[parsed.id] = place
            self._split_rules[parsed.split_rule] = self._split_rules.get(parsed.split_rule, 0) + 1
            instances.append(parsed)
            if self._records is not None and not isinstance(record, RecordProblem):
                self._records[parsed.id] = record_row(parsed.id, str(path), line, record)
        return instances

    def load_with_records(self, data: Path) -> tuple[list[MuldInstance], list[dict[str, Any]]]:
        """:meth:`load`, and each instance's record as it was read (the hf export's ``longread_instances``
        rows, so that ``longread eval TASK --data DIR`` reads the same instances back), in one read."""
        self._records = {}
        try:
            instances = self.load(data)
            return instances, [self._records[instance.id] for instance in instances]
        finally:
            self._records = None

    def input_problems(self) -> list[str]:
        return [str(problem) for problem in self._problems]

    def doc_tokens(self, instance: MuldInstance) -> int:
        cached = self._doc_tokens.get(instance.id)
        if cached is None:
            cached = length_tokenizer(self._base_settings.length_tokenizer).count(instance.document)
            self._doc_tokens[instance.id] = cached
        return cached

    def control_document(self, instance: MuldInstance) -> tuple[str, str, str]:
        """(book or film, instance, document): what a context control perturbs, and who lends tokens."""
        return instance.group or instance.id, instance.id, instance.document

    def samples(self, instance: MuldInstance) -> list[Sample[MuldInstance]]:
        return [
            Sample(
                key=instance.id,
                instance_id=instance.id,
                instance=instance,
                x=length_bucket(self.doc_tokens(instance), self._base_settings.length_edges),
                group=instance.group,
            )
        ]

    def common_fields(self, sample: Sample[MuldInstance]) -> dict[str, Any]:
        instance = sample.instance
        tokens = self.doc_tokens(instance)
        return {
            "key": sample.key,
            "id": instance.id,
            "task": full_name(self.muld_task),
            "line": instance.line,
            "doc_tokens": tokens,
            "length_bucket": length_bucket(tokens, self._base_settings.length_edges),
            "references": list(instance.references),
        }

    @property
    def whole(self) -> bool:
        return self._base_settings.strategy == "whole"

    def whole_prompt(self, instance: MuldInstance, instruction: str, preamble: str = "") -> DocumentPrompt:
        """The whole document, cut only by the model's window, from ``whole_cut``; the instruction never."""
        return DocumentPrompt(instance.document, instruction, preamble=preamble, cut=self.whole_cut)

    def whole_fields(self, original: int | None, kept: int | None) -> dict[str, Any]:
        """Row fields of the ``whole`` strategy: the side and the tokens cut (none for ``chunks``)."""
        if not self.whole:
            return {}
        if original is None or kept is None:
            raise TypeError(f"{self.muld_task}: the backend did not say how much of the document it kept")
        return {"strategy": "whole", "cut_side": self.whole_cut, "document_tokens_cut": original - kept}

    def chance(self, rows: Sequence[Any]) -> float | None:
        return None

    def common_notes(self) -> dict[str, str]:
        notes = {
            "data_files": ", ".join(self._files),
            "length_axis": f"document length in {self._base_settings.length_tokenizer} tokens, bucket edges "
            f"{', '.join(map(str, self._base_settings.length_edges))}",
            "input_problems": f"{len(self._problems)} line(s) could not be read and were left out"
            + (f" (first: {self._problems[0]})" if self._problems else ""),
        }
        if self.whole:
            notes["strategy"] = (
                f"whole: the whole document, cut to the model's window from the {self.whole_cut} "
                f"({self.whole_cut_reason}); the question/instruction never cut; tokens cut per row"
            )
        if self._split_rules:
            notes["question_split"] = "question told from document by: " + ", ".join(
                f"{rule} {count}" for rule, count in sorted(self._split_rules.items())
            )
        return notes


def data_paths(data: Path) -> list[Path]:
    """What ``data`` names: an hf export folder, or the MuLD files of a file or folder."""
    return [data] if is_export(data) else _data_files(data)


def raw_records(data: Path, task: str) -> Iterator[tuple[Path, int, MuldRecord | RecordProblem, str | None]]:
    """(file, line, the record or its problem, the export row it came from or None) in data order: the
    lines of a MuLD file or folder, or the rows of a ``longread export TASK --to hf`` folder."""
    if is_export(data):
        for number, (source, line, record) in enumerate(load_exported_records(data, task), start=1):
            yield source, line, record, f"{data / INSTANCES_PATH} (row {number}, from {source})"
        return
    for path in _data_files(data):
        table = read_records(path)
        for problem in table.problems:
            yield path, problem.line, problem, None
        for line, record in table.records:
            yield path, line, record, None


def _data_files(data: Path) -> list[Path]:
    if data.is_dir():
        files = sorted(
            path
            for path in data.iterdir()
            if path.name.endswith((".jsonl", ".jsonl.bz2", ".json.bz2", ".json"))
        )
        files = [path for path in files if not path.name.endswith(".report.json")]
        if not files:
            raise BadInputError(data, "holds no .jsonl / .jsonl.bz2 files", "pass a MuLD data file or folder")
        return files
    if not data.exists():
        raise BadInputError(
            data, "not found", "pass a MuLD .jsonl(.bz2) file built by `longread build muld/…`"
        )
    return [data]
