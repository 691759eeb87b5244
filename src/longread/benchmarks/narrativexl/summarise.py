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
``max_tokens``. The status is Fail (no summary), Warning (any warning) or OK;
the comment lists the reasons.

Hierarchical (CreateHiararchicalSummariesTrueOnly.py, AddDistortedHierarchicalSummaries.py):
level 0 are the scene summaries (scenes without one are left out, and the
level's entries say which scene they are), each with a false summary drawn by a
seeded RNG from the scene's distortions (the authors' ``np.random.choice``).
Each next level writes the previous one as ``"Summary {i}: {s}\\n"`` lines,
groups them into meta-chunks of at most ``meta_chunk_chars`` characters
(``rechunk_book``) and summarises each with ``SummarizeSummariesDetailedEvents2``,
until one summary remains. Every merged summary gets a distorted version from
``CreateFalseHierSummary`` (None when it fails a check).
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from longread.benchmarks.narrativexl import prompts
from longread.benchmarks.narrativexl.generation_cache import GenerationCache, cached_generate
from longread.benchmarks.narrativexl.schema import HierarchicalSummary, Scene, SceneStatus, SceneSummaries
from longread.models.requests import STOPPED_BY_MAX_TOKENS, Backend, GenerateRequest, GenerateResult

NO_FAKE_SUMMARIES = "Failed to create any fake summaries."
"""The authors' comment for a scene left without distortions."""
MAX_LEVELS = 24
"""The authors merge for levels 1..24 at most."""


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


# ---------------------------------------------------------------- checks


@dataclass(frozen=True, slots=True)
class Problem:
    message: str
    fatal: bool
    """True: the text is not used (empty, refusal, copy, same as the true summary); False: a warning."""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def copied_share(answer: str, source: str, n: int) -> float:
    """Share of the answer's word ``n``-grams that occur in ``source`` (0 for an answer of fewer words)."""
    words = _words(answer)
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    source_words = _words(source)
    known = {tuple(source_words[i : i + n]) for i in range(len(source_words) - n + 1)}
    return sum(g in known for g in grams) / len(grams)


def _is_refusal(answer: str, settings: SummarySettings) -> str | None:
    opening = answer.lstrip(" \"'“‘*#-\n")[:120]
    for pattern in settings.refusal_patterns:
        if re.match(pattern, opening, flags=re.IGNORECASE):
            return pattern
    return None


def check_text(
    answer: str | None,
    *,
    source: str,
    settings: SummarySettings,
    reference: str | None = None,
    stopped_by: str | None = None,
    read_problem: str = "",
) -> list[Problem]:
    """Problems of one generated answer.

    ``source`` is the scene (copy check; for a summary also the length reference);
    ``reference`` is the true summary when ``answer`` is a distortion (length reference and
    the same-as-true check). Fatal: no answer (``read_problem``), empty, refusal, copied,
    same as the true summary. Warnings: length outside the ratio bounds, cut at max_tokens.
    """
    if answer is None:
        return [Problem(read_problem or "no answer", True)]
    if not answer.strip():
        return [Problem("empty answer", True)]
    problems = []
    refusal = _is_refusal(answer, settings)
    if refusal is not None:
        problems.append(Problem(f"refusal ({refusal!r})", True))
    share = copied_share(answer, source, settings.copy_ngram)
    if share > settings.copy_threshold:
        problems.append(
            Problem(f"copied from the scene ({share:.0%} of its {settings.copy_ngram}-word runs)", True)
        )
    if reference is None:
        ratio = len(answer) / max(1, len(source))
        low, high, what = settings.summary_min_ratio, settings.summary_max_ratio, "the scene"
    else:
        similarity = difflib.SequenceMatcher(None, _words(answer), _words(reference), autojunk=False).ratio()
        if similarity >= settings.same_as_true_threshold:
            problems.append(Problem(f"same as the true summary (similarity {similarity:.2f})", True))
        ratio = len(answer) / max(1, len(reference))
        low, high, what = settings.distortion_min_ratio, settings.distortion_max_ratio, "the true summary"
    if ratio < low:
        problems.append(Problem(f"too short ({ratio:.2f} of {what})", False))
    elif ratio > high:
        problems.append(Problem(f"too long ({ratio:.2f} of {what})", False))
    if stopped_by == STOPPED_BY_MAX_TOKENS:
        problems.append(Problem("cut at max_tokens", False))
    return problems


