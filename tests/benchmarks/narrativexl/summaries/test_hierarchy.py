"""A failed hierarchical merge is flagged in the schema, on a real SmolLM2 merge."""

from __future__ import annotations

import json
from pathlib import Path

from longread.benchmarks.narrativexl.schema import HierarchicalSummary
from longread.benchmarks.narrativexl.summaries import hierarchical_summaries, summarise_scenes
from longread.benchmarks.narrativexl.summaries.cache import GenerationCache
from longread.benchmarks.narrativexl.summaries.prompts import BEGIN_ANSWER_TAG
from tests.benchmarks.narrativexl.summaries.test_summarise import (
    SETTINGS,
    _counting_smollm2,
    _scenes,
    needs_book,
)


@needs_book
def test_a_merge_without_an_answer_says_why_in_merge_failure(tmp_path: Path) -> None:
    """With the authors' BEGIN ANSWER tag rule SmolLM2-135M writes no tag: the merge has no answer."""
    backend = _counting_smollm2()
    cache = GenerationCache(tmp_path)
    summaries = summarise_scenes(_scenes(), backend, cache, SETTINGS)
    assert sum(s.summary is not None for s in summaries) == 2, [s.comment for s in summaries]
    tagged = SETTINGS.model_copy(update={"answer_tag": True, "meta_chunk_chars": 100_000})
    hierarchy = hierarchical_summaries("pg1342", summaries, backend, cache, tagged)
    assert [h.level for h in hierarchy] == [0, 0, 1]
    assert all(h.merge_failure is None for h in hierarchy[:2])
    top = hierarchy[-1]
    assert top.merge_failure == f"no {BEGIN_ANSWER_TAG} tag"
    assert top.true == "" and top.false is None and (top.first_scene, top.last_scene) == (0, 1)
    # The field survives JSON, and a record written before it existed still loads (as "not recorded").
    assert HierarchicalSummary.model_validate_json(top.model_dump_json()) == top
    old = {k: v for k, v in hierarchy[0].model_dump(mode="json").items() if k != "merge_failure"}
    assert HierarchicalSummary.model_validate_json(json.dumps(old)).merge_failure is None
