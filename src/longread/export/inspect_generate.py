"""An inspect_ai task file for ``generate_until`` items: ``generate()`` and longread's text metrics.

    inspect eval DIR/longread_TASK.py --model openai-api/NAME/MODEL --model-base-url URL/v1

Each sample's input is the exported prompt, fitted to the model's window as longread fits it. longread
gives a model that prompt as plain text; a chat provider wraps it in the model's chat template, which
changes what the model reads. The task therefore asks an OpenAI-compatible server that takes a
``chat_template`` in the request (vLLM does) for a template that renders the prompt verbatim
(``PASSTHROUGH_TEMPLATE``, sent as ``extra_body``; ``-T verbatim=false`` turns it off). With it, inspect's
greedy generations are longread's (tested against the vLLM server the served-model tests use). The
scorer calls longread's own text metrics (longread must be installed where inspect runs): ROUGE-L,
METEOR and token F1 averaged over samples, BLEU-1/4 from the summed statistics (corpus BLEU).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.export.card import ExportFacts
from longread.export.lm_eval_task import task_name, write_jsonl

PASSTHROUGH_TEMPLATE = "{% for message in messages %}{{ message['content'] }}{% endfor %}"
TASK_FILE = '''"""longread {task} for inspect_ai (exported by longread: {command}).

Prompts fitted to a {window}-token window in the `{tokenizer}` tokenizer; greedy, at most {max_tokens}
new tokens, stopped at {stops}. The model must read each prompt verbatim (no chat template): with an
OpenAI-compatible vLLM server the task sends PASSTHROUGH_TEMPLATE as the request's chat_template
(-T verbatim=false to leave the server's template). Scores are longread's own text metrics.
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Target, mean, metric, scorer
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "{name}.jsonl"
MAX_TOKENS = {max_tokens}
STOP = {stop}
PASSTHROUGH_TEMPLATE = {template!r}


def record_to_sample(record):
    return Sample(
        input=record["prompt"],
        target=record["references"],
        id=record["id"],
        metadata={{key: value for key, value in record.items() if key != "prompt"}},
    )


def _bleu(order):
    @metric(name=f"bleu{{order}}")
    def bleu():
        def compute(scores):
            from longread.metrics.text_overlap import bleu_from_stats, sum_bleu_stats

            # inspect hands a metric Scores, or SampleScores holding them, by the version and annotations
            stats = [getattr(score, "score", score).metadata["bleu_stats"] for score in scores]
            return bleu_from_stats(sum_bleu_stats(stats), max_ngram_order=order)

        return compute

    return bleu()


@scorer(metrics=[{{"rouge_l": [mean()], "meteor": [mean()], "token_f1": [mean()]}}, _bleu(1), _bleu(4)])
def longread_text_scores():
    async def score(state: TaskState, target: Target) -> Score:
        from {scores_module} import {scores_function}

        prediction = state.output.completion.strip()
        scores = {scores_function}(prediction, list(target.target))
        stats = scores.pop("bleu_stats")
        return Score(value=scores, answer=prediction, metadata={{"bleu_stats": stats}})

    return score


@task
def {name}(verbatim: bool = True):
    config = GenerateConfig(
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        stop_seqs=STOP or None,
        extra_body={{"chat_template": PASSTHROUGH_TEMPLATE}} if verbatim else None,
    )
    return Task(
        dataset=json_dataset(str(DATA), record_to_sample),
        solver=generate(),
        scorer=longread_text_scores(),
        config=config,
    )
'''


def _stops(rows: Sequence[dict[str, Any]]) -> list[str]:
    return sorted({stop for row in rows for stop in row["stop"]})


def write_inspect_generate(
    out: Path, items: dict[int, list[dict[str, Any]]], facts: ExportFacts
) -> list[Path]:
    ((window, rows),) = items.items()
    name = task_name(facts.task)
    data = out / "data" / f"{name}.jsonl"
    write_jsonl(rows, data)
    stops = _stops(rows)
    max_tokens = max(row["max_new_tokens"] for row in rows)
    scores_module, _, scores_function = facts.export.text_scores.partition(":")
    text = TASK_FILE.format(
        scores_module=scores_module,
        scores_function=scores_function,
        task=facts.task,
        command=facts.provenance,
        window=window,
        tokenizer=facts.tokenizer,
        max_tokens=max_tokens,
        stops=", ".join(repr(stop) for stop in stops) or "the end-of-text token",
        name=name,
        stop=repr(stops),
        template=PASSTHROUGH_TEMPLATE,
    )
    task_file = out / f"{name}.py"
    task_file.write_text(text, encoding="utf-8")
    return [data, task_file]
