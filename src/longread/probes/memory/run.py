"""``longread probe memory``: how much of each book the model remembers, and the files that show it.

Per book, the probes asked (:mod:`longread.probes.memory.probes`) on seeded passages and places
(:mod:`longread.probes.memory.passages`; :mod:`longread.probes.memory.places`); then per book the scores
with 95% intervals and counts — ``cloze`` (share right, Wilson, with its copied-example and no-name
counts, and "cannot tell" when those are most answers), ``cloze-rank`` (share ranked first, Wilson, with
its chance, and paired with always naming the most frequent name: the difference, its interval and
McNemar's p), ``extraction_exact`` (share of places continued exactly, Wilson),
``extraction_common_prefix`` (mean tokens, bootstrap), ``min_k`` (mean, bootstrap) — and the verdict
``remembered``: true, false or "cannot tell" by a stated rule and the intervals
(:mod:`longread.probes.memory.rule`; default: cloze ≥ 0.3 or extraction exact ≥ 0.05). A probe the
backend cannot run is skipped with its reason; a book with fewer passages than asked, or with no usable
cloze passage, says so in its notes. Files: ``items.jsonl`` (one line per probe item), ``books.json``,
``summary.md``, ``settings.json`` and ``memory.png``; ``finished-books.jsonl`` keeps each book as it finishes
(:mod:`longread.probes.memory.journal`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from longread.documents.book import Book
from longread.documents.excerpts import BookExcerpts
from longread.files import atomic_write_text
from longread.metrics.accuracy import wilson_interval
from longread.metrics.bootstrap import bootstrap_interval
from longread.metrics.paired import paired_scores
from longread.probes.errors import ProbeSettingsError
from longread.probes.memory.book import BookMemory
from longread.probes.memory.journal import MemoryJournal, as_excerpts
from longread.probes.memory.passages import ClozeSet, cloze_passages, passages, spacy_entities
from longread.probes.memory.places import benchmark_breaks, chapter_places, piece_ids, seeded_places
from longread.probes.memory.probes import (
    Asked,
    Place,
    ProbeUnavailable,
    asked_at,
    cloze,
    cloze_rank,
    extraction,
    min_k,
    token_access,
)
from longread.probes.memory.rule import (
    CANNOT_TELL,
    DEFAULT_RULE,
    adjust_prior_tests,
    clauses_as_dicts,
    judge,
    parse_rule,
)

PROBES = ("cloze", "cloze-rank", "extraction", "min-k")
DEFAULT_PROBES = ("cloze", "extraction", "min-k")


@dataclass(frozen=True)
class MemoryProbeSettings:
    seed: int = 0
    passages: int = 100
    """Passages (cloze, min-k) and seeded places (extraction) asked per book."""
    probes: tuple[str, ...] = DEFAULT_PROBES
    prompt_tokens: int = 100
    """Extraction: N tokens read before each place."""
    new_tokens: int = 50
    """Extraction: M greedy tokens compared with the book."""
    chapter_breaks: bool = True
    """Extraction also at every chapter break of the book (the places ChapterBreak asks about)."""
    min_k_percent: float = 20.0
    min_words: int = 40
    max_words: int = 100
    """Min-k passages: whole sentences, this many words."""
    cloze_min_tokens: int = 40
    cloze_max_tokens: int = 60
    """Cloze passages: whole sentences, this many BookNLP tokens (Chang et al.)."""
    rank_names: int = 10
    """Ranked cloze: the names offered per passage (N; chance 1/N)."""
    rule: str = DEFAULT_RULE
    """``remembered`` when any ``score>=value`` of this comma-separated list holds."""

    def __post_init__(self) -> None:
        unknown = [probe for probe in self.probes if probe not in PROBES]
        if unknown or not self.probes:
            raise ProbeSettingsError(
                f"--probes takes {', '.join(PROBES)}; got {', '.join(self.probes) or 'none'}"
            )
        if self.passages < 1 or self.prompt_tokens < 1 or self.new_tokens < 1:
            raise ProbeSettingsError("--passages, --prompt-tokens and --new-tokens must be at least 1")
        if not 0 < self.min_k_percent <= 100:
            raise ProbeSettingsError(f"--min-k-percent must lie in (0, 100], got {self.min_k_percent}")
        if not 1 <= self.cloze_min_tokens <= self.cloze_max_tokens:
            raise ProbeSettingsError(
                f"cloze passage tokens: need 1 ≤ min ({self.cloze_min_tokens}) ≤ max "
                f"({self.cloze_max_tokens})"
            )
        if self.rank_names < 2:
            raise ProbeSettingsError(
                f"--rank-names must be at least 2 (chance is 1/N), got {self.rank_names}"
            )
        if not 1 <= self.min_words <= self.max_words:
            raise ProbeSettingsError(
                f"passage words: need 1 ≤ min ({self.min_words}) ≤ max ({self.max_words})"
            )
        parse_rule(self.rule)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def probe_memory(
    backend: Any,
    books: Sequence[Book | BookExcerpts],
    settings: MemoryProbeSettings,
    progress: Callable[[int], None] | None = None,
    journal: MemoryJournal | None = None,
) -> tuple[list[dict[str, Any]], list[BookMemory]]:
    """Every probe item of every book, and each book's scores and verdict; ``progress(1)`` after each probe
    of each book probed. With a ``journal``, a book it holds is taken from it (no progress is counted for
    it), and each book probed is added to it as it finishes.

    A :class:`BookExcerpts` (``--data``) is probed on the text the benchmark holds, and extraction asks at
    the benchmark's own breaks instead of the book's chapter breaks."""
    items: list[dict[str, Any]] = []
    summaries = []
    entities = spacy_entities() if {"cloze", "cloze-rank"} & set(settings.probes) else None
    for given in books:
        started = time.perf_counter()
        excerpts = as_excerpts(given)
        finished = journal.done(excerpts) if journal is not None else None
        if finished is not None:
            items += finished[0]
            summaries.append(finished[1])
            continue
        book = excerpts.book
        summary = BookMemory(book.id, book.title)
        lines: list[dict[str, Any]] = []
        clozes = _ClozeOnce(excerpts, settings, summary, entities)
        for probe in settings.probes:
            try:
                lines += _run_probe(probe, backend, excerpts, settings, summary, clozes)
            except ProbeUnavailable as exc:
                summary.notes.append(f"{probe} not run: {exc}")
            if progress is not None:
                progress(1)
        _score(summary, lines, settings)
        summary.seconds = time.perf_counter() - started
        if journal is not None:
            journal.add(excerpts, lines, summary)
        items += lines
        summaries.append(summary)
    judge_books(summaries, settings.rule)
    return items, summaries


def judge_books(summaries: Sequence[BookMemory], rule: str) -> None:
    """Every book's verdict, the ranked cloze's prior comparisons adjusted together over the books."""
    ranked = [summary.scores.get("cloze-rank", {}) for summary in summaries]
    for score, adjusted in zip(ranked, adjust_prior_tests(ranked), strict=True):
        if score:
            score["most_frequent_p_adjusted"] = adjusted
    for summary in summaries:
        summary.remembered, clauses = judge(summary.scores, rule)
        summary.clauses = clauses_as_dicts(clauses)


class _ClozeOnce:
    """A book's cloze passages, chosen once for both cloze probes."""

    def __init__(
        self, excerpts: BookExcerpts, settings: MemoryProbeSettings, summary: BookMemory, entities: Any
    ):
        self.excerpts, self.settings, self.summary, self.entities = excerpts, settings, summary, entities
        self._found: ClozeSet | None = None

    def get(self) -> ClozeSet:
        if self._found is None:
            settings = self.settings
            self._found = found = cloze_passages(
                self.excerpts.book,
                settings.passages,
                settings.seed,
                self.entities,
                min_tokens=settings.cloze_min_tokens,
                max_tokens=settings.cloze_max_tokens,
                apart=bool(self.excerpts.source),
            )
            if not found.passages:
                self.summary.notes.append(
                    "cloze: no passage of the book holds exactly one person's name and no other"
                )
            elif found.without:
                self.summary.notes.append(
                    f"cloze: {len(found.passages)} of {settings.passages} passages ({found.without} of the "
                    f"book's {settings.passages} parts had none with exactly one name)"
                )
        return self._found


