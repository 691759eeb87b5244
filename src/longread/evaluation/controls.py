"""Context controls for every task (``longread eval --context shuffle|replace|none --keep-last K``).

A controlled run is the intact run with each request's document perturbed beyond its last K tokens
(:mod:`longread.models.requests.control` says how, in the model's own tokens, after every cut).
:class:`ControlledTask` wraps any task that says what its document is (``control_document``) and:

- keeps the intact run's sample keys and pair ids, so ``longread report INTACT CONTROLLED`` pairs them;
- never reuses a result across context budgets (each budget's perturbation is seeded by its own key);
- asks for log-likelihoods or generations only (a ranker such as SuffixLM reads segments, not tokens, and
  a read-along reads the book once: under a control a question's window is re-read from its tokens);
- ``replace`` never lends a sample tokens of its own book nor of any book a candidate of it comes from
  (a task's ``control_books(sample)``: a ChapterBreak negative's source, a NarrativeXL question's
  other-book decoy would otherwise be favoured, its scene read just before the question); the row names
  the donor;
- adds the control to the settings (so to the config hash) and its record to every row: the control, K,
  the tokens perturbed, the donor documents (``replace``) and the sha256 of the token ids read.

``intact`` is not wrapped — its rows are today's, byte for byte — except for a task that reads along
(NarrativeXL): under a control each question's window is read again from its tokens, cut from the left
(``cut-left``), so the intact run it is compared with must read the same way (:func:`reads_along`): it is
the task wrapped with the ``intact`` control (nothing perturbed, the same cut-left windows; rows say
``context_control: intact``). Paired reports refuse to compare runs read by different methods.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.evaluation.task import Sample, SampleRow, Task
from longread.models.requests import (
    GENERATE,
    LOGLIKELIHOOD,
    READ_ALONG,
    DocumentPrompt,
    GenerateRequest,
    LoglikelihoodRequest,
)
from longread.models.requests.control import (
    CONTROL_KINDS,
    ContextControl,
    ControlKind,
    ControlRecord,
    Donor,
)
from longread.models.requests.groups import RequestGroup

DONORS_PER_SAMPLE = 8
"""``replace``: the documents of other books a sample's tokens may come from (drawn by its seed)."""


class ControlError(LongreadError):
    """A context control that cannot apply: named with the reason and what to do."""


@dataclass(frozen=True)
class ControlSettings:
    kind: ControlKind = "intact"
    keep_last: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in CONTROL_KINDS:
            raise ControlError(f"unknown context control {self.kind!r}: use {', '.join(CONTROL_KINDS)}")
        if self.keep_last < 0:
            raise ControlError(f"--keep-last must be 0 or more tokens, got {self.keep_last}")

    @property
    def intact(self) -> bool:
        return self.kind == "intact"

    def hashed(self) -> dict[str, Any]:
        """What goes into the run's settings (and so its config hash)."""
        return {"context_control": self.kind, "keep_last": self.keep_last, "control_seed": self.seed}


@dataclass(frozen=True)
class _Settings:
    """The task's settings with the control beside them (what ``config.json`` and the hash see)."""

    inner: Any
    control: ControlSettings

    def model_dump(self, **options: Any) -> dict[str, Any]:
        return {**self.inner.model_dump(**options), **self.control.hashed()}


def reads_along(task: Any) -> bool:
    """Does the task read a book once with a read-along cache (whose controlled runs read cut-left)?"""
    return READ_ALONG in tuple(getattr(task, "request_kinds", ()))


