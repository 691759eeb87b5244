"""The fields of a model description (a backend's ``describe()``) that say what a model's files are, and
those that say how a user pointed at them: one list for run identity and for comparing two runs' models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONTENT_HASHES = (
    "weights_fingerprint",
    "weights_sha256",
    "model_sha256",
    "feature_fingerprint",
    "encoder_fingerprint",
)
"""Fields that fingerprint a model's files by content: equal where both hold one, or not the same model."""
POINTERS = ("weights", "spec", "name")
"""How a user pointed at a model's files: the folder they were loaded from (a cache under the user's home),
the spec (``gguf:FILE``, ``smollm2``) and the name taken from it (a file's name)."""
WHOLE_FILE_KINDS = ("smollm2", "gemma3", "gguf")
"""Spec kinds read from one GGUF file that holds the weights, the configuration and the tokenizer, so that
its fingerprint is all of the model. An ``hf:`` folder's fingerprint covers its weight files only (its
``config.json`` and tokenizer are read from the folder too), and other kinds name paths of their own
(a checkpoint, a trained classifier's file)."""


def fingerprinted_whole(model: Mapping[str, Any]) -> bool:
    """Is the model one file fingerprinted by content, so that :data:`POINTERS` are addresses?"""
    kind = str(model.get("spec") or "").partition(":")[0]
    return kind in WHOLE_FILE_KINDS and any(model.get(key) for key in CONTENT_HASHES)
