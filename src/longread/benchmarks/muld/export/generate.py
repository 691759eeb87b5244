"""MuLD generation tasks as harness items: the prompt exactly as longread forms it.

longread fits a :class:`~longread.models.requests.DocumentPrompt` to the model's window token by
token (the document cut, the instruction never; :func:`longread.models.prompt_fit.fit_document_prompt`).
A harness reads text, so the export fits the prompt the same way in the evaluated model's own
tokenizer and window (``--tokenizer``, ``--max-length``), decodes the kept document and stores the
prompt text per item, checking it re-tokenises to exactly longread's ids (``prompt_exact``; the items
where it does not are counted). longread renders a document prompt as plain text (no chat template):
the lm-eval task must be run without ``--apply_chat_template``, the inspect task asks the server for a
verbatim template (``longread.export.inspect_generate``). The hf export also holds every record as
read (``longread_instances``), so ``longread eval muld/TASK --data DIR`` reads the folder back.

Only tasks that make one generation per instance are exported: MuLD NarrativeQA and HotpotQA (the
document or its retrieved chunks, then the question; stopped at a newline) and VLSP, whose default
``sections`` baseline makes one generation per section, so VLSP is exported with ``mode=first`` (the
paper's first tokens → abstract), and OpenSubtitles, whose default baseline translates chunk by
chunk, is exported with ``strategy=whole`` (the film's subtitles cut to the window less
``whole_output_tokens``, translated at once, scored against the whole reference as longread scores
that strategy); the chunk-by-chunk baseline is not exported. Style change and character archetype are
exported as multiple choice (:mod:`.style`, :mod:`.archetype`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.exported import INSTANCES_CONFIG
from longread.errors import BadInputError, LongreadError
from longread.evaluation.registry import make_task
from longread.exportable import CutCounts, Exported, ExportRequest, TaskItems
from longread.models.hf.backend import HFTokenEncoder
from longread.models.prompt_fit import fit_document_prompt
from longread.models.requests import GENERATE, DocumentPrompt, GenerateRequest
from longread.models.requests.groups import RequestGroup

CITATION = """@inproceedings{hudson-al-moubayed-2022-muld,
    title = "{M}u{LD}: The Multitask Long Document Benchmark",
    author = "Hudson, George and Al Moubayed, Noura",
    booktitle = "Proceedings of the Thirteenth Language Resources and Evaluation Conference",
    year = "2022",
    publisher = "European Language Resources Association",
    url = "https://aclanthology.org/2022.lrec-1.392",
    pages = "3675--3685",
}"""
FEATURES = {
    "id": "the longread instance id",
    "prompt": "the prompt text exactly as longread gives it to the model (document cut, instruction whole)",
    "references": "the reference answers (metrics take the best over them)",
    "max_new_tokens": "most tokens generated (longread's generation budget for the task)",
    "stop": "strings that end the generation (besides the end-of-text token), as longread's task stops",
    "prompt_tokens": "tokens of `prompt` in the export's tokenizer",
    "document_tokens_original": "tokens of the whole document",
    "document_tokens_kept": "tokens of the document kept in the prompt",
    "prompt_exact": "`prompt` re-tokenises to exactly the ids longread gives the model",
    "tokenizer": "the tokenizer every token count is in",
}
DEFAULT_SETTINGS = {"muld/vlsp": {"mode": "first"}, "muld/opensubtitles": {"strategy": "whole"}}
"""Settings an export needs where the task's defaults make several generations per instance."""


def export_items(request: ExportRequest) -> Exported:
    """``longread export muld/vlsp|narrativeqa|hotpotqa|opensubtitles``: the prompts fitted to the
    window (``--max-length``) in the evaluated model's own tokenizer."""
    encoder = model_encoder(request)
    assert request.max_length is not None
    settings = dict(request.settings)
    return Exported(
        export_muld(
            request.task, request.data, encoder, request.tokenizer_name, request.max_length, settings
        ),
        request.files,
    )


def model_encoder(request: ExportRequest) -> HFTokenEncoder:
    """The evaluated model's own tokenizer, as longread's backend encodes: a MuLD prompt is fitted to the
    model's window token by token, so ``--max-length`` and a model tokenizer are required."""
    from transformers import AutoTokenizer

    from longread.exportable.tokenizer import model_folder

    if request.max_length is None:
        raise LongreadError(f"exporting {request.task} needs --max-length: the window of the model it is for")
    name = request.tokenizer_name
    if name == "gpt2" or not (name in ("smollm2", "gemma3") or name.startswith("hf:")):
        raise LongreadError(
            f"exporting {request.task} needs the evaluated model's own tokenizer (smollm2, gemma3 or "
            f"hf:FOLDER), not {name!r}: the prompt is fitted to its window token by token"
        )
    folder = Path(name.removeprefix("hf:")) if name.startswith("hf:") else model_folder(name)
    return HFTokenEncoder(AutoTokenizer.from_pretrained(folder, local_files_only=True))


