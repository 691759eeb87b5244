"""File plumbing shared by every layer: compressed inputs, careful decoding, atomic outputs."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import math
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from longread.errors import BadInputError

COMPRESSED_SUFFIXES = (".gz", ".bz2", ".zst")
# A line longer than this is not prose that a human wrapped; it is a sign of a binary or a dump.
MAX_LINE_CHARS = 1_000_000
_DECLARED_ENCODING = re.compile(rb"Character set encoding:\s*([A-Za-z0-9_\-]+)", re.IGNORECASE)


def finite_or_none(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with every NaN or infinite float made None, so that JSON holds only what it can read."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in values.items()}


def strip_compression_suffix(name: str) -> str:
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, decompressed according to its suffix (.gz, .bz2, .zst)."""
    path = Path(path)
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return fh.read()
        if path.name.endswith(".bz2"):
            return bz2.decompress(path.read_bytes())
        if path.name.endswith(".zst"):
            import zstandard

            with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as reader:
                return reader.read()
        return path.read_bytes()
    except Exception as exc:
        raise _unreadable(path, exc) from None


def read_head(path: str | Path, size: int) -> bytes:
    """The first ``size`` decompressed bytes, without reading the rest (for sniffing a format)."""
    path = Path(path)
    if path.name.endswith(".zst"):
        return read_bytes(path)[:size]
    try:
        if path.name.endswith((".gz", ".bz2")):
            opener = gzip.open if path.name.endswith(".gz") else bz2.open
            with opener(path, "rb") as fh:
                return fh.read(size)
        with path.open("rb") as fh:
            return fh.read(size)
    except Exception as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: Path, exc: Exception) -> BadInputError:
    """Why ``path`` could not be read, for a person: missing, a folder, not readable, or corrupt."""
    if isinstance(exc, FileNotFoundError):
        return BadInputError(path, "file not found", "check the path")
    if isinstance(exc, IsADirectoryError):
        return BadInputError(path, "is a directory, not a file", "pass the files inside it")
    if isinstance(exc, PermissionError):
        return BadInputError(path, f"cannot be read ({exc.strerror})", "check the file's permissions")
    if path.name.endswith(COMPRESSED_SUFFIXES):  # zstandard raises an error type of its own
        return BadInputError(
            path,
            f"cannot decompress this {path.suffix} ({exc})",
            "the file is corrupt or not of its suffix's format",
        )
    return BadInputError(path, f"cannot be read ({type(exc).__name__}: {exc})", "check the file")


def decode_text(
    data: bytes, path: str | Path, encoding: str | None = None, *, max_line_chars: int | None = MAX_LINE_CHARS
) -> str:
    """Decode a text file's bytes, refusing empty and binary files with a clear message.

    UTF-8 (with or without BOM) is tried first; a Gutenberg header that declares
    another charset is honoured. Undecodable bytes are an error that names the
    offset, never silently replaced.
    """
    if not data.strip():
        raise BadInputError(path, "file is empty", "remove it from the input or give a file with text")
    sample = data[:65536]
    if b"\x00" in sample:
        raise BadInputError(
            path, "binary file (contains NUL bytes), not text", "pass text, HTML or EPUB files"
        )
    if encoding is None:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            declared = _DECLARED_ENCODING.search(data[:20000])
            if declared is None:
                line = data[: exc.start].count(b"\n") + 1
                raise BadInputError(
                    path,
                    f"bytes at offset {exc.start} are not valid UTF-8 ({data[exc.start : exc.start + 4]!r})",
                    "give the encoding explicitly (--encoding latin-1, cp1252 …) or re-encode the file",
                    line=line,
                ) from None
            encoding = declared.group(1).decode("ascii")
            text = _decode_with(data, path, encoding)
    else:
        text = _decode_with(data, path, encoding)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if max_line_chars is not None:
        _check_line_lengths(text, path, max_line_chars)
    return text


def _decode_with(data: bytes, path: str | Path, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except LookupError:
        raise BadInputError(path, f"unknown text encoding {encoding!r}", "name a Python codec") from None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInputError(
            path,
            f"bytes at offset {exc.start} are not valid {encoding}",
            "give the right encoding with --encoding",
            line=line,
        ) from None


def _check_line_lengths(text: str, path: str | Path, max_line_chars: int) -> None:
    if len(text) <= max_line_chars:
        return
    start = 0
    line_no = 1
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if end - start > max_line_chars:
            raise BadInputError(
                path,
                f"absurdly long line ({end - start:,} characters without a line break)",
                "this is not line-based prose; check that it is the right file",
                line=line_no,
            )
        start = end + 1
        line_no += 1


def read_text(
    path: str | Path, encoding: str | None = None, *, max_line_chars: int | None = MAX_LINE_CHARS
) -> str:
    """Read and decode a (possibly compressed) text file; CRLF/CR become LF and a BOM is dropped.

    ``max_line_chars=None`` for formats whose lines are records, not prose (JSON, JSONL).
    """
    return decode_text(read_bytes(path), path, encoding, max_line_chars=max_line_chars)


def file_mode() -> int:
    """The mode a newly created file gets here (0o666 minus the umask): ``mkstemp``'s 0o600 would hide
    built data and run results from the other users of a shared machine."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[str]]:
    """Write to a temporary file beside ``path`` and rename it into place only on success.

    A crash leaves either the old file or nothing, never a half-written file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        text = "b" not in mode
        with open(fd, mode, encoding="utf-8" if text else None, newline="\n" if text else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_writer(path) as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Bytes written as they are (no newline translation), atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, "wb") as fh:
        fh.write(data)  # type: ignore[arg-type]


def atomic_save_png(figure: Any, path: Path) -> Path:
    """Save a matplotlib figure as PNG atomically (a hidden partial file, then a rename); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp")
    try:
        figure.savefig(partial, format="png")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
