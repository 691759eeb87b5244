"""NarrativeXL summaries: the checks on crafted bad outputs, and real runs of SmolLM2 on real scenes —
statuses, the generation cache (a second run asks the model nothing; a killed build redoes only the
line it was writing) and hierarchical summaries."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from longread.benchmarks.narrativexl.schema import HierarchicalSummary, Scene, SceneSummaries
from longread.benchmarks.narrativexl.summaries import (
    SummarySettings,
    check_text,
    distortion_count,
    hierarchical_summaries,
    prompts,
    summarise_scenes,
)
from longread.benchmarks.narrativexl.summaries.cache import (
    GenerationCache,
    GenerationCacheError,
    cache_key,
    cached_generate,
)
from longread.models.hf.backend import HFBackend
from longread.models.requests import GenerateRequest, GenerateResult, Progress
from tests.models_fixtures import PRIDE_AND_PREJUDICE, book_text, tuned

needs_book = pytest.mark.skipif(not PRIDE_AND_PREJUDICE.is_file(), reason=f"{PRIDE_AND_PREJUDICE} is missing")

SETTINGS = SummarySettings(
    summary_max_tokens=32, distortion_max_tokens=32, hierarchical_max_tokens=32, distortions_for_scene_0=2
)


def _counting_smollm2() -> CountingBackend:
    """SmolLM2 on 1 thread (set AFTER loading: load_backend sets its own default; the thread count is
    runtime, not part of the model fingerprint the cache keys use, but it fixes the floats' order)."""
    backend = CountingBackend(tuned("smollm2"))
    torch.set_num_threads(1)
    return backend


class CountingBackend:
    """The real backend underneath; only counts the generation requests that reach it."""

    def __init__(self, inner: HFBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.max_length = inner.max_length
        self.capabilities = inner.capabilities
        self.preferred_batch = inner.preferred_batch
        self.generated = 0

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        self.generated += len(requests)
        return self.inner.generate(requests, progress)

    def describe(self) -> dict[str, str]:
        return self.inner.describe()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def loglikelihood(self, requests, progress=None):  # type: ignore[no-untyped-def]
        raise AssertionError("summaries only generate")

    loglikelihood_rolling = loglikelihood


def _scenes() -> list[Scene]:
    """Two consecutive scenes of Pride and Prejudice's first chapter, cut at paragraph ends by hand."""
    text = book_text()
    start = text.index("It is a truth universally acknowledged")
    middle = text.find("\n\n", start + 1500)
    end = text.find("\n\n", middle + 1600)
    pieces = [text[start:middle].strip(), text[middle:end].strip()]
    return [
        Scene(index=i, text=piece, overlapped=piece, char_start=text.index(piece) - start)
        for i, piece in enumerate(pieces)
    ]


# ---------------------------------------------------------------- checks, no model


SCENE = (
    "Mr. Bennet was among the earliest of those who waited on Mr. Bingley. He had always intended to visit "
    "him, though to the last always assuring his wife that he should not go; and till the evening after the "
    "visit was paid she had no knowledge of it."
)


def _fatal(answer: str, **kwargs: str) -> list[str]:
    return [
        p.message for p in check_text(answer, source=SCENE, settings=SummarySettings(), **kwargs) if p.fatal
    ]


def test_checks_classify_bad_outputs() -> None:
    assert _fatal("") == ["empty answer"]
    assert _fatal("   \n") == ["empty answer"]
    assert any("copied from the scene" in m for m in _fatal(SCENE[:150]))
    assert any("refusal" in m for m in _fatal("I'm sorry, but I cannot summarize this excerpt."))
    assert any("refusal" in m for m in _fatal("As an AI language model, I do not read books."))
    good = "Mr. Bennet secretly visits the newcomer Bingley and surprises his wife by telling her only later."
    assert _fatal(good) == []
    same = check_text(good, source=SCENE, reference=good, settings=SummarySettings())
    assert any(p.fatal and "same as the true summary" in p.message for p in same)
    other = "Mrs. Bennet refuses to let anyone call on Bingley, and her husband stays at home all evening."
    assert not any(
        p.fatal for p in check_text(other, source=SCENE, reference=good, settings=SummarySettings())
    )
    longer = (
        other + " Later that night the two sisters walk to Meryton in the rain, meet the officers there, "
        "and come home late to find the whole house asleep and every candle out."
    )
    long = check_text(longer, source=SCENE, reference=good, settings=SummarySettings())
    assert [p.message.split(" (")[0] for p in long if not p.fatal] == ["too long"]
    short = check_text("Bennet.", source=SCENE * 10, settings=SummarySettings())
    assert [p.message.split(" (")[0] for p in short] == ["too short"]
    assert [
        p.message for p in check_text(None, source=SCENE, settings=SummarySettings(), read_problem="no tag")
    ] == ["no tag"]


def test_authors_rules_for_counts_tags_and_meta_chunks() -> None:
    assert [distortion_count(i, SummarySettings()) for i in range(7)] == [5, 4, 3, 2, 1, 1, 1]
    tagged = prompts.summarize_chunk("TEXT", tag=True)
    assert tagged.system == (
        "You are a helpful assistant that summarizes book snippets. Begin your answer with a "
        "### BEGIN ANSWER ### tag."
    )
    assert tagged.messages == (
        (
            "user",
            'Summarize the following book excerpt: "TEXT". '
            'Start your answer with a "### BEGIN ANSWER ###" tag.',
        ),
    )
    assert "BEGIN ANSWER" not in prompts.summarize_chunk("TEXT", tag=False).messages[0][1]
    assert prompts.read_answer("Sure! ### BEGIN ANSWER ### The answer. ### END ANSWER ###", tag=True) == (
        "The answer.",
        "",
    )
    assert prompts.read_answer("The answer.", tag=True)[0] is None
    assert prompts.read_answer("The answer.", tag=False) == ("The answer.", "")
    pieces = prompts.numbered_summaries(["a" * 40, "b" * 40, "c" * 40])
    assert pieces[1] == "Summary 1: " + "b" * 40 + "\n"
    assert prompts.rechunk(pieces, 110) == [[0, 1], [2]]
    assert prompts.rechunk(pieces, 10) == [[0], [1], [2]]


def test_a_broken_line_in_the_middle_of_the_cache_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "generations.jsonl").write_text('{"key": "a", "text": "x"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(GenerationCacheError, match="line 2"):
        GenerationCache(tmp_path)


# ---------------------------------------------------------------- real model


@dataclass(frozen=True)
class FirstRun:
    folder: Path
    summaries: list[SceneSummaries]
    made: int


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """One real SmolLM2 run over the two scenes (the tests copy its cache folder)."""
    folder = tmp_path_factory.mktemp("first_run")
    backend = _counting_smollm2()
    summaries = summarise_scenes(_scenes(), backend, GenerationCache(folder), SETTINGS)
    return FirstRun(folder, summaries, backend.generated)


def _copy(run: FirstRun, to: Path) -> Path:
    shutil.copytree(run.folder, to / "build")
    return to / "build"


@needs_book
def test_real_summaries_have_statuses(first_run: FirstRun) -> None:
    scenes = _scenes()
    first = first_run.summaries
    assert first_run.made >= 2 + 2 + 1  # two summaries, 2 + 1 distortions (and any retries)
    assert [s.index for s in first] == [0, 1]
    for item in first:
        assert item.status in ("OK", "Warning", "Fail")
        assert (item.status == "OK") == (item.comment == "")
        assert (item.summary is None) == (item.status == "Fail")
        if item.summary is not None:
            assert item.summary.strip() and item.summary not in scenes[item.index].text
            assert len(item.distorted) <= distortion_count(item.index, SETTINGS)
            assert all(d != item.summary for d in item.distorted)


@needs_book
def test_a_run_under_other_threads_regenerates_nothing(first_run: FirstRun, tmp_path: Path) -> None:
    """Threads are runtime, not part of the model fingerprint the cache keys use (issue 18 §3)."""
    folder = _copy(first_run, tmp_path)
    backend = CountingBackend(tuned("smollm2"))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        cache = GenerationCache(folder)
        assert summarise_scenes(_scenes(), backend, cache, SETTINGS) == first_run.summaries
    finally:
        torch.set_num_threads(before)
    assert backend.generated == 0 and cache.hits == first_run.made


@needs_book
def test_a_second_run_and_a_killed_run_regenerate_only_what_is_missing(
    first_run: FirstRun, tmp_path: Path
) -> None:
    scenes, first, made = _scenes(), first_run.summaries, first_run.made
    folder = _copy(first_run, tmp_path)
    backend = _counting_smollm2()
    # A second run over the same directory asks the model nothing and gives the same summaries.
    cache = GenerationCache(folder)
    assert len(cache) == made and cache.dropped_tail is None
    assert summarise_scenes(scenes, backend, cache, SETTINGS) == first
    assert backend.generated == 0 and cache.hits == made and cache.made == 0
    # A kill while writing the last line: half of it is on disk. Only that generation is redone.
    path = folder / "generations.jsonl"
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last_start + (len(data) - last_start) // 2])
    resumed_cache = GenerationCache(folder)
    assert resumed_cache.dropped_tail and len(resumed_cache) == made - 1
    resumed = summarise_scenes(scenes, backend, resumed_cache, SETTINGS)
    assert backend.generated == 1 and resumed_cache.made == 1
    assert resumed == first
    assert path.read_bytes() == data


@needs_book
def test_real_hierarchical_summaries_merge_to_one(first_run: FirstRun, tmp_path: Path) -> None:
    summaries = first_run.summaries
    backend = _counting_smollm2()
    cache = GenerationCache(_copy(first_run, tmp_path))
    kept = [s for s in summaries if s.summary is not None]
    if len(kept) < 2:
        pytest.fail(f"SmolLM2 gave fewer than two usable summaries: {[s.comment for s in summaries]}")
    settings = SETTINGS.model_copy(update={"meta_chunk_chars": 100_000})
    hierarchy = hierarchical_summaries("pg1342", summaries, backend, cache, settings)
    assert backend.generated == 2  # one merge, one distorted merge
    levels = [h.level for h in hierarchy]
    assert levels == [0, 0, 1]
    top = hierarchy[-1]
    assert (top.first_scene, top.last_scene) == (0, 1) and top.true.strip()
    assert [(h.first_scene, h.true) for h in hierarchy[:2]] == [(s.index, s.summary) for s in kept]
    assert all(h.false is None or h.false in s.distorted for h, s in zip(hierarchy[:2], kept, strict=True))
    assert top.false is None or top.false != top.true
    again = hierarchical_summaries("pg1342", summaries, backend, cache, settings)
    assert again == hierarchy and backend.generated == 2


@needs_book
def test_a_merge_without_an_answer_says_why_in_merge_failure(first_run: FirstRun, tmp_path: Path) -> None:
    """With the authors' BEGIN ANSWER tag rule SmolLM2-135M writes no tag: the real merge has no answer."""
    summaries = first_run.summaries
    backend = _counting_smollm2()
    cache = GenerationCache(_copy(first_run, tmp_path))
    tagged = SETTINGS.model_copy(update={"answer_tag": True, "meta_chunk_chars": 100_000})
    hierarchy = hierarchical_summaries("pg1342", summaries, backend, cache, tagged)
    assert backend.generated == 1  # the merge; a failed merge has nothing to distort
    assert [h.level for h in hierarchy] == [0, 0, 1]
    assert all(h.merge_failure is None for h in hierarchy[:2])
    top = hierarchy[-1]
    assert top.merge_failure == f"no {prompts.BEGIN_ANSWER_TAG} tag"
    assert top.true == "" and top.false is None and (top.first_scene, top.last_scene) == (0, 1)
    # The field survives JSON, and a record written before it existed still loads (as "not recorded").
    assert HierarchicalSummary.model_validate_json(top.model_dump_json()) == top
    old = {k: v for k, v in hierarchy[0].model_dump(mode="json").items() if k != "merge_failure"}
    assert HierarchicalSummary.model_validate_json(json.dumps(old)).merge_failure is None


class DescribedOnly:
    """A model that only describes itself: asked to generate, it fails the test (the cache must answer)."""

    preferred_batch = 1

    def __init__(self, described: dict[str, str]) -> None:
        self.described = described

    def describe(self) -> dict[str, str]:
        return self.described

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        raise AssertionError(f"asked to generate {len(requests)}: the cache should have answered")


def test_a_moved_model_cache_and_an_older_cache_key_regenerate_nothing(tmp_path: Path) -> None:
    """The cache keys hold the model as a run's identity does: where a model read from one fingerprinted
    GGUF file lies is no part of it, so a moved model cache (another home) finds every generation; an
    entry keyed the older way (the whole description) is still found where the model has not moved;
    another fingerprint is another model."""
    home = {"backend": "hf", "spec": "smollm2", "name": "smollm2", "weights_fingerprint": "ed056000d42586e9"}
    described = home | {"weights": "/root/.cache/longread/models/smollm2-ed056000d42586e9-tf5.24.0"}
    moved = home | {"weights": "/home/ada/.cache/longread/models/smollm2-ed056000d42586e9-tf5.24.0"}
    request = GenerateRequest(prompt="Summarise the scene: Mr. Bennet teases his wife.", max_tokens=8)
    made = GenerateResult(text="A teasing.", n_prompt_tokens=12, n_generated_tokens=3, stopped_by="eos")
    older = cache_key(described, request, as_before=True)
    assert older != cache_key(described, request) == cache_key(moved, request)
    for name, key, reader in (("moved", cache_key(described, request), moved), ("older", older, described)):
        GenerationCache(tmp_path / name).put(key, request, made, "summary scene 0")
        cache = GenerationCache(tmp_path / name)
        assert cached_generate(DescribedOnly(reader), cache, [request]) == [made], name
        assert cache.hits == 1 and cache.made == 0
    with pytest.raises(AssertionError, match="asked to generate 1"):
        cached_generate(DescribedOnly(moved | {"weights_fingerprint": "0a1b2c3d4e5f6a7b"}), cache, [request])
