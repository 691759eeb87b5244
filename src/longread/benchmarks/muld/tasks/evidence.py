"""Where a QA answer's evidence lies in the document, as a fraction 0–1: the x-axis of MuLD's memory curves.

Rules, first that applies (``rule`` names it):

1. ``supporting-facts``: the metadata (HotpotQA builder) holds ``evidence``
   entries with a character ``start``/``end`` in the document — the sentences of
   the supporting facts.
2. ``supporting-pages``: the metadata holds ``pages`` with ``start``/``end`` and
   ``supporting: true`` — the whole supporting pages.
3. ``answer-exact``: a reference answer occurs in the document after
   normalisation (lower case, apostrophes dropped, punctuation as word breaks,
   the articles a/an/the ignored on both sides); its first occurrence. Of several
   references found, the one with most words wins (ties: the first listed).
   Answers made only of stop words, or ``yes``/``no``, are never matched: they
   occur everywhere.
4. ``answer-f1``: otherwise, windows of ``2n`` content words (normalised words
   minus English stop words; ``n`` = the answer's content words, at least 4 a
   window) slide over the document; the window with the highest token F1
   against the answer (ties: the earliest) counts if its F1 reaches
   :data:`F1_THRESHOLD` — with ``2n``-word windows that is ≥ 75 % of the
   answer's content words present. Of several references, the best F1 wins.

``position`` is the middle of the evidence span divided by the document's length;
with several spans (two supporting facts) it is the middle of the *last* one —
how far a reader from the start must get to have seen all the evidence — and
``spans`` lists them all. Spans out of the document's range are ignored (and said
in ``rule`` when nothing else locates the evidence). Not located → ``position``
None and ``rule`` = ``not located: <reason>``.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

F1_THRESHOLD: Final[float] = 0.5
MIN_WINDOW: Final[int] = 4
ARTICLES: Final[frozenset[str]] = frozenset({"a", "an", "the"})
_WORD: Final = re.compile(r"\w+(?:['’]\w+)*")


@dataclass(frozen=True)
class EvidenceLocation:
    position: float | None
    rule: str
    spans: tuple[tuple[int, int], ...] = ()
    reference: str | None = None
    """The reference answer that located it (rules 3–4)."""
    f1: float | None = None


@dataclass(frozen=True)
class _Words:
    """A text's normalised words (articles dropped) with their character spans."""

    words: list[str]
    starts: list[int]
    ends: list[int]


def locate_evidence(
    document: str, references: Sequence[str], metadata: Mapping[str, Any] | None = None
) -> EvidenceLocation:
    """Where the evidence lies (rules in the module docstring)."""
    if not document:
        return EvidenceLocation(None, "not located: empty document")
    ignored = ""
    for key, rule, keep in (
        ("evidence", "supporting-facts", lambda entry: True),
        ("pages", "supporting-pages", lambda entry: entry.get("supporting") is True),
    ):
        spans, bad = _metadata_spans(metadata, key, keep, len(document))
        if bad:
            ignored = f"; {bad} metadata span(s) outside the document ignored"
        if spans:
            return _at(document, rule, spans)
    words = normalised_words(document)
    found = answer_exact(document, references, words)
    if found is not None:
        return found
    return answer_f1(document, references, words, note=ignored)


def _metadata_spans(
    metadata: Mapping[str, Any] | None, key: str, keep: Any, length: int
) -> tuple[list[tuple[int, int]], int]:
    entries = metadata.get(key) if metadata else None
    if not isinstance(entries, list):
        return [], 0
    spans: list[tuple[int, int]] = []
    bad = 0
    for entry in entries:
        if not isinstance(entry, Mapping) or not keep(entry):
            continue
        start, end = entry.get("start"), entry.get("end")
        if not isinstance(start, int) or not isinstance(end, int):
            continue
        if 0 <= start < end <= length:
            spans.append((start, end))
        else:
            bad += 1
    return sorted(spans), bad


def _at(
    document: str,
    rule: str,
    spans: Sequence[tuple[int, int]],
    reference: str | None = None,
    f1: float | None = None,
) -> EvidenceLocation:
    start, end = max(spans, key=lambda span: (span[0] + span[1], span))
    return EvidenceLocation((start + end) / 2 / len(document), rule, tuple(spans), reference, f1)


