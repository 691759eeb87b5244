"""An lm-evaluation-harness task folder: one ``multiple_choice`` task per prefix length and a group.

    lm_eval --model hf --model_args pretrained=MODEL_FOLDER --include_path DIR \\
        --tasks longread_TASK_2048        # or the group: longread_TASK

The data sit beside the YAML (``data/*.jsonl``) and ``utils.py`` loads them with
``datasets`` — no hub. The request lm-eval forms is longread's: the context is the
item's ``context`` as is, each choice follows it with no delimiter
(``target_delimiter: ""``), and lm-eval moves the context's trailing whitespace
to the choice exactly as longread does, so both tokenise the same strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.export.card import ExportFacts

UTILS = '''"""Loads longread's exported items for lm-evaluation-harness, offline, from files beside it."""

import json
from pathlib import Path

import datasets

HERE = Path(__file__).resolve().parent


def load_docs(data_file, **_metadata):
    """The items of one exported JSONL file as the task's only split, ``test``."""
    lines = (HERE / data_file).read_text(encoding="utf-8").split("\\n")
    items = [json.loads(line) for line in lines if line.strip()]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(items)})


def _first_best(values):
    """Index of the first highest value (as numpy's argmax)."""
    return max(range(len(values)), key=lambda index: (values[index], -index))


def process_results_mean(doc, results):
    """acc by summed log-prob and acc_mean by mean log-prob per token (the tokens longread scores)."""
    lls = [float(result[0]) for result in results]
    means = [ll / n for ll, n in zip(lls, doc["choice_tokens"])]
    label = doc["label"]
    return {"acc": float(_first_best(lls) == label), "acc_mean": float(_first_best(means) == label)}
'''

UTILS_TEXT = '''

def process_results_text(doc, results):
    """longread's own text metrics (needs longread installed): the prediction stripped, as longread's."""
    from {module} import {function}

    scores = {function}(results[0].strip(), doc["references"])
    stats = scores.pop("bleu_stats")
    return {**scores, "bleu1": stats, "bleu4": stats}


def _bleu(order):
    def aggregate(stats):
        from longread.metrics.text_overlap import bleu_from_stats, sum_bleu_stats

        return bleu_from_stats(sum_bleu_stats(stats), max_ngram_order=order)

    return aggregate


