"""Checks of one generated answer (summary or distortion): fatal problems drop it, the rest warn.

Fatal: no answer, empty, refusal, copied from the scene (share of word n-grams), (nearly)
equal to the true summary. Warnings: length outside the ``SummarySettings`` ratio bounds,
an answer cut at ``max_tokens``.
"""

from __future__ import annotations

import difflib
import re
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
    same as the true summary. Warnings: length outside the ratio bounds, cut at max_tokens.
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
    if stopped_by == STOPPED_BY_MAX_TOKENS:
        problems.append(Problem("cut at max_tokens", False))
    return problems


def _describe(problems: Sequence[Problem]) -> str:
    return ", ".join(p.message for p in problems)
