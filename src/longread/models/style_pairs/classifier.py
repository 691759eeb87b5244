"""The trained same-author classifier: logistic regression on pair features, stored as JSON (never pickle).

Scoring a pair of paragraph vectors ``x_a``, ``x_b`` (raw features):

1. ``z = (x − feature_mean) / feature_scale`` (statistics of the training paragraphs);
2. ``p = pair_features(z_a, z_b)`` (|z_a − z_b| per feature, then cos(z_a, z_b));
3. ``q = (p − pair_mean) / pair_scale``;
4. ``P(same author) = 1 / (1 + exp(−(coef · q + intercept)))``.

The file holds every number of that rule (as JSON floats, which round-trip
exactly), the feature kind and settings, the decision threshold picked in
training and a training summary. A file that cannot be used raises
:class:`~longread.errors.BadInputError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from longread.errors import BadInputError
from longread.files import atomic_write_text
from longread.models.style_pairs.scoring import pair_features, standardise

MODEL_FORMAT = "longread-style-pairs"
MODEL_VERSION = 1
FEATURE_KINDS = ("stylometric", "minilm")
_HINT = (
    "train one with: longread train style-pairs --data FILE --features stylometric|minilm --out MODEL.json"
)


@dataclass(frozen=True, eq=False)
class StylePairModel:
    features: str
    """``stylometric`` or ``minilm``."""
    feature_settings: dict[str, Any]
    feature_mean: np.ndarray
    feature_scale: np.ndarray
    pair_mean: np.ndarray
    pair_scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float
    training: dict[str, Any] = field(default_factory=dict)

    def pair_probabilities(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """P(same author) of row pairs (``a[i]``, ``b[i]``) of raw paragraph vectors."""
        za = standardise(a, self.feature_mean, self.feature_scale)
        zb = standardise(b, self.feature_mean, self.feature_scale)
        q = standardise(pair_features(za, zb), self.pair_mean, self.pair_scale)
        logits = q @ self.coef + self.intercept
        result: np.ndarray = 1.0 / (1.0 + np.exp(-logits))
        return result

    def same_author(self, vectors: np.ndarray) -> np.ndarray:
        """P(same author) of each adjacent pair of a document's paragraph vectors."""
        if len(vectors) < 2:
            return np.zeros(0, dtype=np.float64)
        return self.pair_probabilities(vectors[:-1], vectors[1:])

    def as_json(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "features": self.features,
            "feature_settings": self.feature_settings,
            "classifier": "logistic-regression",
            "threshold": self.threshold,
            "intercept": self.intercept,
            "coef": self.coef.tolist(),
            "feature_mean": self.feature_mean.tolist(),
            "feature_scale": self.feature_scale.tolist(),
            "pair_mean": self.pair_mean.tolist(),
            "pair_scale": self.pair_scale.tolist(),
            "training": self.training,
        }

    def dumps(self) -> str:
        return json.dumps(self.as_json(), ensure_ascii=False, sort_keys=True, indent=1) + "\n"

    def save(self, path: str | Path) -> str:
        """Write the model atomically; returns the file's sha256."""
        text = self.dumps()
        atomic_write_text(path, text)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _vector(raw: dict[str, Any], key: str, length: int | None) -> np.ndarray:
    value = raw.get(key)
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        raise ValueError(f"{key!r} must be a list of numbers")
    array = np.asarray(value, dtype=np.float64)
    if length is not None and len(array) != length:
        raise ValueError(f"{key!r} has {len(array)} numbers, expected {length}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{key!r} holds a non-finite number")
    return array


def _number(raw: dict[str, Any], key: str) -> float:
    value = raw.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"{key!r} must be a finite number")
    return float(value)


def model_from_json(raw: object) -> StylePairModel:
    """The model a parsed JSON file describes; ValueError says what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("the file is not a JSON object")
    if raw.get("format") != MODEL_FORMAT:
        raise ValueError(f"'format' is {raw.get('format')!r}, not {MODEL_FORMAT!r}")
    if raw.get("version") != MODEL_VERSION:
        raise ValueError(f"model version {raw.get('version')!r}; this longread reads version {MODEL_VERSION}")
    features = raw.get("features")
    if features not in FEATURE_KINDS:
        raise ValueError(f"'features' is {features!r}; expected one of {', '.join(FEATURE_KINDS)}")
    settings = raw.get("feature_settings", {})
    if not isinstance(settings, dict):
        raise ValueError("'feature_settings' must be an object")
    feature_mean = _vector(raw, "feature_mean", None)
    width = len(feature_mean)
    coef = _vector(raw, "coef", width + 1)
    training = raw.get("training", {})
    return StylePairModel(
        features=str(features),
        feature_settings=dict(settings),
        feature_mean=feature_mean,
        feature_scale=_vector(raw, "feature_scale", width),
        pair_mean=_vector(raw, "pair_mean", width + 1),
        pair_scale=_vector(raw, "pair_scale", width + 1),
        coef=coef,
        intercept=_number(raw, "intercept"),
        threshold=_number(raw, "threshold"),
        training=dict(training) if isinstance(training, dict) else {},
    )


def load_model(path: str | Path) -> tuple[StylePairModel, str]:
    """(model, sha256 of the file's bytes); BadInputError naming the file when it cannot be used."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInputError(path, "no such style-pair model file", _HINT) from None
    except OSError as exc:
        raise BadInputError(path, f"cannot read the style-pair model: {exc.strerror}", _HINT) from None
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(
            path, f"not a style-pair model (not UTF-8 JSON: {exc})", "the file is corrupt; " + _HINT
        ) from None
    try:
        model = model_from_json(raw)
    except ValueError as exc:
        raise BadInputError(path, f"not a usable style-pair model: {exc}", _HINT) from None
    return model, hashlib.sha256(data).hexdigest()