def normalised_words(text: str) -> _Words:
    words: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for match in _WORD.finditer(text):
        word = match.group(0).lower().replace("'", "").replace("’", "")
        if word in ARTICLES:
            continue
        words.append(word)
        starts.append(match.start())
        ends.append(match.end())
    return _Words(words, starts, ends)


@functools.cache
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _matchable(words: Sequence[str]) -> bool:
    content = [word for word in words if word not in _stop_words()]
    return bool(content) and words not in (["yes"], ["no"])


def answer_exact(
    document: str, references: Sequence[str], words: _Words | None = None
) -> EvidenceLocation | None:
    """Rule 3, or None when no matchable reference occurs verbatim (after normalisation).

    ``words``: :func:`normalised_words` of ``document`` when already made."""
    text = words or normalised_words(document)
    joined = " " + " ".join(text.words) + " "
    # Offset in ``joined`` where each word starts, to map a string hit back to a word index.
    offsets = np.cumsum([1] + [len(word) + 1 for word in text.words[:-1]]).tolist() if text.words else []
    best: tuple[int, int, int, str] | None = None  # (-words, order, word index, reference)
    for order, reference in enumerate(references):
        answer = normalised_words(reference).words
        if not _matchable(answer):
            continue
        hit = joined.find(" " + " ".join(answer) + " ")
        if hit < 0:
            continue
        candidate = (-len(answer), order, bisect.bisect_left(offsets, hit + 1), reference)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    if best is None:
        return None
    minus_length, _, first, reference = best
    span = (text.starts[first], text.ends[first - minus_length - 1])
    return _at(document, "answer-exact", [span], reference)


def answer_f1(
    document: str, references: Sequence[str], words: _Words | None = None, *, note: str = ""
) -> EvidenceLocation:
    """Rule 4, or a not-located result that says why."""
    if not references:
        return EvidenceLocation(None, f"not located: no reference answer{note}")
    stop = _stop_words()
    text = words or normalised_words(document)
    content = [i for i, word in enumerate(text.words) if word not in stop]
    best: tuple[float, int, int, str] | None = None  # (f1, first content index, window, reference)
    for reference in references:
        answer = [word for word in normalised_words(reference).words if word not in stop]
        if not answer or answer in (["yes"], ["no"]):
            continue
        window = max(MIN_WINDOW, 2 * len(answer))
        f1, at = _best_window([text.words[i] for i in content], answer, window)
        if best is None or f1 > best[0]:
            best = (f1, at, window, reference)
    if best is None:
        return EvidenceLocation(None, f"not located: the answers are yes/no or stop words only{note}")
    f1, at, window, reference = best
    if f1 < F1_THRESHOLD:
        return EvidenceLocation(
            None, f"not located: best token F1 {f1:.2f} < {F1_THRESHOLD}{note}", reference=reference, f1=f1
        )
    last = content[min(at + window, len(content)) - 1]
    span = (text.starts[content[at]], text.ends[last])
    return _at(document, "answer-f1", [span], reference, round(f1, 6))


def _best_window(words: Sequence[str], answer: Sequence[str], window: int) -> tuple[float, int]:
    """(best F1, first index) of ``window``-word windows over ``words`` against ``answer``."""
    if not words:
        return 0.0, 0
    types = sorted(set(answer))
    wanted = np.array([answer.count(t) for t in types], dtype=np.int64)
    index = {t: i for i, t in enumerate(types)}
    ids = np.array([index.get(word, -1) for word in words], dtype=np.int64)
    n_windows = max(1, len(words) - window + 1)
    overlap = np.zeros(n_windows, dtype=np.int64)
    for type_id, count in enumerate(wanted):
        cumulative = np.concatenate([[0], np.cumsum(ids == type_id)])
        in_window = cumulative[np.minimum(np.arange(n_windows) + window, len(words))] - cumulative[:n_windows]
        overlap += np.minimum(in_window, count)
    sizes = np.minimum(window, len(words) - np.arange(n_windows))
    f1 = 2 * overlap / (sizes + len(answer))
    at = int(np.argmax(f1))  # the first maximum
    return float(f1[at]), at
