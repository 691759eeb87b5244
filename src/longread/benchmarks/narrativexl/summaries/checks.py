"""Checks of one generated answer (summary or distortion): fatal problems drop it, the rest warn.

Fatal: no answer, empty, refusal, copied from the scene (share of word n-grams), (nearly)
equal to the true summary. Warnings: length outside the ``SummarySettings`` ratio bounds,
an answer cut at ``max_tokens``, an answer that loops on its own words (a sentence said
again, or a large share of its word n-grams repeating earlier ones: small models fall into
such loops until ``max_tokens``).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from longread.benchmarks.narrativexl.summaries.settings import SummarySettings
from longread.models.requests import STOPPED_BY_MAX_TOKENS


@dataclass(frozen=True, slots=True)
class Problem:
    message: str
    fatal: bool
    """True: the text is not used (empty, refusal, copy, same as the true summary); False: a warning."""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def copied_share(answer: str, source: str, n: int) -> float:
    """Share of the answer's word ``n``-grams that occur in ``source`` (0 for an answer of fewer words)."""
    words = _words(answer)
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    source_words = _words(source)
    known = {tuple(source_words[i : i + n]) for i in range(len(source_words) - n + 1)}
    return sum(g in known for g in grams) / len(grams)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")  # not a single newline: answers may be line-wrapped


def repetition(answer: str, settings: SummarySettings) -> str | None:
    """How ``answer`` loops on its own words, or None.

    A loop is a sentence of at least ``repeated_sentence_words`` words said twice (compared by
    its words, case folded), or more than ``repetition_threshold`` of the answer's word
    ``repetition_ngram``-grams repeating an earlier one of the answer.
    """
    sentences = Counter(
        " ".join(words)
        for words in (_words(part) for part in _SENTENCE_END.split(answer))
        if len(words) >= settings.repeated_sentence_words
    )
    if sentences:
        sentence, times = sentences.most_common(1)[0]
        if times >= 2:
            return f"loops: a sentence said {times} times ({_opening(sentence)!r})"
    words, n = _words(answer), settings.repetition_ngram
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return None
    share = 1 - len(set(grams)) / len(grams)
    if share <= settings.repetition_threshold:
        return None
    gram, times = Counter(grams).most_common(1)[0]
    return f"loops: {share:.0%} of its {n}-word runs repeat an earlier one ({' '.join(gram)!r} {times} times)"


def _opening(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _is_refusal(answer: str, settings: SummarySettings) -> str | None:
    opening = answer.lstrip(" \"'“‘*#-\n")[:120]
    for pattern in settings.refusal_patterns:
        if re.match(pattern, opening, flags=re.IGNORECASE):
            return pattern
    return None


def check_text(
    answer: str | None,
    *,
    source: str,
    settings: SummarySettings,
    reference: str | None = None,
    stopped_by: str | None = None,
    read_problem: str = "",
) -> list[Problem]:
    """Problems of one generated answer.

    ``source`` is the scene (copy check; for a summary also the length reference);
    ``reference`` is the true summary when ``answer`` is a distortion (length reference and
    the same-as-true check). Fatal: no answer (``read_problem``), empty, refusal, copied,
    same as the true summary. Warnings: length outside the ratio bounds, a loop
    (:func:`repetition`), cut at max_tokens.
    """
    if answer is None:
        return [Problem(read_problem or "no answer", True)]
    if not answer.strip():
        return [Problem("empty answer", True)]
    problems = []
    refusal = _is_refusal(answer, settings)
    if refusal is not None:
        problems.append(Problem(f"refusal ({refusal!r})", True))
    share = copied_share(answer, source, settings.copy_ngram)
    if share > settings.copy_threshold:
        problems.append(
            Problem(f"copied from the scene ({share:.0%} of its {settings.copy_ngram}-word runs)", True)
        )
    if reference is None:
        ratio = len(answer) / max(1, len(source))
        low, high, what = settings.summary_min_ratio, settings.summary_max_ratio, "the scene"
    else:
        similarity = difflib.SequenceMatcher(None, _words(answer), _words(reference), autojunk=False).ratio()
        if similarity >= settings.same_as_true_threshold:
            problems.append(Problem(f"same as the true summary (similarity {similarity:.2f})", True))
        ratio = len(answer) / max(1, len(reference))
        low, high, what = settings.distortion_min_ratio, settings.distortion_max_ratio, "the true summary"
    if ratio < low:
        problems.append(Problem(f"too short ({ratio:.2f} of {what})", False))
    elif ratio > high:
        problems.append(Problem(f"too long ({ratio:.2f} of {what})", False))
    loop = repetition(answer, settings)
    if loop is not None:
        problems.append(Problem(loop, False))
    if stopped_by == STOPPED_BY_MAX_TOKENS:
        problems.append(Problem("cut at max_tokens", False))
    return problems


def merge_failure(answer: str | None, read_problem: str, settings: SummarySettings) -> str | None:
    """Why a hierarchical merge failed (no answer, empty, refusal), or None when its text is usable."""
    if answer is None:
        return read_problem or "no answer"
    if not answer.strip():
        return "empty answer"
    refusal = _is_refusal(answer, settings)
    return None if refusal is None else f"refusal ({refusal!r})"


def _describe(problems: Sequence[Problem]) -> str:
    return ", ".join(p.message for p in problems)
