"""NarrativeXL's summaries, generated as the authors made them: scene summaries and their distortions
(:mod:`.scenes`), the checks of one answer (:mod:`.checks`), hierarchical summaries (:mod:`.hierarchy`),
the authors' prompts (:mod:`.prompts`), the settings (:mod:`.settings`) and the generation cache.
"""

from __future__ import annotations

from longread.benchmarks.narrativexl.summaries.checks import (
    Problem,
    check_text,
    copied_share,
    merge_failure,
    repetition,
)
from longread.benchmarks.narrativexl.summaries.hierarchy import MAX_LEVELS, hierarchical_summaries
from longread.benchmarks.narrativexl.summaries.scenes import (
    NO_FAKE_SUMMARIES,
    SceneProgress,
    summarise_scenes,
)
from longread.benchmarks.narrativexl.summaries.settings import SummarySettings, distortion_count

__all__ = [
    "MAX_LEVELS",
    "NO_FAKE_SUMMARIES",
    "Problem",
    "SceneProgress",
    "SummarySettings",
    "check_text",
    "copied_share",
    "distortion_count",
    "hierarchical_summaries",
    "merge_failure",
    "repetition",
    "summarise_scenes",
]
