"""Hierarchical summaries: scene summaries merged level by level up to one book summary
(CreateHiararchicalSummariesTrueOnly.py, AddDistortedHierarchicalSummaries.py).

Level 0 are the scene summaries (scenes without one are left out, and the level's entries say which
scene they are), each with a false summary drawn by a seeded RNG from the scene's distortions (the
authors' ``np.random.choice``). Each next level writes the previous one as ``"Summary {i}: {s}\n"``
lines, groups them into meta-chunks of at most ``meta_chunk_chars`` characters (``rechunk_book``) and
summarises each with ``SummarizeSummariesDetailedEvents2``, until one summary remains. Every merged
summary gets a distorted version from ``CreateFalseHierSummary`` (None when it fails a check). A merge
whose answer is missing, empty or a refusal is kept with an empty text and the reason in
``merge_failure``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from longread.benchmarks.narrativexl.schema import HierarchicalSummary, SceneSummaries
from longread.benchmarks.narrativexl.summaries import prompts
from longread.benchmarks.narrativexl.summaries.cache import GenerationCache, cached_generate
from longread.benchmarks.narrativexl.summaries.checks import check_text, merge_failure
from longread.benchmarks.narrativexl.summaries.settings import SummarySettings
from longread.models.requests import Backend, GenerateRequest

MAX_LEVELS = 24
"""The authors merge for levels 1..24 at most."""


def hierarchical_summaries(
    book_id: str,
    summaries: Sequence[SceneSummaries],
    backend: Backend,
    cache: GenerationCache,
    settings: SummarySettings,
) -> list[HierarchicalSummary]:
    """Level 0 (scene summaries) up to one book summary, each with a distorted version where one exists."""
    rng = random.Random(f"{settings.hierarchical_seed}:{book_id}")
    level0 = [s for s in summaries if s.summary is not None]
    out = [
        HierarchicalSummary(
            level=0,
            index=k,
            true=s.summary or "",
            false=rng.choice(s.distorted) if s.distorted else None,
            first_scene=s.index,
            last_scene=s.index,
        )
        for k, s in enumerate(level0)
    ]
    current = list(out)
    merged: list[HierarchicalSummary] = []
    for level in range(1, MAX_LEVELS + 1):
        if len(current) <= 1:
            break
        next_level = _merge_level(book_id, level, current, backend, cache, settings)
        merged.extend(next_level)
        current = next_level
    out.extend(_distort_merged(book_id, merged, backend, cache, settings))
    return out


def _merge_level(
    book_id: str,
    level: int,
    current: list[HierarchicalSummary],
    backend: Backend,
    cache: GenerationCache,
    settings: SummarySettings,
) -> list[HierarchicalSummary]:
    """The summaries of ``level``: the level below merged, as many per meta-chunk as fit."""
    tag = settings.answer_tag
    groups = prompts.rechunk(prompts.numbered_summaries([c.true for c in current]), settings.meta_chunk_chars)
    if len(groups) == len(current):
        # no two summaries fit one meta-chunk: merge pairs so the level shrinks
        groups = [list(range(k, min(k + 2, len(current)))) for k in range(0, len(current), 2)]
    pieces = prompts.numbered_summaries([c.true for c in current])
    results = cached_generate(
        backend,
        cache,
        [
            GenerateRequest(
                prompts.summarize_summaries("".join(pieces[k] for k in group), tag=tag),
                max_tokens=settings.hierarchical_max_tokens,
            )
            for group in groups
        ],
        [f"{book_id} hierarchical level {level} summary {n}" for n in range(len(groups))],
    )
    next_level = []
    for n, (group, result) in enumerate(zip(groups, results, strict=True)):
        answer, read_problem = prompts.read_answer(result.text, tag=tag)
        failure = merge_failure(answer, read_problem, settings)
        covered = [current[k] for k in group]
        next_level.append(
            HierarchicalSummary(
                level=level,
                index=n,
                true=answer if answer and failure is None else "",
                first_scene=covered[0].first_scene,
                last_scene=covered[-1].last_scene,
                merge_failure=failure,
            )
        )
    return next_level


def _distort_merged(
    book_id: str,
    merged: Sequence[HierarchicalSummary],
    backend: Backend,
    cache: GenerationCache,
    settings: SummarySettings,
) -> list[HierarchicalSummary]:
    """Every merged summary with its distorted version (None when it fails a check)."""
    tag = settings.answer_tag
    # a failed merge has no text to distort: it asks the model nothing and keeps no false version
    to_distort = [item for item in merged if item.true]
    falses = cached_generate(
        backend,
        cache,
        [
            GenerateRequest(
                prompts.create_false_hier_summary(item.true, tag=tag),
                max_tokens=settings.hierarchical_max_tokens,
            )
            for item in to_distort
        ],
        [f"{book_id} hierarchical level {item.level} false {item.index}" for item in to_distort],
    )
    false_of: dict[tuple[int, int], str | None] = {}
    for item, result in zip(to_distort, falses, strict=True):
        answer, read_problem = prompts.read_answer(result.text, tag=tag)
        problems = check_text(
            answer, source="", reference=item.true, settings=settings, read_problem=read_problem
        )
        false_of[(item.level, item.index)] = None if any(p.fatal for p in problems) else answer
    return [item.model_copy(update={"false": false_of.get((item.level, item.index))}) for item in merged]
