"""``longread probe memory``: the probes tell a model that remembers a book from one that does not.

The control is made here: two tiny GPT-2 models of one architecture, one trained until it reproduces
an excerpt of *Pride and Prejudice* as printed (headings included), the other until it reproduces an
excerpt of *Frankenstein*. Each model must call its own book remembered and the other one not, by
extraction (greedy continuations equal to the book, the chapter heading at a break) and min-k% (its own
book's least likely tokens are likelier). The passage rules of the name cloze and the places of
extraction are tested on their own; the cloze's scoring and the ranked cloze in ``test_cloze.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from longread.cli.app import app
from longread.documents.book import Book, Chapter
from longread.documents.reader import read_book
from longread.models.hf.backend import HFBackend
from longread.models.hf.loading import load_random
from longread.probes.memory import MemoryProbeSettings, probe_memory, write_memory
from longread.probes.memory.passages import (
    GENERIC_NAMES,
    booknlp_tokens,
    cloze_passages,
    sentences,
    single_name,
    spacy_entities,
)
from longread.probes.memory.places import chapter_places, seeded_places
from longread.probes.tokens import ProbeSettingsError
from tests.helpers import REPO_ROOT, unboxed
from tests.probes.trained import train_tiny_gpt2

BOOKS = REPO_ROOT / "src" / "longread" / "data" / "books"
WINDOW = 24
SETTINGS = MemoryProbeSettings(
    passages=80, prompt_tokens=12, new_tokens=12, min_words=15, max_words=60, probes=("extraction", "min-k")
)
"""80 places: with none continued exactly, the Wilson upper bound (0.044) rules out the rule's 0.05."""


def _excerpt(path: Path, book_id: str, words: int) -> Book:
    """The first ``words`` words of a bundled novel's second and third chapters, as a two-chapter book."""
    source = read_book(path)
    chapters = tuple(
        Chapter(f"CHAPTER {n}.", " ".join(chapter.text.split()[:words]))
        for n, chapter in enumerate(source.chapters[1:3], 1)
    )
    return Book(book_id, source.title, source.author, "en", str(path), chapters)


def _memorised(book: Book, name: str) -> HFBackend:
    """A tiny GPT-2 trained on windows of the printed book until it reproduces them (seeded; ~20 s): it
    stops at a batch loss under 0.2, enough for extraction 0.71-0.86 on its own book (0.4 is asserted).

    Random 24-token windows, as a real model sees a book inside longer sequences: trained on the whole
    text from position 0 alone, a tiny model with absolute positions would learn positions, not text.
    """
    return train_tiny_gpt2([book.render()[0]], name, steps=300, window=WINDOW, stop_loss=0.2)


@pytest.fixture(scope="module")
def books() -> tuple[Book, Book]:
    return _excerpt(BOOKS / "pg1342.txt.gz", "pride", 60), _excerpt(BOOKS / "pg84.txt.gz", "frankenstein", 60)


@pytest.fixture(scope="module")
def models(books: tuple[Book, Book]) -> tuple[HFBackend, HFBackend]:
    return _memorised(books[0], "knows-pride"), _memorised(books[1], "knows-frankenstein")


