"""ChapterBreak instances as harness items: one item per instance and prefix length, cut as longread cuts.

The context is the prefix cut from the left to N tokens, the choices are the
candidates cut from the right to ``suffix_tokens`` — both in the export's
tokenizer, at points whose text re-tokenises to exactly those tokens
(:mod:`longread.export.cuts`). The choices are the negatives first and the gold
LAST: lm-eval's ``acc`` takes ``argmax`` (the first of equal values), so a tie
between the gold and a negative is wrong there exactly as in longread's own rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.benchmarks.chapterbreak.task import TIE_RULE
from longread.errors import BadInputError
from longread.export.cuts import Cut, cut_context, cut_continuation
from longread.text.tokenizers import NamedTokenizer

CITATION = """@inproceedings{sun-etal-2022-chapterbreak,
    title = "{C}hapter{B}reak: A Challenge Dataset for Long-Range Language Models",
    author = "Sun, Simeng and Thai, Katherine and Iyyer, Mohit",
    booktitle = "Proceedings of the 2022 Conference of the North American Chapter of the Association for
                 Computational Linguistics: Human Language Technologies",
    year = "2022",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2022.naacl-main.271",
    pages = "3704--3714",
}"""
EXPORT_TIE_RULE = (
    f"{TIE_RULE}: the gold is the LAST choice and lm-eval's acc takes the first highest choice, "
    "so a tie between the gold and a negative is scored wrong by lm-eval too"
)


@dataclass
class CutCounts:
    """What the export cut, per prefix length (nothing is cut silently)."""

    items: int = 0
    context_cut: int = 0
    short_prefix: int = 0
    """Items whose whole prefix had fewer tokens than the prefix length (kept whole)."""
    context_inexact: int = 0
    """Contexts whose cut could not reproduce longread's token ids (a cut inside a word)."""
    candidates_cut: int = 0
    candidates_inexact: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class ChapterBreakExport:
    tokenizer: str
    prefix_lengths: tuple[int, ...]
    suffix_tokens: int
    items: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    counts: dict[int, CutCounts] = field(default_factory=dict)


def _candidate_cuts(
    tokenizer: NamedTokenizer, instance: ChapterBreakInstance, suffix_tokens: int
) -> list[Cut]:
    """Negatives first, gold last."""
    return [
        cut_continuation(tokenizer, instance.prefix, text, suffix_tokens)
        for text in (*instance.negatives, instance.gold)
    ]


def _item(
    instance: ChapterBreakInstance, length: int, context: Cut, choices: Sequence[Cut], tokenizer: str
) -> dict[str, Any]:
    return {
        "id": instance.id,
        "prefix_length": length,
        "book_id": instance.book_id,
        "book_title": instance.book_title,
        "collection": instance.split,
        "suffix_type": instance.suffix_type,
        "negatives_from": instance.negatives_from,
        "chapter_index": instance.chapter_index,
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
        "seed": instance.seed,
    }


def export_chapterbreak(
    instances: Sequence[ChapterBreakInstance],
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    prefix_lengths: Sequence[int],
    suffix_tokens: int,
) -> ChapterBreakExport:
    """Every instance at every prefix length, in file order per length."""
    if not instances:
        raise BadInputError(None, "the data holds no ChapterBreak instance", "build some first")
    lengths = tuple(sorted(set(prefix_lengths)))
    result = ChapterBreakExport(tokenizer_name, lengths, suffix_tokens)
    for length in lengths:
        result.items[length] = []
        result.counts[length] = CutCounts()
    for instance in instances:
        choices = _candidate_cuts(tokenizer, instance, suffix_tokens)
        for length in lengths:
            context = cut_context(tokenizer, instance.prefix, length)
            counts = result.counts[length]
            counts.items += 1
            counts.context_cut += context.cut
            counts.short_prefix += context.tokens_original < length
            counts.context_inexact += not context.exact
            counts.candidates_cut += sum(cut.cut for cut in choices)
            counts.candidates_inexact += sum(not cut.exact for cut in choices)
            result.items[length].append(_item(instance, length, context, choices, tokenizer_name))
    return result


def as_instance(item: dict[str, Any], suffix_tokens: int) -> ChapterBreakInstance:
    """An exported item read back as a ChapterBreak instance (cut texts; gold first again)."""
    choices = list(item["choices"])
    label = int(item["label"])
    gold = choices.pop(label)
    tokens = list(item["choice_tokens"])
    gold_tokens = tokens.pop(label)
    return ChapterBreakInstance(
        id=item["id"],
        split=item["collection"],
        book_id=item["book_id"],
        book_title=item["book_title"],
        suffix_type=item["suffix_type"],
        negatives_from=item["negatives_from"],
        chapter_index=item["chapter_index"],
        boundary_char=None,
        prefix=item["context"],
        prefix_start_char=None,
        prefix_truncated=item["context_tokens"] < item["context_tokens_original"],
        prefix_tokens=item["context_tokens"],
        prefix_tokens_original=item["context_tokens_original"],
        prefix_budget=item["prefix_length"],
        gold=gold,
        negatives=choices,
        gold_tokens=gold_tokens,
        negative_tokens=tokens,
        candidate_chars_original=None,
        suffix_budget=suffix_tokens,
        gold_source=None,
        negative_sources=None,
        tokenizer=item["tokenizer"],
        seed=item["seed"],
        origin="longread-export",
    )
