"""An inspect_ai task file over the exported JSONL: ``multiple_choice()`` solver, ``choice()`` scorer.

    inspect eval DIR/longread_TASK.py -T prefix_length=2048 --model vllm/… (or hf/…)

inspect asks the model to answer with a letter and scores the generated letter:
a different metric from longread's and lm-eval's log-likelihood ranking. The
choices are shuffled with the build's seed (the exported order puts the gold last). Every other
field of an item (retention demand, question type …) is the sample's metadata, in inspect's log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from longread.export.card import ExportFacts
from longread.export.inspect_generate import write_inspect_generate
from longread.export.lm_eval_task import task_name, write_jsonl

TASK_FILE = '''"""longread {task} for inspect_ai (exported by longread: {command}).

Tokenizer `{tokenizer}`; prefix lengths {lengths}; {suffix}.
inspect scores the generated letter (multiple_choice + choice), not log-likelihoods.
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

HERE = Path(__file__).resolve().parent
PREFIX_LENGTHS = {lengths}
SHUFFLE_SEED = {seed}


def record_to_sample(record):
    return Sample(
        input=record["context"],
        choices=record["choices"],
        target=chr(ord("A") + record["label"]),
        id=f"{{record['id']}}@{{record['prefix_length']}}",
        metadata={{key: value for key, value in record.items() if key not in ("context", "choices")}},
    )


@task
def {name}(prefix_length: int = {first}):
    if prefix_length not in PREFIX_LENGTHS:
        raise ValueError(f"prefix_length {{prefix_length}} was not exported; use one of {{PREFIX_LENGTHS}}")
    data = HERE / "data" / f"{name}_{{prefix_length}}.jsonl"
    dataset = json_dataset(str(data), record_to_sample, shuffle_choices=SHUFFLE_SEED)
    return Task(dataset=dataset, solver=multiple_choice(), scorer=choice())
'''


def write_inspect(out: Path, items: dict[int, list[dict[str, Any]]], facts: ExportFacts) -> list[Path]:
    if facts.export.output_type == "generate_until":
        return write_inspect_generate(out, items, facts)
    written = []
    for length, rows in items.items():
        data = out / "data" / f"{task_name(facts.task, length)}.jsonl"
        write_jsonl(rows, data)
        written.append(data)
    seed = next((s for s in facts.seeds if s is not None), 0)
    text = TASK_FILE.format(
        task=facts.task,
        command=facts.provenance,
        tokenizer=facts.tokenizer,
        lengths=repr(tuple(facts.prefix_lengths)),
        suffix="choices kept whole"
        if facts.suffix_tokens is None
        else f"choices cut to {facts.suffix_tokens} tokens",
        seed=seed,
        name=task_name(facts.task),
        first=facts.prefix_lengths[0],
    )
    task_file = out / f"{task_name(facts.task)}.py"
    task_file.write_text(text, encoding="utf-8")
    return [*written, task_file]
