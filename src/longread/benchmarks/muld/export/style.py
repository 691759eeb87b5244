"""MuLD style change as harness items: one same-author question per pair of adjacent paragraphs.

longread's style-change baseline is not a language model but a same-author classifier on each pair
of adjacent paragraphs (``--model style:…``). A harness evaluates language models, so the export
asks one: the boundary between paragraphs k and k+1 of a document becomes a multiple-choice item —
both paragraphs, then "Were paragraphs A and B written by the same author? Answer:", the choices
" yes" and " no" — and the chosen answer is the predicted change (" no" is a change, PAN's 1; the
first highest log-prob wins a tie, as lm-eval's ``acc``). PAN's F1 is pooled over every boundary of
every document (the official evaluator's rule), so items per pair lose nothing: the lm-eval task's
``pan_f1`` sums [TP, FP, FN, TN] over its items with longread's functions, and
``multi_author_accuracy`` regroups them by document. These are a language model's numbers: they are
not comparable with a run of longread's classifier.

Each paragraph is cut to ``paragraph_tokens`` tokens of the export's tokenizer (``-o
paragraph_tokens=N``, default 256): A from the left (its end, at the boundary, kept), B from the right
(its start kept), at points whose text re-tokenises to exactly N tokens; what is cut is counted.
Documents of one paragraph have no boundary and give no item (counted in the scoring rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from longread.benchmarks.muld.export.generate import CITATION, load_instances
from longread.benchmarks.muld.exported import INSTANCES_CONFIG
from longread.benchmarks.muld.tasks.style import paragraphs_of, truth_of
from longread.errors import LongreadError
from longread.exportable import Cut, CutCounts, Exported, ExportRequest, TaskItems, cut_fields
from longread.exportable.cuts import cut_context, cut_continuation
from longread.text.tokenizers import NamedTokenizer

TASK = "muld/style-change"
PROMPT = (
    "Paragraph A:\n{first}\n\nParagraph B:\n{second}\n\n"
    "Were paragraphs A and B written by the same author? Answer:"
)
CHOICES = (" yes", " no")
"""Index = PAN's change label: " yes" (same author) is 0, " no" (a change) is 1."""
PARAGRAPH_TOKENS = 256
WHOLE = 1 << 30
SETTINGS = ("paragraph_tokens",)
FEATURES = {
    "id": "DOCUMENT#k: the boundary between paragraphs k and k+1 of the document",
    "prefix_length": "paragraph_tokens: the most tokens kept of each paragraph",
    "document": "the longread instance id of the document",
    "boundary": "k, the boundary's index (PAN's `changes` index)",
    "boundaries": "boundaries of the document (its paragraphs less one)",
    "context": "paragraph A (cut from the left), paragraph B (cut from the right), then the question",
    "context_tokens": "tokens of `context` (right-stripped), re-tokenised",
    "context_tokens_original": "tokens of the question with both paragraphs whole",
    "context_cut_exact": "both cuts re-tokenise to exactly the budget's ids",
    "choices": '" yes" (same author) and " no" (a change)',
    "label": "PAN's change label at this boundary: 1 (a change, the answer ' no') or 0",
    "choice_tokens": "tokens each choice scores after the context",
    "choice_tokens_original": "the same (the choices are never cut)",
    "choices_cut_exact": "always true",
    "paragraph_tokens_original": "tokens of paragraphs A and B whole",
    "tokenizer": "the tokenizer every token count is in",
}
UTILS_STYLE = '''

def process_results_style(doc, results):
    """The first highest log-prob is the answer; " no" (index 1) is a predicted change, as PAN's 1."""
    lls = [float(result[0]) for result in results]
    predicted = _first_best(lls)
    pair = (doc["document"], doc["label"], predicted)
    return {"acc": float(predicted == doc["label"]), "pan_f1": pair, "multi_author_accuracy": pair}


def pan_f1(pairs):
    """PAN's style-change F1 pooled over every boundary (needs longread installed)."""
    from longread.metrics.style_change import change_counts, style_change_f1_from_counts, sum_change_counts

    return style_change_f1_from_counts(
        sum_change_counts(change_counts([truth], [guess], document) for document, truth, guess in pairs)
    )


def multi_author_accuracy(pairs):
    """Documents told right as single- or multi-author (any change predicted iff any change true)."""
    documents = {}
    for document, truth, guess in pairs:
        seen = documents.setdefault(document, [0, 0])
        seen[0] |= truth
        seen[1] |= guess
    return sum(truth == guess for truth, guess in documents.values()) / len(documents)
'''
LM_EVAL_METRICS = (
    ("acc", "mean"),
    ("pan_f1", "!function utils.pan_f1"),
    ("multi_author_accuracy", "!function utils.multi_author_accuracy"),
)