bleu1 = _bleu(1)
bleu4 = _bleu(4)
'''
BOS_NOTE = (
    "longread puts the model's start token first when its tokenizer adds one (Gemma's <bos>): "
    "run such models with --model_args ...,add_bos_token=True"
)
TEXT_METRICS = ("rouge_l", "meteor", "token_f1", "bleu1", "bleu4")


def task_name(task: str, length: int | None = None) -> str:
    base = "longread_" + task.replace("-", "_").replace("/", "_")
    return base if length is None else f"{base}_{length}"


def write_jsonl(items: Sequence[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n")


def _q(value: object) -> str:
    """A YAML scalar (JSON strings and numbers are valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def _metric_list(facts: ExportFacts) -> tuple[tuple[str, str], ...]:
    """(metric, aggregation) of a multiple-choice task."""
    if facts.export.lm_eval_metrics:
        return facts.export.lm_eval_metrics
    return (("acc", "mean"), ("acc_mean", "mean")) if facts.export.mean_metric else (("acc", "mean"),)


def _metric_names(facts: ExportFacts) -> tuple[str, ...]:
    return tuple(name for name, how in _metric_list(facts) if how == "mean")


def _metrics(facts: ExportFacts) -> list[str]:
    process = facts.export.lm_eval_process_results
    if process is None and facts.export.mean_metric:
        process = "process_results_mean"
    lines = [f"process_results: !function utils.{process}"] if process else []
    lines.append("metric_list:")
    for metric, how in _metric_list(facts):
        lines += [f"  - metric: {metric}", f"    aggregation: {how}", "    higher_is_better: true"]
    return lines


def _task_yaml(facts: ExportFacts, length: int, data_file: str) -> str:
    return "\n".join(
        [
            f"# Exported by longread: {facts.provenance}",
            f"# {BOS_NOTE}",
            f"task: {task_name(facts.task, length)}",
            "custom_dataset: !function utils.load_docs",
            "dataset_kwargs:",
            f"  data_file: {_q(data_file)}",
            "output_type: multiple_choice",
            "test_split: test",
            "doc_to_text: context",
            "doc_to_choice: choices",
            "doc_to_target: label",
            'target_delimiter: ""',
            *_metrics(facts),
            "metadata:",
            "  version: 1.0",
            f"  tokenizer: {_q(facts.tokenizer)}",
            f"  prefix_length: {length}",
            f"  suffix_tokens: {_q(facts.suffix_tokens)}",
            f"  tie_rule: {_q(facts.tie_rule)}",
            "",
        ]
    )


def _group_yaml(facts: ExportFacts) -> str:
    return "\n".join(
        [
            f"group: {task_name(facts.task)}",
            "task:",
            *(f"  - {task_name(facts.task, length)}" for length in facts.prefix_lengths),
            "aggregate_metric_list:",
            *(
                line
                for metric in _metric_names(facts)
                for line in (f"  - metric: {metric}", "    aggregation: mean", "    weight_by_size: true")
            ),
            "metadata:",
            "  version: 1.0",
            f"  tokenizer: {_q(facts.tokenizer)}",
            "",
        ]
    )


def _generate_yaml(facts: ExportFacts, rows: Sequence[dict[str, Any]], data_file: str) -> str:
    """A ``generate_until`` task: greedy, stopped by the end-of-text token or the task's stop strings (the
    same for every item), longread's metrics."""
    metrics = []
    for metric in TEXT_METRICS:
        how = f"!function utils.{metric}" if metric.startswith("bleu") else "mean"
        metrics += [f"  - metric: {metric}", f"    aggregation: {how}", "    higher_is_better: true"]
    return "\n".join(
        [
            f"# Exported by longread: {facts.provenance}",
            "# Run without --apply_chat_template: longread gives the model the prompt as plain text.",
            f"# {facts.tie_rule}",
            f"task: {task_name(facts.task)}",
            "custom_dataset: !function utils.load_docs",
            "dataset_kwargs:",
            f"  data_file: {_q(data_file)}",
            "output_type: generate_until",
            "test_split: test",
            "doc_to_text: prompt",
            'doc_to_target: "{{references[0]}}"',
            "generation_kwargs:",
            f"  until: {_q(sorted({stop for row in rows for stop in row['stop']}))}",
            "  do_sample: false",
            f"  max_gen_toks: {max(row['max_new_tokens'] for row in rows)}",
            "process_results: !function utils.process_results_text",
            "metric_list:",
            *metrics,
            "metadata:",
            "  version: 1.0",
            f"  tokenizer: {_q(facts.tokenizer)}",
            f"  max_length: {facts.prefix_lengths[0]}",
            f"  scoring_rule: {_q(facts.tie_rule)}",
            "",
        ]
    )


def _write_generate(out: Path, items: dict[int, list[dict[str, Any]]], facts: ExportFacts) -> list[Path]:
    ((_, rows),) = items.items()
    data_file = f"data/{task_name(facts.task)}.jsonl"
    write_jsonl(rows, out / data_file)
    yaml = out / f"{task_name(facts.task)}.yaml"
    yaml.write_text(_generate_yaml(facts, rows, data_file), encoding="utf-8")
    module, _, function = facts.export.text_scores.partition(":")
    utils = UTILS + UTILS_TEXT.replace("{module}", module).replace("{function}", function)
    (out / "utils.py").write_text(utils, encoding="utf-8")
    return [out / data_file, yaml, out / "utils.py"]


def write_lm_eval(out: Path, items: dict[int, list[dict[str, Any]]], facts: ExportFacts) -> list[Path]:
    if facts.export.output_type == "generate_until":
        return _write_generate(out, items, facts)
    written = []
    for length, rows in items.items():
        data_file = f"data/{task_name(facts.task, length)}.jsonl"
        write_jsonl(rows, out / data_file)
        yaml = out / f"{task_name(facts.task, length)}.yaml"
        yaml.write_text(_task_yaml(facts, length, data_file), encoding="utf-8")
        written += [out / data_file, yaml]
    group = out / f"_{task_name(facts.task)}.yaml"
    group.write_text(_group_yaml(facts), encoding="utf-8")
    (out / "utils.py").write_text(UTILS + facts.export.lm_eval_utils, encoding="utf-8")
    return [*written, group, out / "utils.py"]
