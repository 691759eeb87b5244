"""Errors of the model layer: each names the model or path, what is wrong and what to do."""

from __future__ import annotations

from pathlib import Path

from longread.errors import LongreadError


class ModelSpecError(LongreadError):
    """A model spec string that names no known backend (``smollm2``, ``hf:PATH`` …)."""


class ModelLoadError(LongreadError):
    """A model or tokenizer that cannot be loaded from where the spec points."""

    def __init__(self, path: str | Path, problem: str, hint: str) -> None:
        self.path = str(path)
        self.problem = problem
        self.hint = hint
        super().__init__(f"{self.path}: {problem} — {hint}")


class ContextTooLongError(LongreadError):
    """A request that does not fit into the model's window while truncation is switched off."""


class BadRequestError(LongreadError):
    """A request that cannot be scored as given (e.g. a continuation with no tokens of its own)."""


class FatalBackendError(LongreadError):
    """The backend cannot answer anything any more (a served model's server is gone after every retry).

    The runner stops at once with this message — every finished sample is already stored — instead of
    recording the same failure for every sample left; ``--resume`` after the cause is fixed finishes the run.
    """
