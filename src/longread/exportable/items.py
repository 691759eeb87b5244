"""What a task's export hands the writers: items per prefix length, what was cut, and how to cite it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from longread.exportable.cuts import Cut


@dataclass
class CutCounts:
    """What the export cut, per prefix length (nothing is cut silently)."""

    items: int = 0
    context_cut: int = 0
    short_prefix: int = 0
    """Items whose whole context had fewer tokens than the prefix length (kept whole)."""
    context_inexact: int = 0
    """Contexts whose cut could not reproduce longread's token ids (a cut inside a word)."""
    candidates_cut: int = 0
    candidates_inexact: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class TaskItems:
    task: str
    tokenizer: str
    prefix_lengths: tuple[int, ...]
    suffix_tokens: int | None
    """Choices cut to this many tokens (None: whole, as the task scores them)."""
    citation: str
    scoring_rule: str
    features: dict[str, str]
    build_command: str
    collections: dict[str, int]
    books: int
    seeds: list[int | None]
    mean_metric: bool = False
    """The task ranks by mean log-prob per token too (lm-eval: ``acc_mean`` from ``choice_tokens``)."""
    output_type: str = "multiple_choice"
    """lm-eval's output type: ``multiple_choice`` (ChapterBreak, NarrativeXL) or ``generate_until`` (MuLD)."""
    items: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    whole: tuple[str, list[dict[str, Any]]] | None = None
    """(config, rows): the instances as longread built them, which the hf export adds so that
    ``longread eval TASK --data DIR`` reads them back (None: the task does not read exports)."""
    counts: dict[int, CutCounts] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    """The task settings given as ``-o KEY=VALUE`` (manifest and card state them)."""
    lm_eval_metrics: tuple[tuple[str, str], ...] = ()
    """(metric, aggregation) of a multiple-choice task with its own metrics (empty: ``acc``, and
    ``acc_mean`` with ``mean_metric``); an aggregation ``!function utils.X`` names a function of
    ``lm_eval_utils``."""
    lm_eval_process_results: str | None = None
    """The ``utils.py`` function that turns one item's log-probs into ``lm_eval_metrics``' values."""
    lm_eval_utils: str = ""
    """Python appended to the lm-eval task's ``utils.py`` (the functions the two fields above name)."""
    text_scores: str = ""
    """``module:function`` scoring a generated text against the references (``generate_until`` items):
    the lm-eval and inspect task files import it, so their scores are longread's own."""
    unit: str = "book(s)"
    """What the instances were made from, as the card counts them (``book(s)``, ``document(s)``)."""
    licences: dict[str, str] = field(default_factory=dict)
    """Licences of collections the card does not know (collection → text)."""

    def start_lengths(self) -> None:
        """An empty item list and zero counts for every prefix length (filled as items are cut)."""
        for length in self.prefix_lengths:
            self.items[length] = []
            self.counts[length] = CutCounts()


def count(counts: CutCounts, context: Cut, choices: Sequence[Cut], length: int) -> None:
    counts.items += 1
    counts.context_cut += context.cut
    counts.short_prefix += context.tokens_original < length
    counts.context_inexact += not context.exact
    counts.candidates_cut += sum(cut.cut for cut in choices)
    counts.candidates_inexact += sum(not cut.exact for cut in choices)


def cut_fields(context: Cut, choices: Sequence[Cut], tokenizer: str) -> dict[str, Any]:
    """The columns every multiple-choice item carries: the cut context, the choices (the gold last), how
    each was cut, and the tokenizer the cuts were made in."""
    return {
        "context": context.text,
        "context_tokens": context.tokens,
        "context_tokens_original": context.tokens_original,
        "context_cut_exact": context.exact,
        "choices": [cut.text for cut in choices],
        "label": len(choices) - 1,
        "choice_tokens": [cut.tokens for cut in choices],
        "choice_tokens_original": [cut.tokens_original for cut in choices],
        "choices_cut_exact": all(cut.exact for cut in choices),
        "tokenizer": tokenizer,
    }