def _run_probe(
    probe: str,
    backend: Any,
    excerpts: BookExcerpts,
    settings: MemoryProbeSettings,
    summary: BookMemory,
    clozes: _ClozeOnce,
) -> list[dict[str, Any]]:
    book = excerpts.book
    if probe == "cloze":
        found = clozes.get()
        return cloze(backend, found.passages, [*(name for name, _ in found.names), *found.name_parts])
    if probe == "cloze-rank":
        found = clozes.get()
        names = [name for name, _ in found.names]
        if len(names) < settings.rank_names:
            summary.notes.append(
                f"cloze-rank: the book has {len(names)} person names found, fewer than --rank-names "
                f"({settings.rank_names}); each passage offers them all (chance 1/{len(names)})"
            )
        if len(names) < 2:
            raise ProbeUnavailable("ranked cloze needs at least two person names of the book to choose from")
        return cloze_rank(backend, found.passages, names, settings.rank_names)
    if probe == "min-k":
        access = token_access(backend, "min-k")
        if access.logprobs is None:
            raise ProbeUnavailable(f"min-k needs the log-prob of every token: {access.why_no_logprobs}")
        chosen_passages = passages(
            book,
            settings.passages,
            settings.seed,
            min_words=settings.min_words,
            max_words=settings.max_words,
            apart=bool(excerpts.source),
        )
        if len(chosen_passages) < settings.passages:
            summary.notes.append(
                f"min-k: {len(chosen_passages)} of {settings.passages} passages (the book is short)"
            )
        return min_k(backend, chosen_passages, settings.min_k_percent)
    return _extraction(backend, token_access(backend, "extraction").encoder, excerpts, settings, summary)