class ControlledTask:
    """``task`` under a context control; everything not named here is the task's own."""

    def __init__(self, task: Task[Any, Any], control: ControlSettings) -> None:
        if control.intact and not reads_along(task):
            raise ValueError("an intact run is the task itself; wrap only a real control")
        if not callable(getattr(task, "control_document", None)):
            raise ControlError(
                f"{task.name}: its requests carry no document for a context control to perturb; run it "
                "without --context"
            )
        kinds = tuple(kind for kind in task.request_kinds if kind in (LOGLIKELIHOOD, GENERATE))
        if not kinds:
            raise ControlError(
                f"{task.name} asks only for {', '.join(task.request_kinds)}: a context control needs a "
                "language model's log-likelihoods or generations"
            )
        self._task = task
        self._control = control
        self.request_kinds = kinds
        self._documents: dict[str, tuple[str, str]] = {}
        """group (book) → (document id, text): the longest document of each group."""
        self._groups: dict[str, str] = {}
        """instance id → its group (book), which never lends it tokens; nor does any book a candidate of a
        sample comes from (the task's ``control_books(sample)``, asked per sample)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._task, name)

    @property
    def settings(self) -> _Settings:
        return _Settings(self._task.settings, self._control)

    def load(self, data: Path) -> list[Any]:
        instances = self._task.load(data)
        for instance in instances:
            group, document_id, text = self._task.control_document(instance)  # type: ignore[attr-defined]
            self._groups[document_id] = group
            kept = self._documents.get(group)
            if kept is None or len(text) > len(kept[1]):
                self._documents[group] = (document_id, text)
        if self._control.kind == "replace" and len(self._documents) < 2:
            raise ControlError(
                f"{data}: `replace` takes its tokens from another book or document of the same data, and "
                f"this data holds {len(self._documents)}; use --context shuffle or none, or give more data"
            )
        return list(instances)

    def samples(self, instance: Any) -> list[Sample[Any]]:
        return [dataclasses.replace(sample, reuse_group=None) for sample in self._task.samples(instance)]

    def request(self, sample: Sample[Any], kind: str) -> Any:
        return controlled_request(self._task.request(sample, kind), self.control_for(sample), self._task.name)

    def row(self, sample: Sample[Any], result: Any, kind: str, *, reused: bool) -> SampleRow:
        row = self._task.row(sample, result, kind, reused=reused)
        parts = getattr(result, "parts", None) or (result,)
        records: list[ControlRecord] = [
            part.control for part in parts if isinstance(getattr(part, "control", None), ControlRecord)
        ]
        if not records:
            return row  # type: ignore[no-any-return]
        fields = records[0].as_row()
        if len(records) > 1:  # a request group (subtitle chunks): the sums, every donor, one hash
            fields["tokens_perturbed"] = sum(record.tokens_perturbed for record in records)
            fields["donors"] = sorted({donor for record in records for donor in record.donors})
            joined = "".join(record.read_sha256 for record in records).encode()
            fields["read_sha256"] = hashlib.sha256(joined).hexdigest()
        controlled: SampleRow = type(row).model_validate({**row.model_dump(mode="json"), **fields})
        return controlled

    def barred(self, sample: Sample[Any]) -> set[str]:
        """The groups (books) that may not lend ``sample`` tokens: its own and its candidates' books."""
        books = getattr(self._task, "control_books", None)
        own = self._groups.get(sample.instance_id)
        return {*((own,) if own else ()), *(books(sample) if callable(books) else ())}

    def control_for(self, sample: Sample[Any]) -> ContextControl:
        donors: tuple[Donor, ...] = ()
        if self._control.kind == "replace":
            barred = self.barred(sample)
            others = [
                (group, self._documents[group]) for group in sorted(self._documents) if group not in barred
            ]
            random.Random(f"{self._control.seed}\0{sample.key}").shuffle(others)
            donors = tuple(Donor(doc_id, text) for _, (doc_id, text) in others[:DONORS_PER_SAMPLE])
        return ContextControl(
            self._control.kind, self._control.keep_last, self._control.seed, sample.key, donors
        )


def controlled_request(request: Any, control: ContextControl, task: str) -> Any:
    """``request`` with ``control`` on its document (every part of a request group)."""
    if isinstance(request, RequestGroup):
        return RequestGroup(tuple(controlled_request(part, control, task) for part in request.parts))
    if isinstance(request, LoglikelihoodRequest):
        return dataclasses.replace(request, control=control)
    if isinstance(request, GenerateRequest) and isinstance(request.prompt, DocumentPrompt):
        return dataclasses.replace(request, prompt=dataclasses.replace(request.prompt, control=control))
    raise ControlError(
        f"{task}: a {type(request).__name__} whose prompt is not a document prompt cannot take a context "
        "control (the document cannot be told from the instruction)"
    )
