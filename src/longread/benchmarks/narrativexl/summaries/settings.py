"""How scene and hierarchical summaries are generated and checked: :class:`SummarySettings`.

Every knob of :mod:`.scenes` and :mod:`.hierarchy` lives here (token budgets,
distortion counts and sampling, the ratio bounds and thresholds of the checks, the
meta-chunk size and seed of the hierarchy); the settings are recorded in the build settings.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SummarySettings(BaseModel):
    """How summaries are generated and checked (recorded in the build settings)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary_max_tokens: int = Field(default=192, ge=1)
    distortion_max_tokens: int = Field(default=192, ge=1)
    hierarchical_max_tokens: int = Field(default=384, ge=1)
    distortions_for_scene_0: int = Field(
        default=5, ge=1, description="scene i gets max(1, this - i) distortions (false_summaries_for_chunk_0)"
    )
    distortion_temperature: float = Field(default=0.8, gt=0, description="for distortions 2..k")
    distortion_seed: int = 0
    summary_min_ratio: float = Field(default=0.02, description="summary chars / source chars below: warning")
    summary_max_ratio: float = Field(default=0.9, description="summary chars / source chars above: warning")
    distortion_min_ratio: float = Field(
        default=0.5, description="distortion / true summary chars below: warning"
    )
    distortion_max_ratio: float = Field(
        default=2.0, description="distortion / true summary chars above: warning"
    )
    copy_ngram: int = Field(default=6, ge=2, description="word n-grams for the copy check")
    copy_threshold: float = Field(
        default=0.5,
        description="share of the answer's word n-grams found in the source above which it is a copy",
    )
    repetition_ngram: int = Field(default=4, ge=2, description="word n-grams for the repetition check")
    repetition_threshold: float = Field(
        default=0.3,
        description="share of the answer's word n-grams that repeat an earlier one above which it loops",
    )
    repeated_sentence_words: int = Field(
        default=5, ge=1, description="a sentence of at least this many words said twice: a loop"
    )
    same_as_true_threshold: float = Field(
        default=0.9,
        description="word-sequence similarity to the true summary at or above which a distortion is one",
    )
    refusal_patterns: tuple[str, ...] = (
        r"I'?m sorry",
        r"I am sorry",
        r"As an AI",
        r"I cannot",
        r"I can'?t",
        r"I am unable",
        r"I'?m unable",
    )
    answer_tag: bool = Field(
        default=False,
        description="the authors' BEGIN ANSWER tag rule (SmolLM2-135M follows it on 0 of 20 scenes)",
    )
    meta_chunk_chars: int = Field(default=10_000, ge=1, description="rechunk_book's max_length")
    hierarchical_seed: int = Field(default=42, description="picks each scene's level-0 false summary")


def distortion_count(scene_index: int, settings: SummarySettings) -> int:
    """The authors' ``max(1, false_summaries_for_chunk_0 - i)``."""
    return max(1, settings.distortions_for_scene_0 - scene_index)
