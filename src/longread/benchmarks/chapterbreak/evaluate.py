"""ChapterBreak instances → log-likelihood requests → per-sample rows → results.

For each instance and prefix length L, one request holds the prefix (cut from the
left to L tokens of the model's own tokenizer) and the six candidates (cut from
the right to the suffix budget). A backend reads the prefix once and scores all
six. The prediction is the candidate with the highest log-probability; a tie with
the gold counts as wrong (the official SuffixLM code counts ties as correct — we
record ties so either rule can be recomputed).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.errors import LongreadError
from longread.metrics import accuracy_by, pooled_word_perplexity
from longread.models.requests import Backend, LoglikelihoodRequest, LoglikelihoodResult
from longread.progress import Progress
from longread.runs.config import make_run_config
from longread.runs.errors import RunWriteError
from longread.runs.run_dir import RunDir

TASK = "chapterbreak"
DEFAULT_PREFIX_LENGTHS = (256, 512, 1024, 2048, 4096, 8192)
TIE_RULE = "a tie between the gold and a negative counts as wrong"


@dataclass(frozen=True)
class EvalSettings:
    prefix_lengths: tuple[int, ...] = DEFAULT_PREFIX_LENGTHS
    suffix_tokens: int = 128
    truncate: bool = True  # False: a prompt longer than the model window is an error, not cut
    limit: int | None = None  # the first N instances
    sample: int | None = None  # a seeded random N instances (spread over books)
    sample_seed: int = 0

    def result_defining(self) -> dict[str, Any]:
        return {
            "prefix_lengths": list(self.prefix_lengths),
            "suffix_tokens": self.suffix_tokens,
            "truncate": self.truncate,
            "tie_rule": TIE_RULE,
        }


@dataclass
class EvalOutcome:
    run_dir: Path
    results: dict[str, Any]
    scored: int = 0
    reused: int = 0
    skipped_done: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


def select_instances(
    instances: list[ChapterBreakInstance], settings: EvalSettings
) -> list[ChapterBreakInstance]:
    chosen = instances
    if settings.sample is not None and settings.sample < len(chosen):
        rng = random.Random(f"longread/chapterbreak/sample/{settings.sample_seed}")
        picked = sorted(rng.sample(range(len(chosen)), settings.sample))
        chosen = [chosen[i] for i in picked]
    if settings.limit is not None:
        chosen = chosen[: settings.limit]
    return chosen


def sample_key(instance_id: str, prefix_length: int) -> str:
    return f"{instance_id}@{prefix_length:05d}"


def make_request(
    instance: ChapterBreakInstance, prefix_length: int, settings: EvalSettings
) -> LoglikelihoodRequest:
    return LoglikelihoodRequest(
        context=instance.prefix,
        continuations=tuple(instance.candidates),
        max_context_tokens=prefix_length,
        max_continuation_tokens=settings.suffix_tokens,
        truncate=settings.truncate,
    )


def make_row(
    instance: ChapterBreakInstance, prefix_length: int, result: LoglikelihoodResult
) -> dict[str, Any]:
    logprobs = [score.logprob for score in result.scores]
    best = max(logprobs)
    gold = logprobs[0]
    tie = sum(1 for value in logprobs if value == best) > 1 and gold == best
    gold_score = result.scores[0]
    gold_words = len(gold_score.scored_text.split())
    return {
        "key": sample_key(instance.id, prefix_length),
        "id": instance.id,
        "book_id": instance.book_id,
        "split": instance.split,
        "suffix_type": instance.suffix_type,
        "prefix_length": prefix_length,
        "logprobs": logprobs,
        "prediction": logprobs.index(best),
        "correct": gold == best and not tie,
        "tie": tie,
        "continuation_tokens": [score.n_tokens for score in result.scores],
        "continuation_tokens_original": [score.n_tokens_original for score in result.scores],
        "is_greedy": [score.is_greedy for score in result.scores],
        "context_tokens_original": result.context_tokens_original,
        "context_tokens_kept": result.context_tokens_kept,
        "context_truncated": result.context_tokens_kept < result.context_tokens_original,
        "gold_logprob": gold,
        "gold_words": gold_words,
    }


def summarise(rows: Sequence[dict[str, Any]], model: str) -> dict[str, Any]:
    """results.json: accuracy (Wilson 95% interval) and word-level perplexity per prefix length.

    Computed from rows sorted by key, so an interrupted-and-resumed run gives the
    same bytes as an uninterrupted one.
    """
    by_length: dict[str, Any] = {}
    for group_key, summary in accuracy_by(rows, "prefix_length").items():
        length = int(str(group_key))
        group = [row for row in rows if row["prefix_length"] == length]
        scored = [row for row in group if row["gold_words"] > 0]
        logprobs, words = [row["gold_logprob"] for row in scored], [row["gold_words"] for row in scored]
        perplexity = pooled_word_perplexity(logprobs, words) if scored else None
        by_length[str(length)] = {
            **summary.as_dict(),
            "ties": sum(1 for row in group if row["tie"]),
            "word_perplexity": perplexity,
            "truncated_prefix": sum(1 for row in group if row["context_truncated"]),
            "mean_context_tokens": sum(row["context_tokens_kept"] for row in group) / len(group),
            "short_prefix": sum(1 for row in group if row["context_tokens_original"] < length),
            "truncated_candidates": sum(_cut_candidates(row) for row in group),
        }
    n_candidates = {len(row["logprobs"]) for row in rows}
    return {
        "task": TASK,
        "model": model,
        "chance": 1.0 / n_candidates.pop() if len(n_candidates) == 1 else None,
        "tie_rule": TIE_RULE,
        "by_prefix_length": by_length,
        "counts": {
            "instances": len({row["id"] for row in rows}),
            "samples": len(rows),
        },
        "notes": {
            "word_perplexity": "exp(-sum of gold log-probs / sum of gold words), words = "
            "whitespace-separated words of the scored (kept) gold text",
            "short_prefix": "samples whose whole prefix had fewer tokens than the prefix length",
            "truncated_prefix": "samples whose prefix was cut from the left to the prefix length",
        },
    }


def _cut_candidates(row: dict[str, Any]) -> int:
    kept_and_original = zip(row["continuation_tokens"], row["continuation_tokens_original"], strict=True)
    return sum(1 for kept, original in kept_and_original if kept < original)


def evaluate_chapterbreak(
    data: Path,
    backend: Backend,
    run_path: Path,
    settings: EvalSettings = EvalSettings(),
    *,
    resume: bool = False,
    overwrite: bool = False,
    show_progress: bool = True,
    on_sample: Callable[[dict[str, Any]], None] | None = None,
) -> EvalOutcome:
    """Evaluate ``backend`` on a ChapterBreak file, appending each finished sample to the run directory."""
    instances = select_instances(load_instances(data), settings)
    if not instances:
        raise LongreadError(f"{data}: no instances to evaluate")
    model = backend.describe()
    config = make_run_config(
        task=TASK,
        model=model,
        data_path=data,
        settings=settings.result_defining(),
        runtime={"limit": settings.limit, "sample": settings.sample, "sample_seed": settings.sample_seed},
    )
    outcome = EvalOutcome(run_dir=run_path, results={})
    wanted = {sample_key(x.id, length) for x in instances for length in settings.prefix_lengths}
    with RunDir.create(run_path, config, resume=resume, overwrite=overwrite) as run:
        done = run.done_keys()
        todo = [x for x in instances if any(sample_key(x.id, n) not in done for n in settings.prefix_lengths)]
        outcome.skipped_done = len(instances) - len(todo)
        with Progress(
            total=len(instances),
            desc=f"{TASK} {model.get('name', '')}",
            unit="inst",
            initial=outcome.skipped_done,
            enabled=show_progress,
        ) as progress:
            for instance in todo:
                tokens = _evaluate_instance(instance, backend, run, done, settings, outcome, on_sample)
                progress.update(items=1, tokens=tokens)
        rows = [row for row in run.rows_by_key() if row["key"] in wanted]
        outcome.results = summarise(rows, str(model.get("name", "model")))
        run.write_results(outcome.results)
    return outcome


def _evaluate_instance(
    instance: ChapterBreakInstance,
    backend: Backend,
    run: RunDir,
    done: set[str],
    settings: EvalSettings,
    outcome: EvalOutcome,
    on_sample: Callable[[dict[str, Any]], None] | None,
) -> int:
    """Score one instance at every prefix length not yet done; returns the model tokens it took."""
    tokens = 0
    whole: LoglikelihoodResult | None = None  # a result that already saw the whole prefix
    for length in sorted(settings.prefix_lengths):
        key = sample_key(instance.id, length)
        if key in done:
            continue
        try:
            if whole is not None:
                # The prefix fitted into a shorter length already: a longer one is the same request.
                result, reused = whole, True
            else:
                result = backend.loglikelihood([make_request(instance, length, settings)])[0]
                reused = False
            if result.context_tokens_kept == result.context_tokens_original:
                whole = result
            row = make_row(instance, length, result)
            row["reused_shorter_length"] = reused
            sample_tokens = (
                0 if reused else result.context_tokens_kept + sum(s.n_tokens for s in result.scores)
            )
            run.append(row, tokens=sample_tokens)
            tokens += sample_tokens
            outcome.reused += int(reused)
            outcome.scored += int(not reused)
            if on_sample is not None:
                on_sample(row)
        except RunWriteError:
            raise
        except Exception as exc:  # one bad instance must not end a long run; it is logged and reported
            message = f"{type(exc).__name__}: {exc}"
            run.append_error(key, message)
            outcome.errors.append((key, message))
    return tokens
