"""``make demo-long``: the whole window — Gemma 3 270M on ChapterBreak prefixes from 1K to 32K tokens.

ChapterBreak instances are built from one bundled novel (Pride and Prejudice),
keeping only chapter breaks with at least the longest prefix before them, so
every length below the longest is a real cut of the same text. The model scores
each instance at every length; the report draws accuracy against prefix length
(the memory curve) and lists each length's context as kept.

A length the model cannot hold beside a candidate (Gemma 3 270M: 32,768
positions, one of them its ``<bos>``, ``suffix_tokens`` for the candidate) is
lowered to the longest that fits, and the change is printed: 32K becomes 32,640.
``bench/long_window.py`` measures time and peak memory per length beside one
chunked read of the same tokens.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import typer

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.documents.bundled import bundled_books
from longread.evaluation.runner import RunOptions, run_task
from longread.models.registry import load_backend
from longread.report.build import build_report

LONG_BOOK = "pg1342"
"""Pride and Prejudice: about 160K tokens, its later chapters have more than 32K before them."""
LONG_PREFIX_LENGTHS = (1024, 2048, 4096, 8192, 16384, 32768)
LONG_MODEL = "gemma3"
LONG_SAMPLE = 2
"""Instances scored at every length (a seeded sample): 2 take about 8 minutes on a quiet 2-core machine."""
SUFFIX_TOKENS = 128


@dataclass(frozen=True)
class FittedLengths:
    """Prefix lengths as the model can read them, and what was lowered to fit."""

    lengths: tuple[int, ...]
    notes: tuple[str, ...] = field(default=())


def fit_lengths(
    lengths: Sequence[int], max_length: int, *, suffix_tokens: int = SUFFIX_TOKENS, start_tokens: int = 1
) -> FittedLengths:
    """Lower every length that leaves no room for a ``suffix_tokens`` candidate to the longest that does.

    A candidate of n tokens needs n - 1 positions after the context (its last token is
    predicted, never read), and the start token takes one: the longest prefix is
    ``max_length - start_tokens - (suffix_tokens - 1)``.
    """
    top = max_length - start_tokens - (suffix_tokens - 1)
    if top < 1:
        raise ValueError(
            f"a window of {max_length} tokens holds no prefix beside a {suffix_tokens}-token candidate"
        )
    fitted: list[int] = []
    notes: list[str] = []
    for length in sorted(set(lengths)):
        if length > top:
            notes.append(
                f"prefix length {length:,} lowered to {top:,}: the model's window of {max_length:,} "
                f"positions holds {start_tokens} start token(s) and a {suffix_tokens}-token candidate "
                "beside it"
            )
            length = top
        if length not in fitted:
            fitted.append(length)
    return FittedLengths(tuple(fitted), tuple(notes))


def long_book() -> Path:
    """The bundled book the long instances come from."""
    found = [book for book in bundled_books() if book.name.startswith(LONG_BOOK + ".")]
    if not found:
        raise FileNotFoundError(f"the bundled book {LONG_BOOK} is missing from longread's data/books")
    return found[0]


def long_build_options(longest: int) -> BuildOptions:
    """Instances with at least ``longest`` tokens before the break (GPT-2 counts; 25% more stored)."""
    return BuildOptions(seed=0, prefix_tokens=longest, min_prefix_tokens=longest, suffix_tokens=SUFFIX_TOKENS)


@dataclass(frozen=True)
class LongWindowDemo:
    data: Path
    run: Path
    lengths: tuple[int, ...]
    notes: tuple[str, ...]
    seconds: float
    report: Path
    plot: Path
    table: str


def run_long_window_demo(
    out: Path,
    *,
    model: str = LONG_MODEL,
    lengths: Sequence[int] = LONG_PREFIX_LENGTHS,
    sample: int = LONG_SAMPLE,
    threads: int | None = None,
) -> LongWindowDemo:
    """Build the long instances, score them at every length (rerunning resumes), report and draw."""
    out.mkdir(parents=True, exist_ok=True)
    backend = load_backend(model, threads=threads)
    max_length = getattr(backend, "max_length", None)
    encoder = getattr(backend, "encoder", None)
    start_tokens = int(getattr(encoder, "start_token_id", None) is not None)
    fitted = (
        fit_lengths(lengths, max_length, start_tokens=start_tokens)
        if isinstance(max_length, int)
        else FittedLengths(tuple(sorted(set(lengths))))
    )
    for note in fitted.notes:
        typer.echo("note: " + note)
    data = out / "chapterbreak-long.jsonl"
    typer.echo(
        f"1. ChapterBreak from {LONG_BOOK} with at least {max(lengths):,} tokens before each break → {data}"
    )
    built = build_chapterbreak([long_book()], data, long_build_options(max(lengths)), show_progress=False)
    for line in built.summary_lines():
        typer.echo("   " + line)
    run = out / f"run-{model.replace(':', '-').replace('/', '_')}"
    typer.echo(
        f"2. {model} on {sample} instance(s) at prefix lengths {', '.join(f'{n:,}' for n in fitted.lengths)} "
        f"→ {run} (rerunning resumes)"
    )
    task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=fitted.lengths, suffix_tokens=SUFFIX_TOKENS))
    started = time.perf_counter()
    outcome = run_task(task, data, backend, run, RunOptions(sample=sample, resume=True))
    seconds = time.perf_counter() - started
    typer.echo(f"   {outcome.scored} samples scored in {seconds:.0f} s, {outcome.skipped_done} done before")
    files = build_report([run], out / "report")
    typer.echo(files.table)
    typer.echo(f"report: {files.markdown}")
    typer.echo(f"plot:   {files.plot}")
    return LongWindowDemo(
        data, run, fitted.lengths, fitted.notes, seconds, files.markdown, files.plot, files.table
    )
