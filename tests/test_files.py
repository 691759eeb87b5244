"""Reading a file, plain or compressed: each way it can fail is named as it is (missing, a folder, not
readable, corrupt), whether the whole file is read or only its head."""

from __future__ import annotations

import bz2
import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from longread.errors import BadInputError
from longread.files import read_bytes, read_head

READERS: dict[str, Callable[[Path], bytes]] = {
    "whole": read_bytes,
    "head": lambda path: read_head(path, 5),
}


@pytest.fixture(params=list(READERS), ids=list(READERS))
def read(request: pytest.FixtureRequest) -> Callable[[Path], bytes]:
    return READERS[request.param]


@pytest.mark.parametrize("name", ["book.txt", "book.txt.gz", "book.txt.bz2", "book.txt.zst"])
def test_a_missing_file_is_missing_not_corrupt(
    name: str, read: Callable[[Path], bytes], tmp_path: Path
) -> None:
    with pytest.raises(BadInputError, match="file not found") as caught:
        read(tmp_path / name)
    assert name in str(caught.value) and "corrupt" not in str(caught.value)


@pytest.mark.parametrize("name", ["books", "books.gz"])
def test_a_folder_is_named_as_one(name: str, read: Callable[[Path], bytes], tmp_path: Path) -> None:
    (tmp_path / name).mkdir()
    with pytest.raises(BadInputError, match="is a directory"):
        read(tmp_path / name)


@pytest.mark.parametrize("name", ["book.txt.gz", "book.txt.bz2", "book.txt.zst"])
def test_a_corrupt_compressed_file_is_corrupt(
    name: str, read: Callable[[Path], bytes], tmp_path: Path
) -> None:
    (tmp_path / name).write_bytes(b"this was never compressed " * 10)
    with pytest.raises(BadInputError, match="cannot decompress") as caught:
        read(tmp_path / name)
    assert name in str(caught.value)


@pytest.mark.parametrize(
    ("name", "pack"), [("a.txt", bytes), ("a.txt.gz", gzip.compress), ("a.txt.bz2", bz2.compress)]
)
def test_good_files_read_whole_and_by_head(name: str, pack: Callable[[bytes], bytes], tmp_path: Path) -> None:
    (tmp_path / name).write_bytes(pack(b"Chapter 1. It was a dark night."))
    assert read_bytes(tmp_path / name) == b"Chapter 1. It was a dark night."
    assert read_head(tmp_path / name, 9) == b"Chapter 1"
