"""SuffixLM, ChapterBreak's segment-level model, as a longread ranker: segments, encoder, model, training."""

from longread.models.suffixlm.config import VARIANTS, ModelConfig, TrainConfig

__all__ = ["VARIANTS", "ModelConfig", "TrainConfig"]
