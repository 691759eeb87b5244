"""Scene summaries and their distortions, generated and checked as the authors made them
(Dataloaders.create_chunk_summaries / create_false_book_chunk_summaries):

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

Checks that only warn (the text is kept; :mod:`.checks`): a summary shorter or longer than the
``summary_*_ratio`` bounds relative to its source scene, a distortion outside
``distortion_*_ratio`` of its true summary ("same length"), an answer cut at
``max_tokens``, an answer that loops on its own words (a sentence of at least
``repeated_sentence_words`` words said twice, or more than ``repetition_threshold``
of its word ``repetition_ngram``-grams repeating earlier ones). The status is Fail
(no summary), Warning (any warning) or OK; the comment lists the reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from longread.benchmarks.narrativexl.schema import Scene, SceneStatus, SceneSummaries
from longread.benchmarks.narrativexl.summaries import prompts
from longread.benchmarks.narrativexl.summaries.cache import GenerationCache, cached_generate
from longread.benchmarks.narrativexl.summaries.checks import _describe, check_text
from longread.benchmarks.narrativexl.summaries.settings import SummarySettings, distortion_count
from longread.models.requests import Backend, GenerateRequest, GenerateResult

NO_FAKE_SUMMARIES = "Failed to create any fake summaries."
"""The authors' comment for a scene left without distortions."""


SceneProgress = Callable[[int], None]
"""Told how many generations were just made (cache hits are not counted)."""


def summarise_scenes(
    scenes: Sequence[Scene],
    backend: Backend,
    cache: GenerationCache,
    settings: SummarySettings,
    progress: SceneProgress | None = None,
    *,
    show_progress: bool = False,
) -> list[SceneSummaries]:
    """A true summary, distortions and a status for every scene (see :mod:`.summarise`).

    ``progress(n)`` is told of generations as they are made; ``show_progress`` draws a
    :class:`longread.progress.Progress` bar of them on stderr instead.
    """
    if show_progress and progress is None:
        return _with_bar(scenes, backend, cache, settings)
    calls = _Calls(backend, cache, settings, progress)
    drafts, retry_of = _first_summaries(scenes, calls)
    _retry_summaries(scenes, retry_of, drafts, calls)
    _distort_summaries(scenes, drafts, calls)
    return _scene_summaries(scenes, drafts)


@dataclass(frozen=True)
class _Calls:
    """Where the generations of one ``summarise_scenes`` go: the backend through the cache."""

    backend: Backend
    cache: GenerationCache
    settings: SummarySettings
    progress: SceneProgress | None

    def answers(self, requests: Sequence[GenerateRequest], labels: Sequence[str]) -> list[GenerateResult]:
        return cached_generate(self.backend, self.cache, requests, labels, on_generated=self.progress)


@dataclass
class _Drafts:
    """Each scene's state between the stages: its summary (None: none kept), the notes of its comment,
    whether anything warned, the distortions kept."""

    summaries: list[str | None]
    notes: list[list[str]]
    warned: list[bool]
    distorted: list[list[str]]


def _first_summaries(scenes: Sequence[Scene], calls: _Calls) -> tuple[_Drafts, list[int]]:
    """Every scene summarised once; the drafts, and the scenes whose summary failed (to retry)."""
    settings, tag = calls.settings, calls.settings.answer_tag
    first = calls.answers(
        [
            GenerateRequest(
                prompts.summarize_chunk(s.overlapped, tag=tag), max_tokens=settings.summary_max_tokens
            )
            for s in scenes
        ],
        [f"summary scene {s.index}" for s in scenes],
    )
    drafts = _Drafts([], [], [], [[] for _ in scenes])
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
            drafts.summaries.append(None)
            drafts.notes.append([f"first summary failed ({_describe(problems)})"])
            drafts.warned.append(True)
            retry_of.append(i)
        else:
            drafts.summaries.append(answer)
            drafts.notes.append([f"summary: {_describe(problems)}"] if problems else [])
            drafts.warned.append(bool(problems))
    return drafts, retry_of


def _retry_summaries(scenes: Sequence[Scene], retry_of: list[int], drafts: _Drafts, calls: _Calls) -> None:
    """The failed scenes summarised again with the retry prompt; a good answer is kept."""
    settings = calls.settings
    retries = calls.answers(
        [
            GenerateRequest(
                prompts.summarize_chunk_retry(scenes[i].overlapped), max_tokens=settings.summary_max_tokens
            )
            for i in retry_of
        ],
        [f"summary retry scene {scenes[i].index}" for i in retry_of],
    )
    for i, result in zip(retry_of, retries, strict=True):
        answer, read_problem = prompts.read_answer(result.text, tag=True)
        if answer is None and read_problem.startswith("no "):
            # The authors keep a retry's answer without the tag, with a warning.
            answer, read_problem = prompts.read_answer(result.text, tag=False)
            drafts.notes[i].append(f"retry answer has no {prompts.BEGIN_ANSWER_TAG} tag")
        problems = check_text(
            answer,
            source=scenes[i].overlapped,
            settings=settings,
            stopped_by=result.stopped_by,
            read_problem=read_problem,
        )
        if any(p.fatal for p in problems):
            drafts.notes[i].append(f"retry failed ({_describe(problems)})")
        else:
            drafts.summaries[i] = answer
            drafts.notes[i].append(f"retry kept{': ' + _describe(problems) if problems else ''}")


def _distort_summaries(scenes: Sequence[Scene], drafts: _Drafts, calls: _Calls) -> None:
    """Distortions of every kept summary (scene ``i`` gets ``distortion_count``); the good ones are kept."""
    settings, tag, summaries = calls.settings, calls.settings.answer_tag, drafts.summaries
    slots = [
        (i, j)
        for i, (scene, summary) in enumerate(zip(scenes, summaries, strict=True))
        if summary is not None
        for j in range(distortion_count(scene.index, settings))
    ]
    distortion_results = calls.answers(
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
    )
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
            drafts.notes[i].append(f"distortion {j} dropped ({_describe(problems)})")
            drafts.warned[i] = True
            continue
        assert answer is not None
        drafts.distorted[i].append(answer)
        if problems:
            drafts.notes[i].append(f"distortion {j}: {_describe(problems)}")
            drafts.warned[i] = True


def _scene_summaries(scenes: Sequence[Scene], drafts: _Drafts) -> list[SceneSummaries]:
    """Each scene's summaries with its status: Fail (no summary), Warning (any warning) or OK."""
    out = []
    for i, scene in enumerate(scenes):
        status: SceneStatus
        notes, distorted = drafts.notes[i], drafts.distorted[i]
        if drafts.summaries[i] is None:
            status = "Fail"
        else:
            if not distorted:
                notes.append(NO_FAKE_SUMMARIES)
            status = "Warning" if drafts.warned[i] or not distorted else "OK"
        out.append(
            SceneSummaries(
                index=scene.index,
                summary=drafts.summaries[i],
                distorted=tuple(distorted),
                status=status,
                comment="; ".join(notes) if status != "OK" else "",
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
