"""Token chunks of a document and the record of what a baseline kept of it.

Every MuLD baseline reads only part of a document. :func:`token_chunks` cuts a
document into chunks of at most ``size`` tokens; :class:`Selection` says which
parts (char spans, token counts, scores, labels) a baseline kept, so a sample row
can store exactly what the model was shown.

The cut rule of :func:`token_chunks`: the document is tokenised once; a chunk
starts where the previous one ended and may hold up to ``size`` tokens. If the
rest of the document fits, it is the last chunk. Otherwise the cut goes at a
token boundary among the last quarter of the ``size`` tokens, choosing, in this
order of preference, the latest boundary that

1. ends a sentence (the text before it ends in ``.``, ``!``, ``?`` — optionally
   followed by closing quotes or brackets and whitespace — and it touches
   whitespace; a period after a single letter or a title/abbreviation in
   :data:`ABBREVIATIONS` — "Mr.", "Fig." — does not end a sentence), else
2. touches whitespace (a word boundary: whitespace just before or just after it), else
3. any token boundary (never inside a token, and never inside a character that
   byte-level BPE split over two tokens).

Chunk boundaries are character offsets: chunk ``i`` ends where chunk ``i + 1``
starts, the first starts at 0 and the last ends at ``len(document)``, so the
chunks cover the document with no gap and no overlap (whitespace a tokenizer's
offsets skip belongs to the chunk it falls in). ``n_tokens`` counts the tokens of
the whole-document encoding that start inside the chunk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from longread.text.tokenizers import Encoding, NamedTokenizer

SELECTION_SCHEMA_VERSION = 1
LOOKBACK_FRACTION = 4
"""The cut is searched among the last ``size // LOOKBACK_FRACTION`` token boundaries of a full chunk."""

_SENTENCE_END = re.compile(r"(\w*)([.!?])[\"'”’)\]]*\s*$")
ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "rev", "capt", "col", "gen", "lt", "sgt", "hon"}
    | {"vs", "etc", "cf", "eq", "eqs", "fig", "figs", "ref", "refs", "sec", "vol", "no", "pp"}
)
"""Words whose trailing period does not end a sentence (nor does a single letter's: "J. Smith")."""


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: ``document[start:end] == text``, ``n_tokens`` tokens."""

    index: int
    start: int
    end: int
    text: str
    n_tokens: int


class KeptSpan(BaseModel):
    """One part of a document a baseline kept.

    ``index`` is the chunk (or section) number in the baseline's own cutting;
    ``n_tokens`` the tokens kept, ``full_tokens`` the tokens of the whole unit
    before any cut to a budget (equal when nothing was cut); ``score`` a retrieval
    score where there is one; ``label`` says why it was kept (a section title,
    ``first``/``last``/``most-mentions`` …).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    start: int
    end: int
    n_tokens: int
    full_tokens: int
    score: float | None = None
    label: str = ""

    @property
    def cut(self) -> bool:
        return self.full_tokens > self.n_tokens


class Selection(BaseModel):
    """What a baseline kept of one document, in document order, with how it chose.

    ``n_units`` is how many chunks/sections the document was cut into;
    ``document_tokens`` the document's length under ``tokenizer``; ``settings``
    the baseline's parameters (chunk size, top-k, method settings …); ``notes``
    anything the task should record (over-long lines, no mention found …).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SELECTION_SCHEMA_VERSION
    method: str
    tokenizer: str
    document_chars: int
    document_tokens: int
    n_units: int
    kept: tuple[KeptSpan, ...]
    settings: dict[str, str | int | float | bool | None] = {}
    notes: tuple[str, ...] = ()

    @property
    def kept_tokens(self) -> int:
        return sum(span.n_tokens for span in self.kept)

    def texts(self, document: str) -> list[str]:
        """The kept parts of ``document`` (the one this selection was made from), in order."""
        if len(document) != self.document_chars:
            raise ValueError(
                f"selection was made from a document of {self.document_chars} characters, "
                f"not this one of {len(document)}"
            )
        return [document[span.start : span.end] for span in self.kept]

    def joined(self, document: str, separator: str = "\n\n[…]\n\n") -> str:
        """The kept parts joined by ``separator`` (shown to the model between non-adjacent parts)."""
        return separator.join(text.strip() for text in self.texts(document))


def token_chunks(document: str, tokenizer: NamedTokenizer, size: int) -> list[Chunk]:
    """Cut ``document`` into chunks of at most ``size`` tokens (rule in the module docstring)."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1 token, got {size}")
    if not document:
        return []
    encoding = tokenizer.encode(document)
    return chunks_from_encoding(document, encoding, size)