def test_each_model_remembers_its_own_book_and_not_the_other(
    books: tuple[Book, Book], models: tuple[HFBackend, HFBackend], tmp_path: Path
) -> None:
    for model, own in zip(models, books, strict=True):
        items, summaries = probe_memory(model, list(books), SETTINGS)
        verdicts = {summary.book: summary for summary in summaries}
        other = next(book for book in books if book is not own)
        assert verdicts[own.id].remembered is True and verdicts[other.id].remembered is False, model.name
        assert verdicts[own.id].scores["extraction_exact"]["value"] >= 0.4  # the rule asks 0.05
        assert verdicts[other.id].scores["extraction_exact"]["value"] == 0.0
        assert verdicts[own.id].scores["min_k"]["value"] > verdicts[other.id].scores["min_k"]["value"] + 5.0
        extraction = [line for line in items if line["probe"] == "extraction"]
        assert all(len(line["truth_ids"]) == len(line["output_ids"]) == 12 for line in extraction)
        assert {line["place"] for line in extraction} == {"seeded", "chapter break"}
        for at_break in [line for line in extraction if line["place"] == "chapter break"]:
            truth = model.encoder.tokenizer.decode(at_break["truth_ids"])
            assert truth.lstrip().startswith("CHAPTER 2."), truth  # the break continues into the heading
            if at_break["book"] == own.id:
                said = model.encoder.tokenizer.decode(at_break["output_ids"])
                assert "CHAPTER 2." in said, said  # the model that read the headings reproduces it
    markdown = write_memory(tmp_path / "out", items, summaries, SETTINGS, models[1].describe())
    books_json = json.loads((tmp_path / "out" / "books.json").read_text())
    assert [book["remembered"] for book in books_json["books"]] == [False, True]
    ruled_out = books_json["books"][0]["clauses"]
    assert [(c["score"], c["status"]) for c in ruled_out] == [("cloze", "not measured"),
                                                              ("extraction_exact", "ruled out")]  # fmt: skip
    assert (
        "| frankenstein |" in markdown.read_text()
        and (tmp_path / "out" / "memory.png").stat().st_size > 5_000
    )
    lines = [json.loads(line) for line in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert {line["probe"] for line in lines} >= {"extraction", "min_k"} and all(
        "book" in line for line in lines
    )
    again, _ = probe_memory(models[1], [books[1]], SETTINGS)  # each book is drawn from its own id's seed
    assert again == [item for item in items if item["book"] == books[1].id]  # the same passages and outputs


def test_a_cloze_passage_holds_one_name_once_and_no_other() -> None:
    one = "She looked up at last. “I cannot say,” replied Elizabeth, and she turned to the window."
    assert single_name(one, [("Elizabeth", "PERSON")]) == "Elizabeth"
    assert (
        single_name("Then Mrs. Bennet sat down and wept for an hour.", [("Mrs. Bennet", "PERSON")])
        == "Bennet"
    )
    twice = "Elizabeth smiled. It was Elizabeth who spoke first, and she spoke well."
    assert single_name(twice, [("Elizabeth", "PERSON")]) is None  # the mask could be read off the passage
    two = "Elizabeth smiled at Jane, and the evening went on."
    assert single_name(two, [("Elizabeth", "PERSON"), ("Jane", "PERSON")]) is None
    missed = (
        "Elizabeth smiled at Jane, and the evening went on."  # NER found one; the capital finds the other
    )
    assert single_name(missed, [("Elizabeth", "PERSON")]) is None
    place = "Elizabeth walked to Meryton."
    assert single_name(place, [("Elizabeth", "PERSON"), ("Meryton", "GPE")]) is None
    opener = "Darcy was silent. He looked at Elizabeth for a while."  # a sentence opened by another name
    assert single_name(opener, [("Elizabeth", "PERSON")], ordinary={"he", "was", "silent"}) is None
    assert sentences("He saw Mr. Darcy. Then J. Smith came!") == [
        (0, "He saw Mr. Darcy."),
        (18, "Then J. Smith came!"),
    ]


def test_real_cloze_passages_follow_the_authors_rules() -> None:
    """Chang et al.'s passages: 40-60 tokens as BookNLP counts them, one name once, no generic name."""
    book = read_book(BOOKS / "pg1342.txt.gz")
    found = cloze_passages(book, 12, 0, spacy_entities())
    assert len(found.passages) + found.without == 12 and len(found.passages) >= 6
    for item in found.passages:
        assert item.masked.count("[MASK]") == 1 and item.name not in item.masked.replace("[MASK]", "")
        assert 40 <= booknlp_tokens(item.passage.text) <= 60 and item.name.lower() not in GENERIC_NAMES
    assert found == cloze_passages(book, 12, 0, spacy_entities())
    names = [name for name, _ in found.names]
    assert {"Elizabeth", "Darcy", "Bennet"} <= set(names[:10])  # the most frequent person names first
    assert [count for _, count in found.names] == sorted((count for _, count in found.names), reverse=True)
    assert (
        booknlp_tokens("“Don't,” said Mr. Darcy's sister.") == 11
    )  # “ Do n't , ” said Mr . Darcy 's sister .
    assert single_name("Then Mother sat down by the fire and wept.", [("Mother", "PERSON")]) is None


def test_places_leave_room_and_breaks_near_an_end_are_counted(books: tuple[Book, Book]) -> None:
    places = seeded_places(100, 30, 20, 10, 0, "x")
    assert len(places) == 10 and all(30 <= p <= 80 for p in places) and places == sorted(places)
    assert (
        seeded_places(40, 30, 20, 10, 0, "x") == []
    )  # too short for one place: none, and the caller says so
    model = load_random("gpt2")
    encoder = HFBackend(model, spec="random:gpt2").encoder
    text = books[0].render()[0]
    ids = encoder.encode_plain(text)
    n_ids = len(ids)
    breaks, too_near = chapter_places(books[0], encoder, text, 12, 12, ids)
    assert len(breaks) == 1 and too_near == 0
    before = encoder.tokenizer.decode(ids[: breaks[0].position])
    after = encoder.tokenizer.decode(ids[breaks[0].position :])
    assert before.endswith(books[0].chapters[0].text.strip()[-30:])  # the first chapter's last words …
    assert after.lstrip().startswith("CHAPTER 2.\n\n" + books[0].chapters[1].text[:20])  # … then as printed
    late, near = chapter_places(books[0], encoder, text, 12, n_ids, ids)  # M longer than what is left
    assert late == [] and near == 1


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ProbeSettingsError, match="--probes takes cloze, cloze-rank, extraction, min-k"):
        MemoryProbeSettings(probes=("recall",))
    with pytest.raises(ProbeSettingsError, match="is not SCORE>=VALUE"):
        MemoryProbeSettings(rule="cloze>0.3")
    with pytest.raises(ProbeSettingsError, match="--min-k-percent"):
        MemoryProbeSettings(min_k_percent=0)