def _describe(problems: Sequence[Problem]) -> str:
    return ", ".join(p.message for p in problems)


# ---------------------------------------------------------------- scenes

SceneProgress = Callable[[int], None]
"""Told how many generations were just made (cache hits are not counted)."""


def _answers(
    backend: Backend,
    cache: GenerationCache,
    requests: Sequence[GenerateRequest],
    labels: Sequence[str],
    progress: SceneProgress | None,
) -> list[GenerateResult]:
    return cached_generate(backend, cache, requests, labels, on_generated=progress)


def summarise_scenes(
    scenes: Sequence[Scene],
    backend: Backend,
    cache: GenerationCache,
    settings: SummarySettings,
    progress: SceneProgress | None = None,
    *,
    show_progress: bool = False,
) -> list[SceneSummaries]:
    """A true summary, distortions and a status for every scene (see the module docstring).

    ``progress(n)`` is told of generations as they are made; ``show_progress`` draws a
    :class:`longread.progress.Progress` bar of them on stderr instead.
    """
    if show_progress and progress is None:
        return _with_bar(scenes, backend, cache, settings)
    tag = settings.answer_tag
    first = _answers(
        backend,
        cache,
        [
            GenerateRequest(
                prompts.summarize_chunk(s.overlapped, tag=tag), max_tokens=settings.summary_max_tokens
            )
            for s in scenes
        ],
        [f"summary scene {s.index}" for s in scenes],
        progress,
    )
    summaries: list[str | None] = []
    notes: list[list[str]] = []
    warned: list[bool] = []
    retry_of: list[int] = []
    for i, (scene, result) in enumerate(zip(scenes, first, strict=True)):
        answer, read_problem = prompts.read_answer(result.text, tag=tag)
        problems = check_text(
            answer,
            source=scene.overlapped,
            settings=settings,
            stopped_by=result.stopped_by,
            read_problem=read_problem,
        )
        if any(p.fatal for p in problems):
            summaries.append(None)
            notes.append([f"first summary failed ({_describe(problems)})"])
            warned.append(True)
            retry_of.append(i)
        else:
            summaries.append(answer)
            notes.append([f"summary: {_describe(problems)}"] if problems else [])
            warned.append(bool(problems))
    retries = _answers(
        backend,
        cache,
        [
            GenerateRequest(
                prompts.summarize_chunk_retry(scenes[i].overlapped), max_tokens=settings.summary_max_tokens
            )
            for i in retry_of
        ],
        [f"summary retry scene {scenes[i].index}" for i in retry_of],
        progress,
    )
    for i, result in zip(retry_of, retries, strict=True):
        answer, read_problem = prompts.read_answer(result.text, tag=True)
        if answer is None and read_problem.startswith("no "):
            # The authors keep a retry's answer without the tag, with a warning.
            answer, read_problem = prompts.read_answer(result.text, tag=False)
            notes[i].append(f"retry answer has no {prompts.BEGIN_ANSWER_TAG} tag")
        problems = check_text(
            answer,
            source=scenes[i].overlapped,
            settings=settings,
            stopped_by=result.stopped_by,
            read_problem=read_problem,
        )
        if any(p.fatal for p in problems):
            notes[i].append(f"retry failed ({_describe(problems)})")
        else:
            summaries[i] = answer
            notes[i].append(f"retry kept{': ' + _describe(problems) if problems else ''}")

    slots = [
        (i, j)
        for i, (scene, summary) in enumerate(zip(scenes, summaries, strict=True))
        if summary is not None
        for j in range(distortion_count(scene.index, settings))
    ]
    distortion_results = _answers(
        backend,
        cache,
        [
            GenerateRequest(
                prompts.create_false_summary(summaries[i] or "", tag=tag),
                max_tokens=settings.distortion_max_tokens,
                temperature=0.0 if j == 0 else settings.distortion_temperature,
                seed=settings.distortion_seed + j,
            )
            for i, j in slots
        ],
        [f"distortion {j} scene {scenes[i].index}" for i, j in slots],
        progress,
    )
    distorted: list[list[str]] = [[] for _ in scenes]
    for (i, j), result in zip(slots, distortion_results, strict=True):
        answer, read_problem = prompts.read_answer(result.text, tag=tag)
        problems = check_text(
            answer,
            source=scenes[i].overlapped,
            reference=summaries[i],
            settings=settings,
            stopped_by=result.stopped_by,
            read_problem=read_problem,
        )
        if any(p.fatal for p in problems):
            notes[i].append(f"distortion {j} dropped ({_describe(problems)})")
            warned[i] = True
            continue
        assert answer is not None
        distorted[i].append(answer)
        if problems:
            notes[i].append(f"distortion {j}: {_describe(problems)}")
            warned[i] = True

    out = []
    for i, scene in enumerate(scenes):
        status: SceneStatus
        if summaries[i] is None:
            status = "Fail"
        else:
            if not distorted[i]:
                notes[i].append(NO_FAKE_SUMMARIES)
            status = "Warning" if warned[i] or not distorted[i] else "OK"
        out.append(
            SceneSummaries(
                index=scene.index,
                summary=summaries[i],
                distorted=tuple(distorted[i]),
                status=status,
                comment="; ".join(notes[i]) if status != "OK" else "",
            )
        )
    return out


