"""The fields of a model description (a backend's ``describe()``) that say what a model's files are, and
those that say how a user pointed at them: one list for run identity and for comparing two runs' models."""

from __future__ import annotations

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
the spec (``hf:FOLDER``, ``gguf:FILE``, ``smollm2``) and the name taken from it (a folder's or a file's
name). Where the files are fingerprinted by content the fingerprint names them, and these are addresses;
without one they are the only name the files have."""