def _extraction(
    backend: Any, encoder: Any, excerpts: BookExcerpts, settings: MemoryProbeSettings, summary: BookMemory
) -> list[dict[str, Any]]:
    book = excerpts.book
    text, _ = book.render()  # the book as printed: a break continues into the next chapter's heading
    n, m = settings.prompt_tokens, settings.new_tokens
    if excerpts.source:  # pieces of a built benchmark: a place may not span the gap between two
        ids, ends = piece_ids(encoder, book)
    else:
        ids, ends = encoder.encode_plain(text), []
    drawn = seeded_places(len(ids), n, m, settings.passages, settings.seed, book.id, ends)
    places = [Place(p, "seeded") for p in drawn]
    if len(places) < settings.passages:
        where = f"{len(ends)} excerpts of" if ends else "the text has"
        summary.notes.append(
            f"extraction: {len(places)} of {settings.passages} places ({where} {len(ids)} tokens)"
        )
    asked: list[Asked] = []
    too_near, kind = 0, "chapter"
    if excerpts.breaks:
        asked, kind = benchmark_breaks(encoder, excerpts, n, m), "benchmark"
        too_near = len(excerpts.breaks) - len(asked)
    elif settings.chapter_breaks:
        breaks, too_near = chapter_places(book, encoder, text, n, m, ids)
        places += breaks
    if too_near:
        summary.notes.append(
            f"extraction: {too_near} {kind} break(s) with fewer than {n} tokens before or {m} after "
            "were not asked"
        )
    asked = asked_at(ids, sorted(places, key=lambda p: p.position), n, m) + asked
    return extraction(backend, book.id, asked, m)


