"""Turn user-given paths (files, folders, archives) into a sorted stream of book sources.

A source is one file, or one member of a tar/zip archive (its bytes travel with it
so worker processes need not reopen the archive). Nothing is read beyond the
source currently handed out, so corpora of thousands of books stream in bounded memory.
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from longread.documents.bundled import is_bundled_name, resolve_bundled
from longread.errors import BadInputError

BOOK_SUFFIXES = (
    ".txt", ".txt.gz", ".txt.bz2", ".txt.zst",
    ".html", ".htm", ".epub",
    ".jsonl", ".jsonl.gz", ".jsonl.bz2", ".jsonl.zst",
)  # fmt: skip
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".zip")


@dataclass(frozen=True)
class Source:
    """One readable unit: a file on disk, or an archive member carried as bytes."""

    label: str  # what error messages and reports call it
    path: Path | None = None
    data: bytes | None = None
    kept: bool = False
    """``data`` is what an earlier pass read from this source (its books and errors, pickled by
    ``documents.corpus``), read again without parsing anything (``map_books(..., keep=True)``)."""


def is_book_file(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith(BOOK_SUFFIXES) and not lowered.rsplit("/", 1)[-1].startswith(".")


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES) and not name.lower().endswith(".epub")


def iter_sources(paths: Iterable[str | Path]) -> Iterator[Source]:
    """Every book source under the given paths, in a deterministic (sorted) order; ``bundled:`` names the
    novels shipped with longread (:mod:`longread.documents.bundled`).

    The paths are read in the order of their last names (code points, not a locale's collation; the whole
    path breaks ties), so the same books given in another order, by a shell glob sorted another way or
    from another folder give the same sources in the same order, and so byte-identical builds. A folder's
    files are sorted by their path within it."""
    for raw in sorted(paths, key=_path_order):
        if is_bundled_name(raw):
            yield from (Source(label=str(book), path=book) for book in resolve_bundled(raw))
            continue
        path = Path(raw)
        if path.is_dir():
            yield from _iter_folder(path)
        elif path.is_file():
            if is_archive(path.name):
                yield from _iter_archive(path)
            else:
                yield Source(label=str(path), path=path)
        else:
            raise BadInputError(path, "no such file or folder", "check the path")


def _path_order(raw: str | Path) -> tuple[str, str]:
    return Path(str(raw)).name, str(raw)


def _iter_folder(folder: Path) -> Iterator[Source]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    for file in files:
        relative = file.relative_to(folder).as_posix()
        if is_archive(file.name):
            yield from _iter_archive(file)
        elif is_book_file(relative):
            yield Source(label=str(file), path=file)


def _iter_archive(archive: Path) -> Iterator[Source]:
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in sorted(zf.infolist(), key=lambda i: i.filename):
                    if not info.is_dir() and is_book_file(info.filename):
                        yield Source(label=f"{archive}/{info.filename}", data=zf.read(info))
            return
        # A tar stream is read front to back; members are handed out in archive order
        # (sorted archives give sorted output — tar has no cheap random access).
        with tarfile.open(archive, "r:*") as tf:
            for member in tf:
                if member.isfile() and is_book_file(member.name):
                    handle = tf.extractfile(member)
                    if handle is not None:
                        yield Source(label=f"{archive}/{member.name}", data=handle.read())
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise BadInputError(
            archive, f"cannot read archive ({exc})", "check that it is a complete tar or zip file"
        ) from None
