"""ChapterBreak instances as harness items: one item per instance and prefix length, cut as longread cuts.

The context is the prefix cut from the left to N tokens, the choices are the
candidates cut from the right to ``suffix_tokens`` — both in the export's
tokenizer, at points whose text re-tokenises to exactly those tokens
(:mod:`longread.exportable.cuts`). The choices are the negatives first and the gold
LAST: lm-eval's ``acc`` takes ``argmax`` (the first of equal values), so a tie
between the gold and a negative is wrong there exactly as in longread's own rule.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from typing import Any

from longread.benchmarks.chapterbreak.exported import INSTANCES_CONFIG, instance_record
from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.benchmarks.chapterbreak.task import DEFAULT_PREFIX_LENGTHS, TIE_RULE
from longread.errors import BadInputError
from longread.exportable import Cut, Exported, ExportRequest, TaskItems, count, cut_fields
from longread.exportable.cuts import cut_context, cut_continuation
from longread.exportable.settings import resolve_settings
from longread.progress import Progress
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
FEATURES = {
    "id": "the longread instance id",
    "prefix_length": "the prefix length N of this config (tokens of the export's tokenizer)",
    "book_id": "the book the instance comes from",
    "book_title": "its title",
    "collection": "the collection the book came from (gutenberg, pg19, ao3, plain …)",
    "suffix_type": "chapter, cause or dialogue boundary",
    "negatives_from": "in-book or out-of-book negatives",
    "chapter_index": "index of the chapter the gold suffix starts",
    "context": "the prefix, cut from the left to N tokens (whole if shorter)",
    "context_tokens": "tokens of `context` (right-stripped), re-tokenised",
    "context_tokens_original": "tokens of the whole stored prefix",
    "context_cut_exact": "the cut text re-tokenises to exactly the ids longread keeps",
    "choices": "the negatives, then the gold LAST, each cut from the right to suffix_tokens",
    "label": "index of the gold in `choices`",
    "choice_tokens": "tokens each choice scores after the context (lm-eval's boundary rule)",
    "choice_tokens_original": "tokens of each whole candidate",
    "choices_cut_exact": "every choice cut re-tokenises to exactly the ids longread keeps",
    "tokenizer": "the tokenizer every token count is in",
    "seed": "the build's seed",
}

EXPORT_TIE_RULE = (
    f"{TIE_RULE}: the gold is the LAST choice and lm-eval's acc takes the first highest choice, "
    "so a tie between the gold and a negative is scored wrong by lm-eval too"
)


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
        **cut_fields(context, choices, tokenizer),
        "seed": instance.seed,
    }


def _build_command(instances: Sequence[ChapterBreakInstance]) -> str:
    first = instances[0]
    parts = ["longread", "build", "chapterbreak", "BOOKS…", "--out", "DATA.jsonl"]
    parts += ["--seed", str(first.seed), "--tokenizer", first.tokenizer]
    if first.prefix_budget is not None:
        parts += ["--prefix-tokens", str(first.prefix_budget)]
    if first.suffix_budget is not None:
        parts += ["--suffix-tokens", str(first.suffix_budget)]
    parts += ["--negatives", str(len(first.negatives)), "--suffix-type", first.suffix_type]
    parts += ["--negatives-from", first.negatives_from]
    return shlex.join(parts).replace("'BOOKS…'", "BOOKS…")


def export_items(request: ExportRequest) -> Exported:
    """``longread export chapterbreak``: the instances of the JSONL file(s), cut at every prefix length
    (the flags, else ``-o prefix_lengths``/``suffix_tokens``, else 256…8192 and 128)."""
    resolved = resolve_settings(request, DEFAULT_PREFIX_LENGTHS, task_lengths=True)
    files = request.files
    if not files:
        raise BadInputError(
            request.data, "holds no *.jsonl file", "give the JSONL file `longread build` wrote"
        )
    if any(part.suffix not in (".jsonl", ".gz") for part in files):
        raise BadInputError(files[0], "is not a JSONL file", "give the JSONL file `longread build` wrote")
    instances = [instance for path in files for instance in load_instances(path)]
    assert resolved.suffix_tokens is not None
    built = export_chapterbreak(
        instances,
        request.tokenizer,
        request.tokenizer_name,
        resolved.prefix_lengths,
        resolved.suffix_tokens,
        request.show_progress,
    )
    built.settings = resolved.given
    return Exported(built, files)


def export_chapterbreak(
    instances: Sequence[ChapterBreakInstance],
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    prefix_lengths: Sequence[int],
    suffix_tokens: int,
    show_progress: bool = False,
) -> TaskItems:
    """Every instance at every prefix length, in file order per length (progress on stderr if asked:
    cutting 3,000 instances at six lengths takes minutes)."""
    if not instances:
        raise BadInputError(None, "the data holds no ChapterBreak instance", "build some first")
    result = TaskItems(
        task="chapterbreak",
        tokenizer=tokenizer_name,
        prefix_lengths=tuple(sorted(set(prefix_lengths))),
        suffix_tokens=suffix_tokens,
        citation=CITATION,
        scoring_rule=EXPORT_TIE_RULE,
        features=FEATURES,
        build_command=_build_command(instances),
        collections=dict(sorted(Counter(instance.split for instance in instances).items())),
        books=len({instance.book_id for instance in instances}),
        seeds=sorted({instance.seed for instance in instances}, key=lambda seed: (seed is None, seed or 0)),
        whole=(INSTANCES_CONFIG, [instance_record(instance) for instance in instances]),
    )
    result.start_lengths()
    with Progress(len(instances), "exporting chapterbreak", "instance", enabled=show_progress) as progress:
        for instance in instances:
            choices = _candidate_cuts(tokenizer, instance, suffix_tokens)
            for length in result.prefix_lengths:
                context = cut_context(tokenizer, instance.prefix, length)
                count(result.counts[length], context, choices, length)
                result.items[length].append(_item(instance, length, context, choices, tokenizer_name))
            progress.update(items=1)
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
