"""WordNet 3.0 for nltk, offline, from Debian's ``wordnet-base`` + ``wordnet-sense-index``.

nltk's METEOR needs WordNet, which nltk normally downloads. Debian ships the
same WordNet 3.0 database under ``/usr/share/wordnet`` but without the
``lexnames`` file nltk's reader opens first. So, once per cache root:

1. the database files nltk reads are **copied** (not symlinked) from the source
   folder into ``<root>/corpora/wordnet``;
2. ``lexnames`` is written there from :data:`LEXNAMES_WN30` (the 45 lexicographer
   files of WordNet 3.0, as listed in ``lexnames(5WN)``);
3. ``<root>`` is put first on ``nltk.data.path``.

The folder is built in a temporary sibling and renamed into place, so a reader
never sees half a copy and two processes racing both end with one complete
folder (the loser of the rename drops its copy). ``<root>`` is
``$LONGREAD_CACHE/nltk_data``, else ``$XDG_CACHE_HOME/longread/nltk_data``, else
``~/.cache/longread/nltk_data`` (the rule of ``longread.models.hf.loading.cache_root``,
repeated here so metrics do not import torch).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from longread.errors import BadInputError

if TYPE_CHECKING:  # nltk costs ~1.3 s to import (scipy, sklearn, pandas): only when METEOR is scored
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

WORDNET_SOURCE = Path("/usr/share/wordnet")
INSTALL_HINT = "install them with `apt-get install wordnet-base wordnet-sense-index` (or `make install`)"
# The files nltk's WordNetCorpusReader opens, apart from lexnames (which Debian lacks).
WORDNET_FILES = (
    "cntlist.rev",
    "index.sense",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)
# WordNet 3.0 lexicographer files: (name, syntactic category 1 noun / 2 verb / 3 adjective / 4 adverb).
LEXNAMES_WN30 = (
    ("adj.all", 3),
    ("adj.pert", 3),
    ("adv.all", 4),
    ("noun.Tops", 1),
    ("noun.act", 1),
    ("noun.animal", 1),
    ("noun.artifact", 1),
    ("noun.attribute", 1),
    ("noun.body", 1),
    ("noun.cognition", 1),
    ("noun.communication", 1),
    ("noun.event", 1),
    ("noun.feeling", 1),
    ("noun.food", 1),
    ("noun.group", 1),
    ("noun.location", 1),
    ("noun.motive", 1),
    ("noun.object", 1),
    ("noun.person", 1),
    ("noun.phenomenon", 1),
    ("noun.plant", 1),
    ("noun.possession", 1),
    ("noun.process", 1),
    ("noun.quantity", 1),
    ("noun.relation", 1),
    ("noun.shape", 1),
    ("noun.state", 1),
    ("noun.substance", 1),
    ("noun.time", 1),
    ("verb.body", 2),
    ("verb.change", 2),
    ("verb.cognition", 2),
    ("verb.communication", 2),
    ("verb.competition", 2),
    ("verb.consumption", 2),
    ("verb.contact", 2),
    ("verb.creation", 2),
    ("verb.emotion", 2),
    ("verb.motion", 2),
    ("verb.perception", 2),
    ("verb.possession", 2),
    ("verb.social", 2),
    ("verb.stative", 2),
    ("verb.weather", 2),
    ("adj.ppl", 3),
)
_READERS: dict[Path, WordNetCorpusReader] = {}
_LOCK = threading.Lock()


class WordNetMissingError(BadInputError):
    """The WordNet 3.0 files METEOR needs are not installed."""


def lexnames_text() -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>category`` per line, numbered from 00."""
    return "".join(f"{i:02d}\t{name}\t{category}\n" for i, (name, category) in enumerate(LEXNAMES_WN30))


def default_nltk_root() -> Path:
    """``$LONGREAD_CACHE/nltk_data``, else ``$XDG_CACHE_HOME/longread/nltk_data``, else ``~/.cache/...``."""
    explicit = os.environ.get("LONGREAD_CACHE")
    if explicit:
        return Path(explicit).expanduser() / "nltk_data"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "longread" / "nltk_data"


def _check_source(source: Path) -> None:
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise WordNetMissingError(
            source, f"WordNet 3.0 files for METEOR not found (missing {shown})", INSTALL_HINT
        )


def _is_complete(folder: Path) -> bool:
    return (folder / "lexnames").is_file() and all((folder / name).is_file() for name in WORDNET_FILES)


def ensure_wordnet(root: Path | None = None, source: Path = WORDNET_SOURCE) -> Path:
    """``<root>/corpora/wordnet`` built from ``source`` if not there yet; returns ``<root>``.

    A folder left incomplete (by hand, or a crashed older layout) is moved aside and rebuilt.
    """
    root = (root or default_nltk_root()).expanduser().resolve()
    target = root / "corpora" / "wordnet"
    if _is_complete(target):
        return root
    _check_source(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        stale = Path(tempfile.mkdtemp(dir=target.parent, prefix=".wordnet-stale-"))
        with contextlib.suppress(FileNotFoundError):  # another process moved it first
            os.rename(target, stale / "wordnet")
        shutil.rmtree(stale, ignore_errors=True)
    building = Path(tempfile.mkdtemp(dir=target.parent, prefix=".wordnet-building-"))
    try:
        for name in WORDNET_FILES:
            shutil.copyfile(source / name, building / name)
        (building / "lexnames").write_text(lexnames_text(), encoding="ascii")
        try:
            os.rename(building, target)
        except OSError:
            if not _is_complete(target):  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return root


def wordnet_reader(root: Path | None = None, source: Path = WORDNET_SOURCE) -> WordNetCorpusReader:
    """nltk's WordNet reader over ``<root>/corpora/wordnet`` (built on first use), with ``<root>`` on
    ``nltk.data.path`` so ``nltk.corpus.wordnet`` finds the same copy. One reader per root per process."""
    resolved = ensure_wordnet(root, source)
    with _LOCK:
        reader = _READERS.get(resolved)
        if reader is None:
            import nltk
            from nltk.corpus.reader.wordnet import WordNetCorpusReader

            if str(resolved) not in nltk.data.path:
                nltk.data.path.insert(0, str(resolved))
            with warnings.catch_warnings():  # "multilingual functions are not available": none are used
                warnings.simplefilter("ignore", UserWarning)
                reader = WordNetCorpusReader(str(resolved / "corpora" / "wordnet"), None)
            _READERS[resolved] = reader
    return reader
