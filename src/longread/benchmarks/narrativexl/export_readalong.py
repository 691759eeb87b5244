"""NarrativeXL read-along questions as harness items: the book read so far (+ the prompt), the options.

One item per question and prefix length N. The context is what the task gives a
backend with log-likelihood only (policy ``cut-left``): the scenes ``0..when_asked``
joined by the task's ``scene_separator``, then its ``prompt``, cut from the left to
N tokens (to ``-o window`` when that is smaller) — ``longread eval narrativexl -o
window=N`` on such a backend scores exactly these contexts. A model with read-along
(a local model) reads the book with a sliding window instead and is not what these
items reproduce. The choices are the options, each after a space (the task's
whitespace rule), scored whole; the wrong ones keep their order and the true one
goes LAST: lm-eval's argmax takes the first of equal values, so a tie for first with
the true option is wrong there, as longread's rule has it. ``option_order`` maps
each choice back to the task's option index. longread ranks by mean log-prob per
token by default: the items carry every choice's token count and the lm-eval task
reports ``acc_mean`` beside ``acc``. Each item carries the question's retention
demand (and its bucket, the task's x-axis) and type, so a memory curve can be drawn
from the harness's per-sample output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longread.benchmarks.narrativexl.export_summaries import CITATION, LICENCE, WHOLE, build_files
from longread.benchmarks.narrativexl.exported import INSTANCES_CONFIG, book_record
from longread.benchmarks.narrativexl.load import load_reading_books
from longread.benchmarks.narrativexl.schema import ReadAlongQuestion, ReadingBook
from longread.benchmarks.narrativexl.task import NarrativeXLSettings, NarrativeXLTask, retention_bucket
from longread.errors import BadInputError, LongreadError
from longread.exportable import Cut, Exported, ExportRequest, TaskItems, count, cut_fields
from longread.exportable.cuts import cut_context, cut_continuation
from longread.exportable.settings import ResolvedSettings, resolve_settings
from longread.models.requests import LOGLIKELIHOOD, LoglikelihoodRequest
from longread.progress import Progress
from longread.text.tokenizers import NamedTokenizer

TASK = "narrativexl"
READALONG_PREFIX_LENGTHS = (1024, 4096, 16384)
"""Default prefix lengths of the NarrativeXL read-along export (tokens of the book read so far + prompt)."""
SCORING_RULE = (
    "the true option is the LAST choice; acc ranks by summed log-prob, acc_mean by mean log-prob per "
    "token, each taking the first highest choice, so a tie for first with the true option is wrong as in "
    "longread; the context is longread's cut-left policy (what `longread eval narrativexl -o window=N` "
    "gives a model without read-along), not the sliding window a local model reads with"
)
FEATURES = {
    "id": "the question id (book_id/when_asked/type/ordinal), longread's sample key",
    "prefix_length": "the prefix length N of this config (tokens of the export's tokenizer)",
    "book_id": "the book",
    "when_asked": "the scene after which the question is asked (scenes 0..when_asked are read)",
    "scenes_read": "scenes in the context before the cut (0 with -o options_only=true)",
    "retention_demand": "scenes between the true scene and the reading position (when_asked - true "
    "scene; when_asked for 'None of the above.'): the x of a memory curve",
    "retention_bucket": "retention demand in doubling buckets (0, 1, 2–3, 4–7 …), longread's x-axis",
    "question_type": "the decoy kind: lookahead, change or otherbook",
    "true_scene": "the scene whose summary is right (null: 'None of the above.' is right)",
    "none_is_answer": "'None of the above.' is the right option",
    "option_kinds": "where each choice came from (true, lookahead, change, otherbook, none), in choice order",
    "option_order": "the task's index of each choice (the question's option order)",
    "context": "the scenes read so far joined by the scene separator, then the prompt, cut from the left "
    "to N tokens (or to -o window when smaller; whole if shorter)",
    "context_tokens": "tokens of `context` (right-stripped), re-tokenised",
    "context_tokens_original": "tokens of the whole book read so far + prompt",
    "context_cut_exact": "the cut text re-tokenises to exactly the ids longread keeps",
    "choices": "the wrong options in the question's order, then the true one LAST, each after a space",
    "label": "index of the true option in `choices`",
    "choice_tokens": "tokens each choice scores after the context (lm-eval's boundary rule)",
    "choice_tokens_original": "the same (options are never cut)",
    "choices_cut_exact": "always true (options are never cut)",
    "tokenizer": "the tokenizer every token count is in",
    "seed": "None (the build's seed is not stored with the questions)",
}


def true_last(question: ReadAlongQuestion) -> list[int]:
    """The task's option indices in choice order: the wrong ones as asked, the true one last."""
    order = [index for index in range(len(question.options)) if index != question.answer]
    return [*order, question.answer]