def load_instances(
    task_name: str, settings: dict[str, str], data: Path
) -> tuple[Any, list[Any], list[dict[str, Any]]]:
    """(the task with these settings, its instances in ``data``, the records they were read from as the
    hf export's ``longread_instances`` rows), in one read; unreadable items or none at all are an error
    naming the data (an export must not silently leave items out)."""
    task: Any = make_task(task_name, settings)
    instances, records = task.load_with_records(data)
    problems = task.input_problems()
    if problems:
        raise BadInputError(data, f"{len(problems)} item(s) could not be read: {problems[0]}", "fix the data")
    if not instances:
        raise BadInputError(
            data, f"holds no {task_name} instance", f"build some with `longread build {task_name}`"
        )
    return task, instances, records


def _single_request(task: Any, sample: Any) -> GenerateRequest:
    request = task.request(sample, GENERATE)
    if isinstance(request, RequestGroup) and len(request.parts) == 1:
        request = request.parts[0]  # OpenSubtitles' whole film: a group of one
    if not isinstance(request, GenerateRequest):
        raise LongreadError(
            f"{task.name} with these settings makes several generations per instance; lm-eval's "
            "generate_until makes one — export it with a one-prompt setting (muld/vlsp: -o mode=first)"
        )
    return request


def _prompt(request: GenerateRequest, encoder: HFTokenEncoder, max_length: int) -> tuple[str, list[int], Any]:
    """(prompt text, longread's ids, the fit) for a window of ``max_length`` tokens."""
    room = max_length - request.max_tokens
    prompt = request.prompt
    if isinstance(prompt, DocumentPrompt):
        fitted = fit_document_prompt(prompt, encoder.encode_plain, room, bos_id=encoder.start_token_id)
        head = (encoder.start_token_id is not None) + len(encoder.encode_plain(prompt.preamble or ""))
        document_ids = list(fitted.token_ids[head : head + fitted.document_tokens_kept])
        text = prompt.preamble + str(encoder.tokenizer.decode(document_ids)) + prompt.instruction
        return text, list(fitted.token_ids), fitted
    if isinstance(prompt, str):
        ids = encoder.encode(prompt)
        if len(ids) > room:
            raise LongreadError(
                "a plain prompt longer than the window is not exported (longread cuts its start)"
            )
        return prompt, ids, None
    raise LongreadError(f"a {type(prompt).__name__} prompt is not exported (chat prompts need a template)")


def export_muld(
    task_name: str,
    data: Path,
    encoder: HFTokenEncoder,
    tokenizer_name: str,
    max_length: int,
    settings: dict[str, str],
) -> TaskItems:
    """One ``generate_until`` item per readable instance; the problems of the data are an error."""
    chosen = {**DEFAULT_SETTINGS.get(task_name, {}), **settings}
    if task_name == "muld/opensubtitles" and chosen.get("strategy") != "whole":
        raise LongreadError(
            "muld/opensubtitles translates chunk by chunk and scores the joined film by line pairs, which "
            "one generate_until item per film cannot do — export it with -o strategy=whole, the default "
            "of the export"
        )
    task, instances, whole = load_instances(task_name, chosen, data)
    counts = CutCounts()
    rows = []
    for instance in instances:
        (sample,) = task.samples(instance)
        request = _single_request(task, sample)
        text, ids, fitted = _prompt(request, encoder, max_length)
        exact = encoder.encode(text) == ids
        counts.items += 1
        counts.context_cut += bool(fitted is not None and fitted.document_cut)
        counts.context_inexact += not exact
        rows.append(
            {
                "id": instance.id,
                "prompt": text,
                "references": list(instance.references),
                "max_new_tokens": request.max_tokens,
                "stop": list(request.stop),
                "prompt_tokens": len(ids),
                "document_tokens_original": fitted.document_tokens_original if fitted else None,
                "document_tokens_kept": fitted.document_tokens_kept if fitted else None,
                "prompt_exact": exact,
                "tokenizer": tokenizer_name,
            }
        )
    return _task_items(task_name, tokenizer_name, max_length, chosen, rows, counts, instances, whole)


def _stops(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The task's stop strings: one list for every item (lm-eval's ``until`` is per task)."""
    stops = {tuple(row["stop"]) for row in rows}
    if len(stops) != 1:
        raise LongreadError(
            f"the items stop at different strings ({sorted(stops)}); one task cannot say that"
        )
    return list(stops.pop())


def _task_items(
    task_name: str,
    tokenizer_name: str,
    max_length: int,
    settings: dict[str, str],
    rows: list[dict[str, Any]],
    counts: CutCounts,
    instances: Sequence[Any],
    whole: list[dict[str, Any]],
) -> TaskItems:
    options = " ".join(f"-o {key}={value}" for key, value in sorted(settings.items()))
    return TaskItems(
        task=task_name,
        tokenizer=tokenizer_name,
        prefix_lengths=(max_length,),
        suffix_tokens=None,
        citation=CITATION,
        scoring_rule=f"greedy generation, to the end-of-text token or a stop string {_stops(rows)}; the "
        f"prediction is the generated text stripped; longread's settings: {options or 'defaults'}; model "
        f"window {max_length}",
        features=FEATURES,
        build_command=f"longread build {task_name} --source … --out DATA.jsonl",
        collections={"muld": len(instances)},
        books=len(instances),
        seeds=[None],
        output_type="generate_until",
        text_scores="longread.benchmarks.muld.tasks.text_scores:score_text",
        unit="document(s)",
        whole=(INSTANCES_CONFIG, whole),
        items={max_length: rows},
        counts={max_length: counts},
        settings=dict(settings),
    )
