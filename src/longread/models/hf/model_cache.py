"""The on-disk model cache: where it lives, and how a folder in it is written and trusted.

Rule: a cache folder is built in a temporary folder next to it and renamed into place
atomically, with a marker (``CACHE_MARKER``) listing every file and its size; a folder
whose marker is missing, of another ``CACHE_FORMAT``, or disagrees with the files on
disk is incomplete and gets rebuilt, as does one that fails to load.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from longread.models.errors import ModelLoadError

logger = logging.getLogger(__name__)

CACHE_MARKER = "longread-cache.json"
CACHE_FORMAT = 2  # 2: config.json without the GGUF quantization_config

_Loaded = TypeVar("_Loaded")


def cache_root() -> Path:
    """``$LONGREAD_CACHE``, else ``$XDG_CACHE_HOME/longread``, else ``~/.cache/longread``."""
    explicit = os.environ.get("LONGREAD_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "longread"


FINGERPRINTS = "fingerprints.json"
"""Content digests already computed, by file (path, size, mtime): each file is hashed once per install."""


def _file_fingerprint(paths: list[Path]) -> str:
    """The weights' identity: their contents alone (not their names, nor where or when they were
    installed), so the same model in two environments — the project's and the presses' — or a GGUF copied
    under another name has one fingerprint and one converted folder. (Before, the files'
    names were part of it: a run made then names another fingerprint, and resuming it is refused.)"""
    digest = hashlib.sha256()
    for content in sorted(_content_digest(path) for path in paths):
        digest.update(f"{content}\n".encode())
    return digest.hexdigest()[:16]


def _content_digest(path: Path) -> str:
    stat = path.stat()
    key = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    memo_path = cache_root() / FINGERPRINTS
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    if isinstance(memo, dict) and isinstance(memo.get(key), str):
        return str(memo[key])
    content = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            content.update(block)
    memo = memo if isinstance(memo, dict) else {}
    memo[key] = content.hexdigest()
    try:
        memo_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo_path.with_name(f"{FINGERPRINTS}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo, indent=0, sort_keys=True), encoding="utf-8")
        os.replace(tmp, memo_path)
    except OSError:
        pass  # only a memo: the digest is computed again next time
    return str(memo[key])


def _cache_is_complete(folder: Path) -> bool:
    """The marker exists and every file it lists has the recorded size (catches truncation)."""
    try:
        marker = json.loads((folder / CACHE_MARKER).read_text(encoding="utf-8"))
        files: dict[str, int] = marker["files"]
        if marker.get("format") != CACHE_FORMAT or "config.json" not in files:
            return False
        return all((folder / name).stat().st_size == size for name, size in files.items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def build_cache_folder(folder: Path, build: Callable[[Path], None], source: str) -> Path:
    """Make ``folder`` by calling ``build(tmp_dir)`` and renaming the result into place atomically.

    An existing folder that fails the completeness check is replaced.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        build(tmp)
        files = {p.name: p.stat().st_size for p in tmp.iterdir() if p.is_file()}
        marker = {"format": CACHE_FORMAT, "source": source, "files": files}
        (tmp / CACHE_MARKER).write_text(json.dumps(marker, indent=1, sort_keys=True), encoding="utf-8")
        if folder.exists():
            stale = folder.with_name(f".{folder.name}.stale-{os.getpid()}")
            os.replace(folder, stale)
            _remove_tree(stale)
        try:
            os.replace(tmp, folder)
        except OSError:
            # Another process finished the same cache first; keep theirs if it is whole.
            if not _cache_is_complete(folder):
                raise
            _remove_tree(tmp)
    except BaseException:
        _remove_tree(tmp)
        raise
    logger.warning("longread: wrote model cache %s (from %s)", folder, source)
    return folder


def cached_folder(
    folder: Path,
    build: Callable[[Path], None],
    source: str,
    load: Callable[[Path], _Loaded],
) -> _Loaded:
    """Load from the cache folder, (re)building it first when missing, incomplete or unloadable.

    Builders of one folder take turns (a lock file beside it): a process that waited for another's build
    loads what that one wrote instead of building it again, and never replaces a folder another process
    is loading."""
    unloadable = False
    if _cache_is_complete(folder):
        try:
            return load(folder)
        except ModelLoadError as exc:
            logger.warning("longread: model cache %s does not load (%s); rebuilding it", folder, exc.problem)
            unloadable = True
    with _building(folder):
        if not unloadable and _cache_is_complete(folder):
            return load(folder)  # another process built it while this one waited
        if folder.exists() and not unloadable:
            logger.warning("longread: model cache %s is incomplete or corrupt; rebuilding it", folder)
        elif not unloadable:
            logger.warning("longread: building model cache %s from %s (once)", folder, source)
        build_cache_folder(folder, build, source)
    return load(folder)


@contextmanager
def _building(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``.NAME.lock`` beside ``folder`` for the block (released when the process
    ends, however it ends)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f".{folder.name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