def test_the_command_refuses_a_bad_rule_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "longread.cli", "probe", "memory", str(BOOKS / "pg84.txt.gz"), "--model",
               "smollm2", "--out", str(out), "--remembered", "cloze>0.3"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    message = unboxed(done.stderr)
    assert done.returncode != 0 and "'cloze>0.3' is not SCORE>=VALUE" in message and not out.exists()


def test_pieces_join_where_they_overlap_and_agree_and_stay_apart_otherwise() -> None:
    from longread.benchmarks.chapterbreak.excerpts import merged_pieces

    text = "abcdefghijklmnopqrstuvwxyz"
    spans = [(0, text[0:10]), (5, text[5:15]), (15, text[15:18]), (20, text[20:26]), (22, "XXXX")]
    assert merged_pieces(spans) == [text[0:18], text[20:26], "XXXX"]
    assert merged_pieces([(3, text[3:9]), (0, text[0:12]), (3, text[3:9])]) == [text[0:12]]


def test_built_chapterbreak_data_is_probed_on_its_prefixes_and_at_its_breaks(
    models: tuple[HFBackend, HFBackend], tmp_path: Path
) -> None:
    """`probe memory --data FILE`: the file's books, its prefixes as the text, extraction at each break
    it asks about (once however many variants ask it): the prefix's last N tokens, the gold's first M."""
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.benchmarks.chapterbreak.excerpts import chapterbreak_excerpts
    from longread.benchmarks.chapterbreak.io import write_instances

    instances = build_book(read_book(BOOKS / "pg84.txt.gz"), BuildOptions(prefix_tokens=96, suffix_tokens=24))
    instances = instances.instances[:6]
    data = tmp_path / "cb.jsonl"
    write_instances([*instances, *instances], data)  # a second variant of every boundary
    (excerpts,) = chapterbreak_excerpts(data)
    assert excerpts.book.id == "84" and len(excerpts.breaks) == len(instances) == 6
    pieces = [chapter.text for chapter in excerpts.book.chapters]
    assert all(any(i.prefix in piece for piece in pieces) for i in instances)
    assert sum(len(piece) for piece in pieces) <= sum(len(i.prefix) for i in instances)

    model = models[1]
    settings = MemoryProbeSettings(passages=3, probes=("extraction",), prompt_tokens=40, new_tokens=12)
    items, (summary,) = probe_memory(model, [excerpts], settings)
    assert summary.notes == [], summary.notes  # every break has 40 tokens before and 12 after
    at_breaks = [item for item in items if item["place"] == "benchmark break"]
    encode = model.encoder.encode_plain
    asked = [i for i in instances if len(encode(i.prefix)) >= 40 and len(encode(i.gold)) >= 12]
    assert len(at_breaks) == len(asked) == 6
    for item, instance in zip(at_breaks, asked, strict=True):
        assert item["prompt_ids"] == encode(instance.prefix)[-40:]
        assert item["truth_ids"] == encode(instance.gold)[:12]
    assert {item["book"] for item in items} == {"84"}
    _, (long_prompts,) = probe_memory(model, [excerpts], MemoryProbeSettings(
        passages=1, probes=("extraction",), prompt_tokens=5000, new_tokens=12))  # fmt: skip
    assert any("6 benchmark break(s) with fewer than 5000 tokens before" in n for n in long_prompts.notes)