def _budget(settings: Mapping[str, str]) -> int:
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise LongreadError(
            f"{TASK} exports take -o paragraph_tokens=N only, not {', '.join(unknown)}: the export asks a "
            "language model, the task's settings are its classifier's"
        )
    value = settings.get("paragraph_tokens", str(PARAGRAPH_TOKENS))
    if not value.isdigit() or int(value) < 1:
        raise LongreadError(f"-o paragraph_tokens={value}: give a whole number of tokens, at least 1")
    return int(value)


def _pair(tokenizer: NamedTokenizer, first: str, second: str, budget: int) -> tuple[Cut, int, int]:
    """(the context cut, tokens of A whole, tokens of B whole)."""
    head = cut_context(tokenizer, first, budget)
    tail = cut_continuation(tokenizer, "", second, budget)
    text = PROMPT.format(first=head.text, second=tail.text)
    whole = PROMPT.format(first=first, second=second)
    tokens = len(tokenizer.encode(text.rstrip()).ids)
    original = len(tokenizer.encode(whole.rstrip()).ids)
    context = Cut(text, tokens, original, cut=head.cut or tail.cut, exact=head.exact and tail.exact)
    return context, head.tokens_original, tail.tokens_original


def export_items(request: ExportRequest) -> Exported:
    """``longread export muld/style-change``: one item per paragraph boundary, in the tokenizer given."""
    settings = dict(request.settings)
    built = export_style_change(request.data, request.tokenizer, request.tokenizer_name, settings)
    return Exported(built, request.files)


def export_style_change(
    data: Path, tokenizer: NamedTokenizer, tokenizer_name: str, settings: Mapping[str, str]
) -> TaskItems:
    """One item per boundary of every readable document; the problems of the data are an error."""
    budget = _budget(settings)
    _, instances, whole = load_instances(TASK, {}, data)
    counts, rows, single = CutCounts(), [], 0
    for instance in instances:
        changes = [int(change) for change in truth_of(instance)["changes"]]
        paragraphs = paragraphs_of(instance.document)
        single += not changes
        for k, change in enumerate(changes):
            context, first, second = _pair(tokenizer, paragraphs[k], paragraphs[k + 1], budget)
            choices = [cut_continuation(tokenizer, context.text, choice, WHOLE) for choice in CHOICES]
            counts.items += 1
            counts.context_cut += context.cut
            counts.context_inexact += not context.exact
            rows.append(
                {
                    "id": f"{instance.id}#{k}",
                    "prefix_length": budget,
                    "document": instance.id,
                    "boundary": k,
                    "boundaries": len(changes),
                    **cut_fields(context, choices, tokenizer_name),
                    "label": change,
                    "paragraph_tokens_original": [first, second],
                }
            )
    return TaskItems(
        task=TASK,
        tokenizer=tokenizer_name,
        prefix_lengths=(budget,),
        suffix_tokens=None,
        citation=CITATION,
        scoring_rule=f"one item per paragraph boundary: the answer is the first highest log-prob of "
        f'{list(CHOICES)}, " no" a change; PAN F1 pooled over all boundaries; a language model\'s '
        f"answers, not longread's same-author classifier; {single} single-paragraph document(s) give no "
        "item",
        features=FEATURES,
        build_command=f"longread build {TASK} --source … --out DATA.jsonl",
        collections={"ao3": len(instances)},
        books=len(instances),
        seeds=[None],
        unit="document(s)",
        items={budget: rows},
        whole=(INSTANCES_CONFIG, whole),
        counts={budget: counts},
        settings=dict(settings),
        lm_eval_utils=UTILS_STYLE,
        lm_eval_metrics=LM_EVAL_METRICS,
        lm_eval_process_results="process_results_style",
    )
