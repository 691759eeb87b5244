"""MuLD character archetype as multiple choice: the task's own log-likelihood request, " Hero" / " Villain".

longread's default method (``loglikelihood``) scores `` Hero`` and `` Villain`` after the chunks that
mention the character (in document order) and the question; the higher wins, a tie is its own answer
(``tie``, wrong, and a class of its own in the macro F1). The export stores that request per
instance: the context cut from the left as longread's backend cuts it for a window of ``--max-length``
tokens (room for the longest choice, and for the start token when the model has one), at a point whose
text re-tokenises to exactly the kept tokens; the choices whole. The lm-eval task computes ``acc`` and
``macro_f1`` with longread's own rule (``utils.process_results_archetype``, a tie is ``tie``) and its
classification scores (longread installed where lm-eval runs). ``-o method=generate`` (a few generated
tokens, parsed) is not exported.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from longread.benchmarks.muld.export.generate import CITATION, load_instances, model_encoder
from longread.benchmarks.muld.exported import INSTANCES_CONFIG
from longread.benchmarks.muld.tasks.archetype import LABELS, canonical_label
from longread.errors import BadInputError, LongreadError
from longread.exportable import CutCounts, Exported, ExportRequest, TaskItems, cut_fields
from longread.exportable.cuts import cut_context, cut_continuation
from longread.models.requests import LOGLIKELIHOOD, LoglikelihoodRequest
from longread.text.tokenizers import NamedTokenizer

TASK = "muld/character-archetype"
WHOLE = 1 << 30
FEATURES = {
    "id": "the longread instance id",
    "prefix_length": "the model window the context was cut for",
    "character": "the character asked about",
    "truth": "Hero or Villain (the builders' labels, canonical)",
    "context": "the chunks mentioning the character, in document order, then the question, cut from the "
    "left as longread's backend cuts it for the window",
    "context_tokens": "tokens of `context` (right-stripped), re-tokenised",
    "context_tokens_original": "tokens of the whole context",
    "context_cut_exact": "the cut text re-tokenises to exactly the ids longread keeps",
    "choices": '" Hero" and " Villain", as longread scores them',
    "label": "index of the truth in `choices`",
    "choice_tokens": "tokens each choice scores after the context",
    "choice_tokens_original": "the same (the choices are never cut)",
    "choices_cut_exact": "always true",
    "tokenizer": "the tokenizer every token count is in",
}
UTILS_ARCHETYPE = '''

def process_results_archetype(doc, results):
    """longread's rule: the higher log-prob of " Hero" / " Villain" wins; equal values are a "tie"."""
    lls = [float(result[0]) for result in results]
    best = max(lls)
    winners = [label for label, value in zip(("Hero", "Villain"), lls) if value == best]
    prediction = winners[0] if len(winners) == 1 else "tie"
    return {"acc": float(prediction == doc["truth"]), "macro_f1": (doc["truth"], prediction)}


def macro_f1(pairs):
    """Macro F1 over the labels in truth and predictions (a tie is a class), longread's function."""
    from longread.metrics.classification import classification_scores

    return classification_scores([truth for truth, _ in pairs], [guess for _, guess in pairs]).macro_f1
'''
LM_EVAL_METRICS = (("acc", "mean"), ("macro_f1", "!function utils.macro_f1"))


def export_items(request: ExportRequest) -> Exported:
    """``longread export muld/character-archetype``: contexts cut for the window (``--max-length``) in
    the evaluated model's own tokenizer (room for its start token when it has one)."""
    has_start = model_encoder(request).start_token_id is not None
    assert request.max_length is not None
    settings = dict(request.settings)
    built = export_archetype(
        request.data, request.tokenizer, request.tokenizer_name, request.max_length, has_start, settings
    )
    return Exported(built, request.files)


def export_archetype(
    data: Path,
    tokenizer: NamedTokenizer,
    tokenizer_name: str,
    max_length: int,
    has_start_token: bool,
    settings: Mapping[str, str],
) -> TaskItems:
    """One item per readable instance; the problems of the data are an error."""
    if settings.get("method", "loglikelihood") != "loglikelihood":
        raise LongreadError(
            f"{TASK} is exported by log-likelihood (multiple choice) only; -o method=generate is not exported"
        )
    task, instances, whole = load_instances(TASK, dict(settings), data)
    counts, rows = CutCounts(), []
    for instance in instances:
        (sample,) = task.samples(instance)
        request = task.request(sample, LOGLIKELIHOOD)
        assert isinstance(request, LoglikelihoodRequest)
        truth = canonical_label(instance.references[0])
        if truth not in LABELS:
            raise BadInputError(
                instance.source,
                f"instance {instance.id}: the label {instance.references[0]!r} is neither Hero nor Villain",
                "fix the label or drop the instance",
                line=instance.line,
            )
        context_text = request.context
        choices = [cut_continuation(tokenizer, context_text, text, WHOLE) for text in request.continuations]
        room = max_length + 1 - max(choice.tokens for choice in choices) - has_start_token
        context = cut_context(tokenizer, request.context, room)
        counts.items += 1
        counts.context_cut += context.cut
        counts.context_inexact += not context.exact
        rows.append(
            {
                "id": instance.id,
                "prefix_length": max_length,
                "character": instance.question,
                "truth": truth,
                **cut_fields(context, choices, tokenizer_name),
                "label": LABELS.index(truth),
            }
        )
    return TaskItems(
        task=TASK,
        tokenizer=tokenizer_name,
        prefix_lengths=(max_length,),
        suffix_tokens=None,
        citation=CITATION,
        scoring_rule='the higher log-prob of " Hero" / " Villain" is the answer, equal values a "tie" '
        "(wrong, and a class of its own in the macro F1), as longread; macro F1 over the labels in truth and "
        f"predictions; contexts cut for a model window of {max_length}",
        features=FEATURES,
        build_command=f"longread build {TASK} --source … --out DATA.jsonl",
        collections={"muld": len(instances)},
        books=len(instances),
        seeds=[None],
        unit="document(s)",
        items={max_length: rows},
        whole=(INSTANCES_CONFIG, whole),
        counts={max_length: counts},
        settings=dict(settings),
        lm_eval_metrics=LM_EVAL_METRICS,
        lm_eval_process_results="process_results_archetype",
        lm_eval_utils=UTILS_ARCHETYPE,
    )