def test_places_are_seeded_by_the_whole_book_id() -> None:
    """Two ids alike in their first characters get places of their own (the seed hashes all of the id)."""
    first = seeded_places(100_000, 10, 10, 20, 0, "gutenberg-1342")
    assert first != seeded_places(100_000, 10, 10, 20, 0, "gutenberg-1343")
    assert first == seeded_places(100_000, 10, 10, 20, 0, "gutenberg-1342")
    assert first != seeded_places(100_000, 10, 10, 20, 1, "gutenberg-1342")


def test_places_in_built_data_lie_inside_one_excerpt() -> None:
    ends = [100, 130, 300]  # three excerpts; a place needs 10 tokens of its own excerpt before and after
    places = seeded_places(300, 10, 10, 40, 0, "b", ends)
    assert len(places) == 40 and places == sorted(places)
    assert all(10 <= p <= 90 or 110 <= p <= 120 or 140 <= p <= 290 for p in places)
    assert seeded_places(300, 10, 10, 40, 0, "b") == seeded_places(300, 10, 10, 40, 0, "b", [300])


def test_books_are_given_as_build_takes_them(tmp_path: Path) -> None:
    """`--books` takes files, folders and `bundled:` names, as `build` does (a tiny random model: only
    the reading of the books is under test here)."""
    folder = tmp_path / "books"
    folder.mkdir()
    for name in ("pg84.txt.gz", "pg120.txt.gz"):
        (folder / name).write_bytes((BOOKS / name).read_bytes())
    out = tmp_path / "out"
    arguments = ["probe", "memory", "--books", str(folder), "--books", "bundled:pg1342", "--books",
                 "bundled:pg84", "--model",
                 "random:gpt2", "--out", str(out), "--probes", "extraction", "--passages", "2",
                 "--prompt-tokens", "8", "--new-tokens", "4", "--quiet"]  # fmt: skip
    done = CliRunner().invoke(app, arguments)  # in this process (the command as a process: above)
    assert done.exit_code == 0, (done.output[-3000:], done.exception)
    probed = [book["book"] for book in json.loads((out / "books.json").read_text())["books"]]
    assert sorted(probed) == ["120", "1342", "84"]  # pg84, given twice, once
    said = unboxed(done.output)
    first = folder / "pg84.txt.gz"
    assert f"book 84 left out: a book with this id was read already from {first}" in said, said
    both = CliRunner().invoke(app, [*arguments[:-1], "--data", str(folder / "pg84.txt.gz")])
    said = unboxed(both.output)
    assert both.exit_code == 2 and "not both and not neither" in said


def test_an_interrupted_probe_resumes_at_the_next_book_and_refuses_other_settings(tmp_path: Path) -> None:
    """Each book is kept in ``finished-books.jsonl`` as it finishes: a probe stopped after two of three
    books (its last line lost, and half a line left) probes only the third again and writes the items of
    an uninterrupted probe; other settings in the same folder are refused, naming what differs (a tiny
    random model: only the bookkeeping is under test here)."""
    out = tmp_path / "out"
    arguments = ["probe", "memory", "bundled:pg84", "bundled:pg120", "bundled:pg1342", "--model",
                 "random:gpt2", "--out", str(out), "--probes", "extraction,min-k", "--passages", "2",
                 "--prompt-tokens", "8", "--new-tokens", "4", "--quiet"]  # fmt: skip
    first = CliRunner().invoke(app, arguments)
    assert first.exit_code == 0, (first.output[-3000:], first.exception)
    whole = (out / "items.jsonl").read_bytes()
    journal = out / "finished-books.jsonl"
    rows = journal.read_bytes().splitlines(keepends=True)
    assert [json.loads(row)["book"] for row in rows] == ["120", "1342", "84"]  # the names' sorted order
    journal.write_bytes(b"".join(rows[:2]) + rows[2][:40])  # killed while writing the third book
    (out / "items.jsonl").unlink()
    again = CliRunner().invoke(app, arguments)
    assert again.exit_code == 0, (again.output[-3000:], again.exception)
    assert "resuming: 2 of 3 books already probed" in again.output
    assert (out / "items.jsonl").read_bytes() == whole
    assert journal.read_bytes().splitlines(keepends=True)[:2] == rows[:2]
    assert len(journal.read_bytes().splitlines()) == 3
    other = CliRunner().invoke(app, [*arguments[:-6], "3", *arguments[-5:]])  # 3 passages, not 2
    said = unboxed(other.output)
    assert other.exit_code != 0 and "other settings or another model" in said and "settings.passages" in said