def _score(summary: BookMemory, lines: Sequence[dict[str, Any]], settings: MemoryProbeSettings) -> None:
    by_probe: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        by_probe.setdefault(line["probe"], []).append(line)
    if "cloze" in by_probe:
        summary.scores["cloze"] = _cloze_score(by_probe["cloze"], summary)
    if "cloze-rank" in by_probe:
        summary.scores["cloze-rank"] = _ranked_score(by_probe["cloze-rank"])
    if "extraction" in by_probe:
        summary.scores["extraction_exact"] = _share([line["exact"] for line in by_probe["extraction"]])
        summary.scores["extraction_common_prefix"] = _mean(
            [line["common_prefix"] for line in by_probe["extraction"]], settings.seed
        )
    if "min_k" in by_probe:
        summary.scores["min_k"] = _mean([line["score"] for line in by_probe["min_k"]], settings.seed)


def _ranked_score(ranked: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ranked cloze's share right, its chance, and what always naming the book's most frequent
    candidate scores on the same passages, paired with the model passage by passage
    (:func:`longread.metrics.paired.paired_scores`): the model's share less the prior's with its interval
    (Tango's), the passages only one of them got right, and McNemar's exact p."""
    right = [bool(line["correct"]) for line in ranked]
    prior = [bool(line["most_frequent_right"]) for line in ranked]
    frequent = _share(prior)
    paired = paired_scores(prior, right)
    return {
        **_share(right),
        "chance": float(np.mean([line["chance"] for line in ranked])),
        "most_frequent": frequent["value"],
        "most_frequent_count": frequent["count"],
        "over_most_frequent": paired.difference,
        "over_most_frequent_ci": [paired.ci_low, paired.ci_high],
        "model_only_right": paired.only_b,
        "most_frequent_only_right": paired.only_a,
        "most_frequent_p": paired.mcnemar_p,
    }


CANNOT_TELL_SHARE = 0.5
"""A cloze whose answers are more than this share copied examples or no name of the book cannot tell."""


def _cloze_score(lines: Sequence[dict[str, Any]], summary: BookMemory) -> dict[str, Any]:
    """The cloze's share right, with how many answers copied a worked example or named no one of the
    book; when those are most answers the score says "cannot tell" (its 0 is no evidence)."""
    score = _share([line["correct"] for line in lines])
    copied = sum(line["kind"] == "copied example" for line in lines)
    no_name = sum(line["kind"] == "not a name" for line in lines)
    score["cloze_copied_example"], score["cloze_not_a_name"] = copied, no_name
    if copied + no_name > CANNOT_TELL_SHARE * len(lines):
        score["verdict"] = CANNOT_TELL
        summary.notes.append(
            f"cloze: cannot tell — {copied} of {len(lines)} answers copied a worked example's name and "
            f"{no_name} named no one of the book: the model is not doing the task, so the verdict rests on "
            "the other probes"
        )
    return score


def _share(flags: Sequence[bool]) -> dict[str, Any]:
    n, right = len(flags), sum(bool(flag) for flag in flags)
    if n == 0:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    low, high = wilson_interval(right, n)
    return {"value": right / n, "ci_low": low, "ci_high": high, "n": n, "count": right}


def _mean(values: Sequence[float], seed: int) -> dict[str, Any]:
    if not values:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    low, high = bootstrap_interval(list(map(float, values)), np.mean, seed=seed)
    return {"value": float(np.mean(values)), "ci_low": low, "ci_high": high, "n": len(values)}


def write_memory(
    out: Path,
    items: Sequence[dict[str, Any]],
    summaries: Sequence[BookMemory],
    settings: MemoryProbeSettings,
    model: dict[str, Any],
) -> Path:
    """Write items.jsonl, books.json, settings.json, summary.md and memory.png; returns summary.md."""
    from longread.probes.memory.plot import plot_memory
    from longread.probes.memory.summary import summary_markdown

    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        out / "items.jsonl", "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in items)
    )
    books = {"model": model, "rule": settings.rule, "books": [asdict(summary) for summary in summaries]}
    atomic_write_text(out / "books.json", json.dumps(books, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(
        out / "settings.json", json.dumps({"model": model, **settings.as_dict()}, indent=2) + "\n"
    )
    plot_memory(summaries, out / "memory.png")
    markdown = out / "summary.md"
    atomic_write_text(markdown, summary_markdown(summaries, settings, model))
    return markdown
