"""The ChapterBreak builder on real books: the three invariants, determinism, budgets."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.boundaries import RenderedBook
from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.chapterbreak.numbering import label_values
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.documents.book import Book
from longread.documents.reader import read_book
from longread.text.tokenizers import load_tokenizer
from tests.helpers import gutenberg_book, needs_shared, synthetic_book

REAL_BOOKS = [1342, 84, 2701, 98, 345]  # arabic, roman/letters, numbered+titled, BOOK parts, dated diary


def candidate_heading(candidate: str) -> str:
    return candidate.split("\n\n", 1)[0]


def check_invariants(book: Book, instances: list[ChapterBreakInstance]) -> None:
    rendered = RenderedBook.of(book)
    for instance in instances:
        i = instance.chapter_index
        gold_heading = book.chapters[i].heading
        boundary = rendered.heading_starts[i]
        # 1. the prefix ends exactly where the gold chapter's heading starts
        assert instance.boundary_char == boundary
        assert rendered.text[:boundary].endswith(instance.prefix)
        assert rendered.text[boundary:].startswith(gold_heading)
        assert instance.gold.startswith(gold_heading)
        # 2. negatives are starts of later chapters of the same book
        assert instance.negative_sources is not None
        assert len(instance.negatives) == 5
        for source in instance.negative_sources:
            assert source.book_id == book.id
            assert source.chapter_index > i
        # 3. every candidate carries the gold's chapter number
        gold_numbers = label_values(gold_heading)
        for candidate in instance.candidates:
            assert label_values(candidate_heading(candidate)) == gold_numbers, (instance.id, candidate[:60])


@needs_shared
@pytest.mark.parametrize("book_id", REAL_BOOKS)
def test_invariants_hold_on_real_books(book_id: int) -> None:
    book = read_book(gutenberg_book(book_id))
    built = build_book(book, BuildOptions(prefix_tokens=1024))
    assert built.instances, built.dropped
    # every chapter is accounted for: an instance, or a recorded reason
    assert len(built.instances) + sum(built.dropped.values()) == len(book.chapters)
    eligible = sum(1 for i in range(1, len(book.chapters)) if len(book.chapters) - i - 1 >= 5)
    assert len(built.instances) >= 0.9 * eligible
    check_invariants(book, built.instances)


@needs_shared
def test_budgets_are_respected_and_recorded() -> None:
    book = read_book(gutenberg_book(1342))
    options = BuildOptions(prefix_tokens=512, prefix_margin=0.0, suffix_tokens=64)
    built = build_book(book, options)
    tokenizer = load_tokenizer("gpt2")
    late = [x for x in built.instances if x.prefix_truncated]
    assert late, "a 120K-word book has prefixes longer than 512 tokens"
    for instance in built.instances:
        assert instance.prefix_tokens <= 512
        assert instance.prefix_tokens_original is not None
        assert instance.prefix_tokens_original >= instance.prefix_tokens
        assert instance.prefix_truncated == (instance.prefix_tokens_original > 512)
        # counted in the book's own tokenisation: at most one token away from counting the prefix alone
        assert abs(tokenizer.count(instance.prefix) - instance.prefix_tokens) <= 1
        assert tokenizer.count(instance.gold) == instance.gold_tokens <= 64
        assert all(tokenizer.count(n) <= 64 for n in instance.negatives)
        assert instance.tokenizer == "gpt2"


def test_breaks_with_fewer_than_five_later_chapters_yield_nothing() -> None:
    book = synthetic_book(7)
    built = build_book(book, BuildOptions(prefix_tokens=256))
    # chapter index 1 has 5 later chapters (2..6); index 2 has only 4.
    assert [x.chapter_index for x in built.instances] == [1]
    assert built.dropped["fewer than 5 later candidates in the book"] == 5
    check_invariants(book, built.instances)


def test_seed_changes_negatives_but_not_golds() -> None:
    book = synthetic_book(30)
    a = build_book(book, BuildOptions(seed=1, prefix_tokens=256)).instances
    b = build_book(book, BuildOptions(seed=2, prefix_tokens=256)).instances
    assert [x.gold for x in a] == [x.gold for x in b]
    assert [x.negative_sources for x in a] != [x.negative_sources for x in b]


def test_cause_and_dialogue_boundaries() -> None:
    book = synthetic_book(3)
    chapters = list(book.chapters)
    text = chapters[1].text
    # ~200 tokens of filler between boundaries, so the 128-token windows never overlap.
    filler = " ".join(f"The ship sailed on past harbour {n} in the rain." for n in range(20))
    lines = [
        f"{filler}\n\nHe stopped because the road was long, he rested {k}.\n\n{filler}\n\n"
        f'"Come here {k}," she said.'
        for k in range(12)
    ]
    chapters[1] = type(chapters[1])(heading=chapters[1].heading, text=text + "\n\n" + "\n\n".join(lines))
    book = Book(**{**book.__dict__, "chapters": tuple(chapters)})
    rendered = RenderedBook.of(book)
    for suffix_type, opener, rule in (
        ("cause", "because", "cause-cue/mid-sentence"),
        ("dialogue", '"', "dialogue-quote"),
    ):
        built = build_book(book, BuildOptions(prefix_tokens=256, suffix_type=suffix_type))  # type: ignore[arg-type]
        assert len(built.instances) == 12 - 5, built.dropped
        for instance in built.instances:
            assert instance.gold.startswith(opener)
            assert instance.boundary_rule == rule
            assert instance.boundary_char is not None
            assert rendered.text[: instance.boundary_char].endswith(instance.prefix)
            assert all(n.startswith(opener) for n in instance.negatives)
            assert instance.negative_sources is not None
            assert all(s.char_offset > instance.boundary_char for s in instance.negative_sources)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@needs_shared
def test_build_is_byte_identical_across_runs_worker_counts_and_book_orders(tmp_path: Path) -> None:
    books = [gutenberg_book(i) for i in (84, 2852, 1342)]
    options = BuildOptions(prefix_tokens=512, seed=7)
    first = build_chapterbreak(books, tmp_path / "a.jsonl", options, workers=2, show_progress=False)
    build_chapterbreak(books, tmp_path / "b.jsonl", options, workers=2, show_progress=False)
    # the same books in another order (as another shell's glob might give them), in one process
    build_chapterbreak(books[::-1], tmp_path / "c.jsonl", options, workers=1, show_progress=False)
    assert first.instances > 50
    assert _sha(tmp_path / "a.jsonl") == _sha(tmp_path / "b.jsonl") == _sha(tmp_path / "c.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert {row["seed"] for row in rows} == {7}
    assert len(load_instances(tmp_path / "a.jsonl")) == first.instances


@needs_shared
def test_out_of_book_negatives_come_from_other_books(tmp_path: Path) -> None:
    books = [gutenberg_book(i) for i in (84, 2852, 1342)]
    out = tmp_path / "oob.jsonl"
    build_chapterbreak(
        books,
        out,
        BuildOptions(prefix_tokens=256, negatives_from="out-of-book"),
        workers=1,
        show_progress=False,
    )
    instances = load_instances(out)
    assert instances
    for instance in instances:
        assert instance.negative_sources is not None
        assert all(s.book_id != instance.book_id for s in instance.negative_sources)
        gold_numbers = label_values(candidate_heading(instance.gold))
        assert all(label_values(candidate_heading(c)) == gold_numbers for c in instance.candidates)


@needs_shared
def test_gpt2_tokenizer_matches_transformers_gpt2_tokenizer() -> None:
    import gzip

    from transformers import GPT2Tokenizer

    from longread.text.tokenizers import gpt2_files

    vocab, merges = gpt2_files()
    reference = GPT2Tokenizer(str(vocab), str(merges))
    with gzip.open(gutenberg_book(2554), "rt", encoding="utf-8-sig") as fh:
        text = fh.read()[50_000:80_000]
    text += " naïve café — “quoted” 日本語 😀  \n\n\n  trailing   "
    ours = load_tokenizer("gpt2").encode(text)
    assert ours.ids == reference.encode(text)
    # offsets cover the text: each token's characters decode back to the text
    assert ours.starts[0] == 0 and ours.ends[-1] == len(text)
    assert all(ours.starts[i + 1] >= ours.starts[i] for i in range(len(ours.ids) - 1))


@needs_shared
def test_an_out_of_book_build_parses_each_book_once_and_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second pass takes the books as the first pass read them (a missing book file and an excluded
    book among them); with nothing kept (every book read again) and with 2 workers, the same bytes."""
    from longread.benchmarks.chapterbreak import pipeline
    from longread.documents import corpus
    from longread.documents.reader import ReadOptions

    books = [gutenberg_book(i) for i in (84, 2852, 1342)]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    inputs = [*books, empty]
    reads: list[str] = []
    original = corpus.read_path

    def counting(path: Path, options: ReadOptions = ReadOptions()) -> object:
        reads.append(Path(path).name)
        return original(path, options)

    monkeypatch.setattr(corpus, "read_path", counting)
    options = BuildOptions(prefix_tokens=256, negatives_from="out-of-book")
    read_options = ReadOptions(exclude=(("2852", "remembered (test)"),))

    def build(name: str, workers: int = 1) -> pipeline.BuildReport:
        return build_chapterbreak(
            inputs, tmp_path / name, options, read_options=read_options, workers=workers, show_progress=False
        )

    once = build("once.jsonl")
    assert sorted(reads) == sorted(path.name for path in inputs)
    assert [s.book_id for s in once.excluded_books] == ["2852"]
    assert [s.label for s in once.skipped_books] == [str(empty)] and once.instances > 20
    monkeypatch.setattr(pipeline, "KEEP_BYTES", 0)
    reads.clear()
    twice = build("twice.jsonl")
    assert sorted(reads) == sorted([path.name for path in inputs] * 2)
    assert twice.summary_lines()[2:] == once.summary_lines()[2:]
    monkeypatch.undo()
    build("workers.jsonl", workers=2)
    assert _sha(tmp_path / "once.jsonl") == _sha(tmp_path / "twice.jsonl") == _sha(tmp_path / "workers.jsonl")
