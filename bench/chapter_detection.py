"""Chapter detection against the truth: precision / recall per book and micro F1 over the corpus.

    .venv/bin/python bench/chapter_detection.py [--corpus ../shared/corpus/gutenberg] [--verbose]
        [--part all|tuned|held-apart]

The truth (chapters_truth.jsonl) comes from each book's HTML edition. A detected
chapter matches a true one when the true chapter's opening words appear at the
start of the detected chapter (heading + body), compared loosely: lower case,
accents, punctuation, italics marks and spacing are ignored, because editions
differ in all of them (and a drop cap "A / BOUT" must still match "ABOUT").
Books are split into a *tuned* part and a *held-apart* part by a seeded hash of
their id (``is_held_apart``), fixed before the rules of November 2026 were changed:
rules are tuned on the first part only, and the second shows how detection holds
on books nobody looked at while tuning. The books named in the issue that asked
for it (pg583, pg155, pg160) and in the session before (pg84, pg543) were looked
at, so they are always in the tuned part.
The baseline splits the same stripped text at lines matching ``^chapter``
(case-insensitive), which is what the ChapterBreak paper did for PG-19.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import unicodedata
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

try:
    import longread  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from longread.documents.book import Chapter
from longread.documents.chapters import spans_to_chapters, split_by_pattern
from longread.documents.gutenberg import read_gutenberg
from longread.errors import LongreadError, NoChaptersError

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "gutenberg"
KEY_CHARS = 30  # alphanumerics of the true opening that must be found
SLACK_CHARS = 250  # how far past the heading the opening may start (a title line, an epigraph)
TARGET_F1 = 0.97
LOW = 0.8
BASELINE_PATTERN = r"(?i)^chapter"

HELD_APART_SALT = "longread-held-apart-v1"
HELD_APART_BUCKETS = 5  # one bucket in five: about 20 of 97 books
# Looked at while tuning (named in the issue, or fixed in the session before): never held apart.
LOOKED_AT = frozenset({"583", "155", "160", "84", "543"})
# What the rule gives today, written out so that a change in the corpus cannot move books silently.
HELD_APART = frozenset(
    {"35", "73", "82", "110", "153", "161", "174", "242", "244", "271"}
    | {"284", "498", "558", "829", "1023", "1156", "1695", "5658"}
)


def is_held_apart(book_id: str) -> bool:
    """Whether a book belongs to the held-apart part: a fixed hash bucket of its id."""
    if book_id in LOOKED_AT:
        return False
    digest = hashlib.sha256(f"{HELD_APART_SALT}:{book_id}".encode()).digest()
    return digest[0] % HELD_APART_BUCKETS == 0


# Books where the HTML edition's units differ from what the plain text can show, with the reason.
EXPLAINED: dict[str, str] = {}


def normalise(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed.lower() if ch.isalnum() and ch.isascii())


@dataclass
class Score:
    book_id: str
    truth: int
    detected: int
    matched: int
    seconds: float
    error: str = ""
    baseline_detected: int = 0
    baseline_matched: int = 0
    missed: tuple[str, ...] = ()
    spurious: tuple[str, ...] = ()

    @property
    def precision(self) -> float:
        return self.matched / self.detected if self.detected else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.truth if self.truth else 0.0


def match(truth: list[dict[str, str]], chapters: tuple[Chapter, ...]) -> tuple[int, list[int], list[int]]:
    """Matched count, unmatched truth indices, unmatched detected indices (in order, one-to-one)."""
    keys = [normalise(t["opening"])[:KEY_CHARS] for t in truth]
    used: set[int] = set()
    unmatched_detected: list[int] = []
    last = -1
    for index, chapter in enumerate(chapters):
        heading = normalise(chapter.heading)
        window = (heading + normalise(chapter.text[: SLACK_CHARS * 3]))[: len(heading) + SLACK_CHARS]
        hits = [i for i, key in enumerate(keys) if i not in used and key and key in window]
        if not hits:
            unmatched_detected.append(index)
            continue
        later = [i for i in hits if i > last]
        chosen = later[0] if later else hits[0]
        used.add(chosen)
        last = chosen
    return len(used), [i for i in range(len(keys)) if i not in used], unmatched_detected


def score_book(job: tuple[Path, dict[str, object]]) -> Score:
    path, row = job
    truth = row["chapters"]
    assert isinstance(truth, list)
    started = time.perf_counter()
    book_id = str(row["id"])
    try:
        book = read_gutenberg(path)
    except NoChaptersError as exc:
        return Score(book_id, len(truth), 0, 0, time.perf_counter() - started, error=str(exc))
    seconds = time.perf_counter() - started
    matched, missed, spurious = match(truth, book.chapters)
    score = Score(book_id, len(truth), len(book.chapters), matched, seconds)
    score.missed = tuple(str(truth[i]["heading"]) for i in missed)
    score.spurious = tuple(book.chapters[i].heading for i in spurious)
    text, _ = book.render()
    try:
        baseline = spans_to_chapters(text, split_by_pattern(text, BASELINE_PATTERN))
    except LongreadError:
        baseline = ()
    score.baseline_detected = len(baseline)
    score.baseline_matched = match(truth, baseline)[0]
    return score


def _baseline_on_raw(job: tuple[Path, dict[str, object]]) -> tuple[int, int]:
    """The baseline on the book as read (front matter kept), as a user without this reader would."""
    from longread.documents.gutenberg import _strip_licence
    from longread.files import read_text

    path, row = job
    truth = row["chapters"]
    assert isinstance(truth, list)
    body, _, _ = _strip_licence(read_text(path), path)
    try:
        chapters = spans_to_chapters(body, split_by_pattern(body, BASELINE_PATTERN))
    except LongreadError:
        return 0, 0
    return len(chapters), match(truth, chapters)[0]


def f1(matched: int, detected: int, truth: int) -> float:
    precision = matched / detected if detected else 0.0
    recall = matched / truth if truth else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _micro_line(name: str, scores: list[Score]) -> str:
    truth = sum(s.truth for s in scores)
    detected = sum(s.detected for s in scores)
    matched = sum(s.matched for s in scores)
    precision = matched / detected if detected else 0.0
    recall = matched / truth if truth else 0.0
    return (
        f"{name}: {len(scores)} books, truth {truth}, detected {detected}, matched {matched}; "
        f"micro precision {precision:.4f}  recall {recall:.4f}  F1 {f1(matched, detected, truth):.4f}"
    )


def _select(rows: list[dict[str, object]], part: str) -> list[dict[str, object]]:
    held = {str(row["id"]) for row in rows if row["chapters"] and is_held_apart(str(row["id"]))}
    if held != HELD_APART:
        found = sorted(held, key=int)
        raise SystemExit(f"the held-apart rule now gives {found}, not HELD_APART; check the corpus")
    if part == "all":
        return rows
    return [row for row in rows if (str(row["id"]) in HELD_APART) == (part == "held-apart")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--verbose", action="store_true", help="print every book and its misses")
    parser.add_argument(
        "--part",
        choices=("all", "tuned", "held-apart"),
        default="all",
        help="score only the tuned or only the held-apart books (tune with --part tuned)",
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.corpus / "chapters_truth.jsonl").read_text().splitlines()]
    rows = _select(rows, args.part)
    jobs = [(args.corpus / f"pg{row['id']}.txt.gz", row) for row in rows if row["chapters"]]
    skipped = [str(row["id"]) for row in rows if not row["chapters"]]
    started = time.perf_counter()
    with Pool(2) as pool:
        scores = pool.map(score_book, jobs, chunksize=1)
        raw_baseline = pool.map(_baseline_on_raw, jobs, chunksize=1)
    wall = time.perf_counter() - started

    print(f"{'book':>6} {'truth':>5} {'found':>5} {'match':>5} {'prec':>5} {'rec':>5}  note")
    below: list[Score] = []
    for score in scores:
        low = score.precision < LOW or score.recall < LOW
        if low:
            below.append(score)
        if args.verbose or low:
            note = EXPLAINED.get(score.book_id, "") if low else ""
            part = "held-apart" if score.book_id in HELD_APART else ""
            print(
                f"{score.book_id:>6} {score.truth:>5} {score.detected:>5} {score.matched:>5} "
                f"{score.precision:5.2f} {score.recall:5.2f}  {part} {note or score.error}"
            )
            if args.verbose and (score.missed or score.spurious):
                print(f"{'':>8}missed: {list(score.missed)[:6]}")
                print(f"{'':>8}spurious: {list(score.spurious)[:6]}")

    truth = sum(s.truth for s in scores)
    base_detected = sum(s.baseline_detected for s in scores)
    base_matched = sum(s.baseline_matched for s in scores)
    raw_detected = sum(d for d, _ in raw_baseline)
    raw_matched = sum(m for _, m in raw_baseline)
    micro = f1(sum(s.matched for s in scores), sum(s.detected for s in scores), truth)
    print()
    print(f"books scored: {len(scores)} (skipped, no truth chapters: {', '.join(skipped) or 'none'})")
    print(_micro_line(f"{args.part} books", scores))
    if args.part == "all":
        print(_micro_line("tuned part", [s for s in scores if s.book_id not in HELD_APART]))
        print(_micro_line("held-apart part", [s for s in scores if s.book_id in HELD_APART]))
        print(f"held apart: {', '.join('pg' + b for b in sorted(HELD_APART, key=int))}")
    print(
        f"baseline ^chapter on the licence-stripped text: F1 {f1(raw_matched, raw_detected, truth):.4f}; "
        f"on the front-matter-stripped text: F1 {f1(base_matched, base_detected, truth):.4f}"
    )
    errors = [s for s in scores if s.error]
    for score in errors:
        print(f"no chapters: {score.book_id}: {score.error}")
    unexplained = [s for s in below if s.book_id not in EXPLAINED]
    print(f"books below {LOW}: {len(below)} ({len(unexplained)} unexplained)")
    print(
        f"reading + detection: {sum(s.seconds for s in scores):.1f} s CPU over {len(scores)} books; "
        f"wall {wall:.1f} s on 2 workers (baselines included)"
    )
    ok = micro >= TARGET_F1 and not unexplained
    print(
        "TARGET MET"
        if ok
        else f"TARGET NOT MET (micro F1 >= {TARGET_F1} and no unexplained book below {LOW})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
