"""Scene summaries, distorted summaries and hierarchical summaries, generated as the authors made them.

Scenes (Dataloaders.create_chunk_summaries / create_false_book_chunk_summaries):

1. every scene's OVERLAPPED text gets the authors' ``SummarizeChunk`` prompt —
   all scenes in one batched, cached call;
2. an answer that fails a check (no answer, empty, refusal, copied from the
   scene) is retried once with the authors' ``SummarizeChunkRetry`` prompt; a
   retry that passes is kept with status Warning (the authors' rule), one that
   fails too leaves the scene without a summary: status Fail;
3. scene ``i`` gets ``max(1, distortions_for_scene_0 - i)`` distortions with the
   authors' ``CreateFalseSummary`` prompt: the first greedy, the others sampled
   (``distortion_temperature``, seed = ``distortion_seed + j``), since greedy
   decoding would give k copies of one text; a distortion that fails a check
   (empty, refusal, copied from the scene, (nearly) equal to the true summary)
   is dropped and named in the comment; none left → Warning "Failed to create any
   fake summaries." as the authors write.

Checks that only warn (the text is kept): a summary shorter or longer than the
``summary_*_ratio`` bounds relative to its source scene, a distortion outside
``distortion_*_ratio`` of its true summary ("same length"), an answer cut at
``max_tokens``, an answer that loops on its own words (a sentence of at least
``repeated_sentence_words`` words said twice, or more than ``repetition_threshold``
of its word ``repetition_ngram``-grams repeating earlier ones). The status is Fail
(no summary), Warning (any warning) or OK; the comment lists the reasons.

Hierarchical (CreateHiararchicalSummariesTrueOnly.py, AddDistortedHierarchicalSummaries.py):
level 0 are the scene summaries (scenes without one are left out, and the
level's entries say which scene they are), each with a false summary drawn by a
seeded RNG from the scene's distortions (the authors' ``np.random.choice``).
Each next level writes the previous one as ``"Summary {i}: {s}\n"`` lines,
groups them into meta-chunks of at most ``meta_chunk_chars`` characters
(``rechunk_book``) and summarises each with ``SummarizeSummariesDetailedEvents2``,
until one summary remains. Every merged summary gets a distorted version from
``CreateFalseHierSummary`` (None when it fails a check). A merge whose answer is missing,
empty or a refusal is kept with an empty text and the reason in ``merge_failure``.

The work is split by rule: :mod:`.summary_settings` (the settings), :mod:`.summary_checks`
(the checks of one answer), :mod:`.summary_scenes` (scene summaries and distortions) and
:mod:`.summary_hierarchy` (hierarchical summaries); this module re-exports their names.
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
