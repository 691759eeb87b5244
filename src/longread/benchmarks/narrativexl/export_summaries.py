"""NarrativeXL summaries as harness items: a scene (+ the prompt), its true summary among distorted ones.

One item per scene the task asks (a failed scene, or one with no distorted
summary, is skipped and counted) and per prefix length N: the context is the
scene followed by the task's prompt, cut from the left to N tokens as the task's
``max_scene_tokens`` cuts it; the choices are the summaries, each after a space,
as the task scores them (whole), the distorted ones first and the true one LAST
(lm-eval's argmax takes the first of equal values, so a tie is wrong, as in
longread). longread ranks by mean log-prob per token by default: the items carry
every choice's token count and the lm-eval task reports ``acc_mean`` beside ``acc``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.benchmarks.narrativexl.exported import INSTANCES_CONFIG, book_record
from longread.benchmarks.narrativexl.load import load_book_summaries
from longread.benchmarks.narrativexl.schema import BookSummaries
from longread.benchmarks.narrativexl.summaries_task import SummariesSettings, SummariesTask, askable
from longread.errors import BadInputError
from longread.exportable import Cut, Exported, ExportRequest, TaskItems, count, cut_fields
from longread.exportable.cuts import cut_context, cut_continuation
from longread.exportable.settings import ResolvedSettings, resolve_settings
from longread.models.requests import LOGLIKELIHOOD
from longread.progress import Progress
from longread.text.tokenizers import NamedTokenizer

SUMMARY_PREFIX_LENGTHS = (256, 1024, 4096)
"""Default scene budgets of the NarrativeXL summaries export (tokens of scene + prompt)."""
WHOLE = 1 << 30
"""A continuation budget no summary reaches: summaries are scored whole."""
CITATION = """@article{moskvichev2023narrativexl,
    title = {NarrativeXL: A Large-scale Dataset For Long-Term Memory Models},
    author = {Moskvichev, Arseny and Mai, Ky-Vinh},
    journal = {arXiv preprint arXiv:2305.13877},
    year = {2023},
}"""
LICENCE = (
    "scenes of the books the build read (see their licences: Project Gutenberg for the bundled ones); "
    "summaries written by the model the build named"
)
"""The card's licence line for the ``narrativexl`` collection."""
SCORING_RULE = (
    "the true summary is the LAST choice; acc ranks by summed log-prob, acc_mean by mean log-prob per "
    "token (longread's default), each taking the first highest choice, so a tie with the true summary "
    "is wrong as in longread"
)
FEATURES = {
    "id": "book_id/scene, longread's sample key",
    "prefix_length": "the prefix length N of this config (tokens of the export's tokenizer)",
    "book_id": "the book",
    "scene": "the scene's index in the book",
    "context": "the scene then the prompt (the prompt alone with -o options_only=true), cut from the left to "
    "N tokens, or to max_scene_tokens when that is smaller (whole if shorter)",
    "context_tokens": "tokens of `context` (right-stripped), re-tokenised",
    "context_tokens_original": "tokens of the whole scene + prompt",
    "context_cut_exact": "the cut text re-tokenises to exactly the ids longread keeps",
    "choices": "the distorted summaries, then the true one LAST, each after a space",
    "label": "index of the true summary in `choices`",
    "choice_tokens": "tokens each choice scores after the context (lm-eval's boundary rule)",
    "choice_tokens_original": "the same (summaries are never cut)",
    "choices_cut_exact": "always true (summaries are never cut)",
    "tokenizer": "the tokenizer every token count is in",
    "seed": "None (the build's seed is not stored with the summaries)",
}


def _item(
    book: BookSummaries, scene: int, length: int, context: Cut, choices: Sequence[Cut], tokenizer: str
) -> dict[str, Any]:
    return {
        "id": f"{book.book_id}/{scene:04d}",
        "prefix_length": length,
        "book_id": book.book_id,
        "scene": scene,
        **cut_fields(context, choices, tokenizer),
        "seed": None,
    }


def _scoring_rule(settings: SummariesSettings, skipped: int) -> str:
    primary = "acc_mean" if settings.scoring == "mean" else "acc"
    return (
        f"{SCORING_RULE}; longread's prediction (scoring={settings.scoring}) is {primary}; "
        f"{skipped} scene(s) skipped (failed or without a distorted summary)"
    )


def export_items(request: ExportRequest) -> Exported:
    """``longread export narrativexl-summaries``: the books' summaries of a build folder (every file it
    holds is named in the card), at the flags' lengths, else 256, 1024 and 4096."""
    resolved = resolve_settings(request, SUMMARY_PREFIX_LENGTHS)
    books = load_book_summaries(request.data)
    files = build_files(request)
    built = export_summaries(
        books, request.tokenizer, request.tokenizer_name, resolved, request.show_progress
    )
    return Exported(built, files)


def build_files(request: ExportRequest) -> list[Path]:
    """The files a NarrativeXL export reads: every file of a build folder, else the data file."""
    data = request.data
    return sorted(path for path in data.rglob("*") if path.is_file()) if data.is_dir() else request.files


def export_summaries(
    books: Sequence[BookSummaries],
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    resolved: ResolvedSettings,
    show_progress: bool = False,
) -> TaskItems:
    """Every askable scene of every book at every prefix length, each item formed by the task's own
    request (its prompt, ``options_only``), the context cut to min(N, ``max_scene_tokens``)."""
    if not books:
        raise BadInputError(
            None, "the data holds no NarrativeXL book", "build some with `longread build narrativexl`"
        )
    settings = resolved.task_settings
    assert isinstance(settings, SummariesSettings)
    task = SummariesTask(settings)
    skipped = sum(len(askable(book)[1]) for book in books)
    result = TaskItems(
        task="narrativexl-summaries",
        tokenizer=tokenizer_name,
        prefix_lengths=tuple(sorted(set(resolved.prefix_lengths))),
        suffix_tokens=None,
        citation=CITATION,
        scoring_rule=_scoring_rule(settings, skipped),
        features=FEATURES,
        build_command="longread build narrativexl BOOKS… --out DIR",
        collections={"narrativexl": len(books)},
        books=len(books),
        seeds=[None],
        licences={"narrativexl": LICENCE},
        mean_metric=True,
        whole=(INSTANCES_CONFIG, [book_record(book) for book in books]),
        settings=resolved.given,
    )
    result.start_lengths()
    with Progress(len(books), "exporting narrativexl-summaries", "book", enabled=show_progress) as progress:
        for book in books:
            _book_items(task, book, tokenizer, tokenizer_name, result)
            progress.update(items=1)
    return result


def _book_items(
    task: SummariesTask,
    book: BookSummaries,
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    result: TaskItems,
) -> None:
    """The items of one book's askable scenes, formed by the task's own requests, at every length."""
    for sample in task.samples(book):
        request = task.request(sample, LOGLIKELIHOOD)
        true, *distorted = request.continuations
        texts = (*distorted, true)
        choices = [cut_continuation(tokenizer, request.context, text, WHOLE) for text in texts]
        for length in result.prefix_lengths:
            budget = min(length, request.max_context_tokens or length)
            context = cut_context(tokenizer, request.context, budget)
            count(result.counts[length], context, choices, length)
            scene = sample.context_budget
            assert scene is not None
            result.items[length].append(_item(book, scene, length, context, choices, tokenizer_name))
