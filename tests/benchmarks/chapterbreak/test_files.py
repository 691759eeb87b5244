"""ChapterBreak files: the official layout both ways, the CLI, bad input, atomic output."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.official import (
    read_official,
    to_official,
    write_official,
    write_official_by_length,
)
from longread.cli.app import app
from longread.documents.bundled import resolve_bundled
from longread.errors import BadInputError
from longread.files import atomic_write_text, atomic_writer
from tests.helpers import gutenberg_book, needs_shared, synthetic_book

runner = CliRunner()


def test_longread_to_official_and_back_keeps_every_instance(tmp_path: Path) -> None:
    instances = build_book(synthetic_book(12), BuildOptions(prefix_tokens=256)).instances
    write_official(instances, tmp_path / "official.json")
    back = read_official(tmp_path / "official.json")
    assert [(x.prefix, x.gold, x.negatives, x.split, x.book_id) for x in back] == [
        (x.prefix, x.gold, x.negatives, x.split, x.book_id) for x in instances
    ]
    assert back[0].prefix_tokens == instances[0].prefix_tokens


@needs_shared
def test_official_files_per_prefix_length_read_back_as_the_same_instances(tmp_path: Path) -> None:
    from longread.documents.reader import read_book
    from longread.text.tokenizers import load_tokenizer

    instances = build_book(read_book(gutenberg_book(2852)), BuildOptions(prefix_tokens=1024)).instances
    paths = write_official_by_length(instances, tmp_path, [1024, 256, 64])
    assert [p.name for p in paths] == [f"chapterbreak_ctx_{n}.json" for n in (64, 256, 1024)]
    tokenizer = load_tokenizer("gpt2")
    for path, length in zip(paths, (64, 256, 1024), strict=True):
        back = read_official(path)
        assert [(x.gold, x.negatives, x.book_id) for x in back] == [
            (x.gold, x.negatives, x.book_id) for x in instances
        ]
        for ours, theirs in zip(instances, back, strict=True):
            assert ours.prefix.endswith(theirs.prefix)  # cut from the left
            if ours.prefix_tokens <= length:
                assert theirs.prefix == ours.prefix
            else:
                # the cut lands on a token boundary: at most ``length`` tokens, one less on a merge
                assert length - 1 <= tokenizer.count(theirs.prefix) <= length
        # and the published layout round-trips: exporting what was read gives the same file
        write_official(back, tmp_path / "again.json")
        assert (tmp_path / "again.json").read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_convert_cli_writes_one_official_file_per_prefix_length(tmp_path: Path) -> None:
    source = tmp_path / "set.jsonl"
    write_instances(build_book(synthetic_book(10), BuildOptions(prefix_tokens=512)).instances, source)
    out = tmp_path / "official"
    command = ["convert", "chapterbreak", str(source), "--to", "official", "--out", str(out)]
    result = runner.invoke(app, [*command, "--prefix-lengths", "512,128"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["chapterbreak_ctx_128.json", "chapterbreak_ctx_512.json"]
    bad = runner.invoke(app, [*command, "--prefix-lengths", "0"])
    assert bad.exit_code != 0 and "positive" in bad.output


texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=25, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["pg19", "ao3"]),
        st.dictionaries(
            st.text(alphabet="abc123", min_size=1, max_size=5),
            st.lists(
                st.fixed_dictionaries({"ctx": texts, "pos": texts, "negs": st.lists(texts, max_size=5)}),
                max_size=3,
            ),
            max_size=3,
        ),
        min_size=1,
    )
)
def test_official_to_longread_and_back_is_identity(
    tmp_path_factory: pytest.TempPathFactory, layout: dict
) -> None:  # type: ignore[type-arg]
    assume(any(examples for works in layout.values() for examples in works.values()))
    folder = tmp_path_factory.mktemp("official")
    source = folder / "ctx.json"
    source.write_text(json.dumps(layout), encoding="utf-8")
    ours = folder / "ours.jsonl"
    write_instances(read_official(source), ours)
    expected = {split: works for split, works in layout.items() if any(works.values())}
    expected = {s: {w: ex for w, ex in works.items() if ex} for s, works in expected.items()}
    assert to_official(load_instances(ours)) == expected


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"pg19": {"1": [{"ctx": "a", "pos": "b"}]}}', "lacks negs"),
        ('{"pg19": {"1": [{"ctx": "a", "pos": "b", "negs": ', "not valid JSON"),
        ('{"train": []}', "expected an object with 'pg19'"),
        ('{"pg19": {"1": [{"ctx": 3, "pos": "b", "negs": []}]}}', "must be strings"),
    ],
)
def test_malformed_official_files_name_the_file_and_problem(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(BadInputError) as info:
        read_official(path)
    assert problem in str(info.value)
    assert str(path) in str(info.value)


def test_wrong_schema_file_is_refused_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "a"}\n')
    with pytest.raises(BadInputError, match=r"x.jsonl, line 1: not a ChapterBreak instance"):
        load_instances(path)


def test_atomic_writer_leaves_old_file_when_interrupted(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    atomic_write_text(target, "old\n")
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write("half")
        raise RuntimeError("crash")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


@needs_shared
def test_build_cli_skips_bad_books_reports_them_and_strict_fails(tmp_path: Path) -> None:
    corpus = tmp_path / "books"
    corpus.mkdir()
    (corpus / "empty.txt").write_text("")
    (corpus / "binary.txt").write_bytes(b"\x00\x01\x02" * 100)
    (corpus / "latin.txt").write_bytes("caf\xe9 ".encode("latin-1") * 50)
    (corpus / "nochapters.txt").write_text("Just some prose without any heading at all.\n\n" * 200)
    (corpus / "pg84.txt.gz").write_bytes(gutenberg_book(84).read_bytes())
    out = tmp_path / "cb.jsonl"
    result = runner.invoke(
        app, ["build", "chapterbreak", "--books", str(corpus), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert "skipped books (4)" in result.output
    for name, reason in [
        ("empty.txt", "empty"),
        ("binary.txt", "binary"),
        ("latin.txt", "not valid UTF-8"),
        ("nochapters.txt", "chapter"),
    ]:
        line = next(line for line in result.output.splitlines() if name in line)
        assert reason in line, line
    assert out.exists() and load_instances(out)

    strict_out = tmp_path / "strict.jsonl"
    result = runner.invoke(
        app,
        ["build", "chapterbreak", "--books", str(corpus), "--out", str(strict_out), "--strict", "--quiet"],
    )
    assert result.exit_code == 2
    assert "--strict" in result.output
    assert not strict_out.exists()


@pytest.mark.parametrize("negatives_from", ["in-book", "out-of-book"])
def test_a_book_given_twice_is_built_once_and_the_repeat_is_named(
    tmp_path: Path, negatives_from: str
) -> None:
    """The same file twice (``bundled:`` holds pg84) and a copy of it in another folder: one book's
    instances, each id once, and both repeats named in the report (out-of-book builds read twice)."""
    copy = tmp_path / "copies" / "frankenstein.txt.gz"
    copy.parent.mkdir()
    copy.write_bytes(resolve_bundled("bundled:pg84")[0].read_bytes())
    out, alone = tmp_path / "twice.jsonl", tmp_path / "once.jsonl"
    common = ["--prefix-tokens", "256", "--negatives-from", negatives_from, "--quiet"]
    result = runner.invoke(
        app, ["build", "chapterbreak", "bundled:pg84", str(copy), "bundled:", "--out", str(out), *common]
    )
    assert result.exit_code == 0, result.output
    once = runner.invoke(app, ["build", "chapterbreak", "bundled:", "--out", str(alone), *common])
    assert once.exit_code == 0, once.output
    ids = [instance.id for instance in load_instances(out)]
    assert len(ids) == len(set(ids)) and ids
    assert out.read_bytes() == alone.read_bytes()
    repeats = [line for line in result.output.splitlines() if "book 84 left out" in line]
    assert len(repeats) == 2, result.output
    assert any("this file was read already" in line for line in repeats)
    first_read = f"{copy}: book 84 left out: a book with this id was read already from"
    assert any(first_read in line for line in repeats)


@needs_shared
def test_stats_and_convert_cli(tmp_path: Path) -> None:
    out = tmp_path / "cb.jsonl"
    result = runner.invoke(
        app,
        [
            "build",
            "chapterbreak",
            "--books",
            str(gutenberg_book(84)),
            "--out",
            str(out),
            "--quiet",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    stats = runner.invoke(app, ["stats", str(out)])
    assert stats.exit_code == 0, stats.output
    assert "| works | 1 |" in stats.output
    assert "examples: chapter" in stats.output
    official = tmp_path / "official.json"
    assert (
        runner.invoke(
            app, ["convert", "chapterbreak", str(out), "--to", "official", "--out", str(official)]
        ).exit_code
        == 0
    )
    back = tmp_path / "back.jsonl"
    assert (
        runner.invoke(
            app, ["convert", "chapterbreak", str(official), "--to", "longread", "--out", str(back)]
        ).exit_code
        == 0
    )
    assert [x.gold for x in load_instances(back)] == [x.gold for x in load_instances(out)]


def test_compressed_official_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ctx.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump({"ao3": {"w": [{"ctx": "c", "pos": "p", "negs": ["n"]}]}}, fh)
    assert read_official(path)[0].split == "ao3"


def test_input_errors_survive_the_trip_from_a_worker_process() -> None:
    import pickle

    from longread.errors import NoChaptersError

    error = NoChaptersError("book.txt", "no chapter headings found", "give --heading-pattern", line=3)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is NoChaptersError
    assert str(copy) == str(error)


@needs_shared
@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_books_inside_archives_are_read_as_a_stream(tmp_path: Path, kind: str) -> None:
    import tarfile
    import zipfile

    from longread.documents.corpus import iter_books

    names = ["pg84.txt.gz", "pg2852.txt.gz"]
    archive = tmp_path / f"books.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            for name in names:
                zf.write(gutenberg_book(int(name[2:-7])), arcname=f"corpus/{name}")
            zf.writestr("corpus/empty.txt", "")
    else:
        with tarfile.open(archive, "w:gz") as tf:
            for name in names:
                tf.add(gutenberg_book(int(name[2:-7])), arcname=f"corpus/{name}")
    items = list(iter_books([archive], workers=2))
    books = [item for item in items if not isinstance(item, BadInputError)]
    # zip members come sorted by name; a tar stream comes in archive order
    assert [book.id for book in books] == (["2852", "84"] if kind == "zip" else ["84", "2852"])
    assert all(book.source.startswith(str(archive)) for book in books)
    if kind == "zip":
        errors = [item for item in items if isinstance(item, BadInputError)]
        assert len(errors) == 1 and "corpus/empty.txt" in str(errors[0])


@needs_shared
def test_top_level_entry_points() -> None:
    import longread

    book = longread.read_book(gutenberg_book(84))
    assert book.chapters[0].heading and book.chapters[0].text
    books = list(longread.read_books([gutenberg_book(84), gutenberg_book(2852)]))
    assert [b.id for b in books if isinstance(b, longread.Book)] == ["2852", "84"]  # sorted by file name
