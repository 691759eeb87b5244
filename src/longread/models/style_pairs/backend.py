"""The style-change baseline as a longread backend (capability ``pair_scores``).

Specs (``--model``): ``style:stylometric`` / ``style:minilm`` — untrained: the
document-standardised cosine of adjacent paragraphs' feature vectors mapped to
[0, 1] (:func:`~longread.models.style_pairs.scoring.untrained_same_author`) with
the default thresholds below; ``style:PATH`` — a model trained by
``longread train style-pairs`` (logistic regression on pair features, its
threshold learned). Per document the backend returns P(same author) of every
adjacent paragraph pair; the task predicts a change where it is below
``threshold`` (``describe()["threshold"]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.errors import BadInputError
from longread.models.errors import ModelSpecError
from longread.models.requests import Progress
from longread.models.style_pairs.classifier import StylePairModel, load_model
from longread.models.style_pairs.featurizer import Featurizer
from longread.models.style_pairs.requests import STYLE_PAIR_CAPABILITIES, PairScoreRequest, PairScoreResult
from longread.models.style_pairs.scoring import untrained_same_author

UNTRAINED_THRESHOLDS: dict[str, float] = {"stylometric": 0.5, "minilm": 0.5}
"""Untrained default: a change where the standardised cosine is below 0 (P < 0.5).

A centred cosine below 0 means the two paragraphs lean away from the document's
average in opposite directions; see the README for the F1 this gives on
Gutenberg style-change documents (a trained model picks its own threshold).
"""
SPEC_HELP = (
    "style:stylometric | style:minilm | style:MODEL.json — style-change pair scorer: untrained "
    "document-standardised cosine, or a classifier trained by 'longread train style-pairs'"
)


class StylePairBackend:
    capabilities = STYLE_PAIR_CAPABILITIES
    preferred_batch = 8
    """Documents per call the runner may send; each is scored on its own."""

    def __init__(
        self,
        featurizer: Featurizer,
        model: StylePairModel | None = None,
        *,
        spec: str = "style:stylometric",
        model_path: Path | None = None,
        model_sha256: str | None = None,
    ) -> None:
        if model is not None:
            if model.features != featurizer.kind:
                raise ValueError(f"model uses {model.features} features, featurizer is {featurizer.kind}")
            if len(model.feature_mean) != featurizer.width:
                raise BadInputError(
                    model_path,
                    f"the model expects {len(model.feature_mean)} features per paragraph, "
                    f"{featurizer.kind} features with {featurizer.settings} give {featurizer.width}",
                    "retrain the model with this longread",
                )
        self.name = spec
        self.spec = spec
        self.featurizer = featurizer
        self.model = model
        self.model_path = model_path
        self.model_sha256 = model_sha256
        self.threshold = model.threshold if model is not None else UNTRAINED_THRESHOLDS[featurizer.kind]

    def count_tokens(self, text: str) -> int:
        """Whitespace words (the unit this backend reports as progress)."""
        return len(text.split())

    def pair_scores(
        self, requests: Sequence[PairScoreRequest], progress: Progress | None = None
    ) -> list[PairScoreResult]:
        return [self._score_one(request, progress) for request in requests]

    def _score_one(self, request: PairScoreRequest, progress: Progress | None) -> PairScoreResult:
        paragraphs = request.paragraphs
        words = sum(len(p.split()) for p in paragraphs)
        if len(paragraphs) < 2:
            scores: Sequence[float] = ()
        else:
            vectors = self.featurizer.vectors(paragraphs)
            probabilities = (
                self.model.same_author(vectors) if self.model is not None else untrained_same_author(vectors)
            )
            scores = probabilities.tolist()
        if progress is not None:
            progress(words)
        return PairScoreResult(
            same_author=tuple(scores), n_paragraphs=len(paragraphs), n_words=words, threshold=self.threshold
        )

    def describe(self) -> dict[str, str]:
        info: dict[str, str] = {
            "name": self.name,
            "spec": self.spec,
            "kind": "style-pairs",
            "features": self.featurizer.kind,
            "feature_settings": ",".join(f"{k}={v}" for k, v in sorted(self.featurizer.settings.items())),
            "feature_fingerprint": self.featurizer.fingerprint,
            "feature_description": self.featurizer.describe(),
            "threshold": repr(self.threshold),
            "decision": "a new author starts where P(same author) < threshold",
        }
        if self.model is None:
            info["classifier"] = "untrained: (1 + cosine of document-standardised vectors) / 2"
            info["threshold_source"] = "default"
        else:
            training: dict[str, Any] = self.model.training
            info["classifier"] = "logistic-regression on |a - b| and cos(a, b) of standardised vectors"
            info["model_file"] = str(self.model_path)
            info["model_sha256"] = str(self.model_sha256)
            info["threshold_source"] = (
                f"learned: {training.get('threshold_rule', '?')} on {training.get('threshold_from', '?')}"
            )
            info["trained_on"] = str(training.get("train_file", "?"))
            info["train_seed"] = str(training.get("seed", "?"))
        return info


def load_style_backend(
    what: str, *, spec: str | None = None, cache_dir: Path | None = None
) -> StylePairBackend:
    """``what`` = ``stylometric``, ``minilm`` (untrained) or the path of a trained model JSON."""
    spec = spec or f"style:{what}"
    if what in UNTRAINED_THRESHOLDS:
        return StylePairBackend(Featurizer(what, cache_dir=cache_dir), spec=spec)
    path = Path(what).expanduser()
    model, sha = load_model(path)
    try:
        featurizer = Featurizer(model.features, model.feature_settings, cache_dir=cache_dir)
    except (TypeError, ValueError) as exc:
        raise BadInputError(path, f"not a usable style-pair model: {exc}", "retrain it") from None
    return StylePairBackend(featurizer, model, spec=spec, model_path=path, model_sha256=sha)


def style_backend(spec: str, rest: str, options: object) -> StylePairBackend:
    """Registry factory: ``--model style:stylometric``, ``style:minilm`` or ``style:MODEL.json``.

    ``options`` (device, batch size …) do not apply: the features run on the CPU.
    MiniLM vectors are cached on disk beside SuffixLM's segment vectors.
    """
    if not rest:
        raise ModelSpecError(
            f"model spec {spec!r}: say which features or model: style:stylometric, style:minilm "
            "or style:MODEL.json"
        )
    cache_dir = None
    if rest == "minilm":
        from longread.models.suffixlm.encoder import default_cache_dir

        cache_dir = default_cache_dir()
    elif rest not in UNTRAINED_THRESHOLDS and Path(rest).expanduser().is_file():
        model, _ = load_model(Path(rest).expanduser())
        if model.features == "minilm":
            from longread.models.suffixlm.encoder import default_cache_dir

            cache_dir = default_cache_dir()
    return load_style_backend(rest, spec=spec, cache_dir=cache_dir)