def _with_bar(
    scenes: Sequence[Scene], backend: Backend, cache: GenerationCache, settings: SummarySettings
) -> list[SceneSummaries]:
    from longread.progress import Progress

    planned = len(scenes) + sum(distortion_count(s.index, settings) for s in scenes)
    with Progress(total=planned, desc="summaries", unit="gen") as bar:
        return summarise_scenes(scenes, backend, cache, settings, lambda n: bar.update(items=n))


# ---------------------------------------------------------------- hierarchical


def hierarchical_summaries(
    book_id: str,
    summaries: Sequence[SceneSummaries],
    backend: Backend,
    cache: GenerationCache,
    settings: SummarySettings,
) -> list[HierarchicalSummary]:
    """Level 0 (scene summaries) up to one book summary, each with a distorted version where one exists."""
    rng = random.Random(f"{settings.hierarchical_seed}:{book_id}")
    tag = settings.answer_tag
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
        groups = prompts.rechunk(
            prompts.numbered_summaries([c.true for c in current]), settings.meta_chunk_chars
        )
        if len(groups) == len(
            current
        ):  # no two summaries fit one meta-chunk: merge pairs so the level shrinks
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
            answer, _ = prompts.read_answer(result.text, tag=tag)
            covered = [current[k] for k in group]
            next_level.append(
                HierarchicalSummary(
                    level=level,
                    index=n,
                    true=answer if answer else "",
                    first_scene=covered[0].first_scene,
                    last_scene=covered[-1].last_scene,
                )
            )
        merged.extend(next_level)
        current = next_level
    falses = cached_generate(
        backend,
        cache,
        [
            GenerateRequest(
                prompts.create_false_hier_summary(item.true, tag=tag),
                max_tokens=settings.hierarchical_max_tokens,
            )
            for item in merged
        ],
        [f"{book_id} hierarchical level {item.level} false {item.index}" for item in merged],
    )
    for item, result in zip(merged, falses, strict=True):
        answer, read_problem = prompts.read_answer(result.text, tag=tag)
        problems = check_text(
            answer, source="", reference=item.true, settings=settings, read_problem=read_problem
        )
        usable = answer if item.true and not any(p.fatal for p in problems) else None
        out.append(item.model_copy(update={"false": usable}))
    return out