def chunks_from_encoding(document: str, encoding: Encoding, size: int) -> list[Chunk]:
    """:func:`token_chunks` on an encoding already made of ``document``."""
    n = len(encoding.ids)
    if n == 0:
        return [Chunk(0, 0, len(document), document, 0)] if document else []
    chunks: list[Chunk] = []
    first_token, start = 0, 0
    while first_token < n:
        if n - first_token <= size:
            next_token, end = n, len(document)
        else:
            next_token = _cut_token(document, encoding, first_token, size)
            end = int(encoding.starts[next_token])
        chunks.append(Chunk(len(chunks), start, end, document[start:end], next_token - first_token))
        first_token, start = next_token, end
    return chunks


def _cut_token(document: str, encoding: Encoding, first: int, size: int) -> int:
    """Index of the token the next chunk starts with (a full chunk starting at token ``first``)."""
    limit = first + size
    lowest = max(first + 1, limit - max(1, size // LOOKBACK_FRACTION))
    word_boundary = any_boundary = None
    for token in range(limit, lowest - 1, -1):
        if not _whole_character_boundary(encoding, token):
            continue
        if any_boundary is None:
            any_boundary = token
        offset = int(encoding.starts[token])
        if not (document[offset].isspace() or document[offset - 1].isspace()):
            continue
        if word_boundary is None:
            word_boundary = token
        if _ends_sentence(document[max(0, offset - 16) : offset]):
            return token
    if word_boundary is not None:
        return word_boundary
    if any_boundary is not None:
        return any_boundary
    # Only split characters in the window: back off to the start of the split character.
    token = limit
    while token > first + 1 and not _whole_character_boundary(encoding, token):
        token -= 1
    return token


def _ends_sentence(before: str) -> bool:
    match = _SENTENCE_END.search(before)
    if match is None:
        return False
    word = match.group(1)
    return match.group(2) != "." or not (len(word) == 1 or word.lower() in ABBREVIATIONS)


def _whole_character_boundary(encoding: Encoding, token: int) -> bool:
    return bool(encoding.starts[token] >= encoding.ends[token - 1])


def selection_from_chunks(
    *,
    method: str,
    tokenizer: NamedTokenizer,
    document: str,
    chunks: Sequence[Chunk],
    chosen: Sequence[int],
    scores: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
    settings: dict[str, str | int | float | bool | None] | None = None,
    notes: Sequence[str] = (),
) -> Selection:
    """A selection of whole chunks (``chosen`` indices; kept in document order)."""
    order = sorted(range(len(chosen)), key=lambda i: chosen[i])
    kept = tuple(
        KeptSpan(
            index=chunks[chosen[i]].index,
            start=chunks[chosen[i]].start,
            end=chunks[chosen[i]].end,
            n_tokens=chunks[chosen[i]].n_tokens,
            full_tokens=chunks[chosen[i]].n_tokens,
            score=None if scores is None else float(scores[i]),
            label="" if labels is None else labels[i],
        )
        for i in order
    )
    return Selection(
        method=method,
        tokenizer=tokenizer.name,
        document_chars=len(document),
        document_tokens=sum(chunk.n_tokens for chunk in chunks),
        n_units=len(chunks),
        kept=kept,
        settings=dict(settings or {}),
        notes=tuple(notes),
    )