def _item(
    question: ReadAlongQuestion,
    scenes_read: int,
    length: int,
    context: Cut,
    choices: Sequence[Cut],
    tokenizer: str,
) -> dict[str, Any]:
    order = true_last(question)
    return {
        "id": question.id,
        "prefix_length": length,
        "book_id": question.book_id,
        "when_asked": question.when_asked,
        "scenes_read": scenes_read,
        "retention_demand": question.retention_demand,
        "retention_bucket": retention_bucket(question.retention_demand),
        "question_type": question.question_type,
        "true_scene": question.true_scene,
        "none_is_answer": question.none_is_answer,
        "option_kinds": [question.options[index].source.kind for index in order],
        "option_order": order,
        **cut_fields(context, choices, tokenizer),
        "seed": None,
    }


def _scoring_rule(settings: NarrativeXLSettings) -> str:
    primary = "acc_mean" if settings.scoring == "mean" else "acc"
    return f"{SCORING_RULE}; longread's prediction (scoring={settings.scoring}) is {primary}"


def export_items(request: ExportRequest) -> Exported:
    """``longread export narrativexl``: the read-along questions of a build folder (every file it holds
    is named in the card), at the flags' lengths, else 1024, 4096 and 16384."""
    resolved = resolve_settings(request, READALONG_PREFIX_LENGTHS)
    reading = load_reading_books(request.data)
    files = build_files(request)
    built = export_readalong(
        reading, request.tokenizer, request.tokenizer_name, resolved, request.show_progress
    )
    return Exported(built, files)


def export_readalong(
    books: Sequence[ReadingBook],
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    resolved: ResolvedSettings,
    show_progress: bool = False,
) -> TaskItems:
    """Every question of every book at every prefix length, each item formed by the task's own
    log-likelihood request (its prompt, separator, ``options_only``), the context cut to min(N, window)."""
    if not books:
        raise BadInputError(
            None, "the data holds no NarrativeXL book", "build some with `longread build narrativexl`"
        )
    settings = resolved.task_settings
    assert isinstance(settings, NarrativeXLSettings)
    if settings.answer_mode != "loglikelihood":
        raise LongreadError(
            "the narrativexl export is multiple choice: answer_mode=generate (a generated option number) "
            "is not exported — drop -o answer_mode"
        )
    result = TaskItems(
        task=TASK,
        tokenizer=tokenizer_name,
        prefix_lengths=tuple(sorted(set(resolved.prefix_lengths))),
        suffix_tokens=None,
        citation=CITATION,
        scoring_rule=_scoring_rule(settings),
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
    task = NarrativeXLTask(settings)
    questions = sum(len(book.questions) for book in books)
    with Progress(questions, "exporting narrativexl", "question", enabled=show_progress) as progress:
        for book in books:
            _book_items(task, book, tokenizer, tokenizer_name, result, progress)
    return result


def _book_items(
    task: NarrativeXLTask,
    book: ReadingBook,
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    result: TaskItems,
    progress: Progress,
) -> None:
    """The items of one book's questions, in reading order, formed by the task's own requests."""
    questions = {question.id: question for question in book.questions}
    for sample in task.samples(book):
        request = task.request(sample, LOGLIKELIHOOD)
        assert isinstance(request, LoglikelihoodRequest)
        question = questions[sample.key]
        scenes_read = 0 if task.settings.options_only else question.when_asked + 1
        texts = [request.continuations[index] for index in true_last(question)]
        choices = [cut_continuation(tokenizer, request.context, text, WHOLE) for text in texts]
        for length in result.prefix_lengths:
            budget = min(length, request.max_context_tokens or length)
            context = cut_context(tokenizer, request.context, budget)
            count(result.counts[length], context, choices, length)
            item = _item(question, scenes_read, length, context, choices, tokenizer_name)
            result.items[length].append(item)
        progress.update(items=1)
