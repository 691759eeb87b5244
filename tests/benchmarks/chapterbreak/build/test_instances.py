"""ChapterBreak instances are labelled by the collection their book came from (split and id)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.official import read_official, write_official
from longread.documents.reader import read_book
from tests.helpers import gutenberg_book, needs_shared

OPTIONS = BuildOptions(prefix_tokens=256)


@needs_shared
def test_a_gutenberg_file_gives_gutenberg_instances_and_a_pg19_file_pg19_ones(tmp_path: Path) -> None:
    gutenberg = read_book(gutenberg_book(84))  # Frankenstein, a Project Gutenberg file of the shared corpus
    built = build_book(gutenberg, OPTIONS).instances
    assert built
    assert {instance.split for instance in built} == {"gutenberg"}
    assert all(instance.id.startswith("gutenberg/84/chapter/") for instance in built)

    # The same text as a file of a PG-19 split folder (PG-19's layout: split folders + metadata.csv).
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "84.txt").write_text(gutenberg.render()[0], encoding="utf-8")
    with (tmp_path / "metadata.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerow(["84", gutenberg.title, "1818", "http://www.gutenberg.org/ebooks/84"])
    pg19 = build_book(read_book(tmp_path / "test" / "84.txt"), OPTIONS).instances
    assert pg19
    assert {instance.split for instance in pg19} == {"pg19"}
    assert all(instance.id.startswith("pg19/84/chapter/") for instance in pg19)

    # The official layout knows only pg19 and ao3: a Gutenberg book is exported under pg19.
    path = tmp_path / "official.json"
    write_official(built, path)
    assert list(json.loads(path.read_text(encoding="utf-8"))) == ["pg19"]
    assert [instance.gold for instance in read_official(path)] == [instance.gold for instance in built]
