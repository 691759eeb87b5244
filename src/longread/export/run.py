"""``longread export TASK --data FILE|DIR --to hf|lm-eval|inspect --out DIR``: checks, cuts, writes.

The folder is written next to ``out`` under a temporary name and renamed into
place at the end, so a failed export leaves no half-written folder.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.narrativexl.load import load_book_summaries, load_reading_books
from longread.errors import BadInputError, LongreadError
from longread.export.card import ExportFacts
from longread.export.chapterbreak import export_chapterbreak
from longread.export.hf import write_hf
from longread.export.inspect_task import write_inspect
from longread.export.items import TaskItems
from longread.export.lm_eval_task import write_lm_eval
from longread.export.muld_archetype import TASK as ARCHETYPE_TASK
from longread.export.muld_archetype import export_archetype
from longread.export.muld_style import TASK as STYLE_TASK
from longread.export.muld_style import export_style_change
from longread.export.narrativexl import export_readalong
from longread.export.narrativexl_summaries import export_summaries
from longread.export.settings import resolve_settings
from longread.export.tokenizer import export_tokenizer
from longread.text.tokenizers import NamedTokenizer

TARGETS = ("hf", "lm-eval", "inspect")
TASKS = (
    "chapterbreak",
    "narrativexl",
    "narrativexl-summaries",
    "muld/vlsp",
    "muld/narrativeqa",
    "muld/hotpotqa",
    "muld/style-change",
    "muld/character-archetype",
    "muld/opensubtitles",
)
"""Tasks this version exports (every task; OpenSubtitles in its whole-film strategy only)."""
RUN_DIR_FILES = ("config.json", "samples.jsonl", "results.json")
Writer = Callable[[Path, dict[int, list[dict[str, Any]]], ExportFacts], list[Path]]
WRITERS: dict[str, Writer] = {"hf": write_hf, "lm-eval": write_lm_eval, "inspect": write_inspect}


@dataclass(frozen=True)
class ExportOptions:
    tokenizer: str = "gpt2"
    prefix_lengths: tuple[int, ...] | None = None
    """None: ``-o prefix_lengths`` or the task's default (ChapterBreak 256…8192, summaries 256,1024,4096)."""
    suffix_tokens: int | None = None
    """ChapterBreak only (None: ``-o suffix_tokens`` or 128): NarrativeXL summaries are scored whole."""
    overwrite: bool = False
    max_length: int | None = None
    """MuLD: the evaluated model's window, the prompt is fitted to (as ``longread eval --max-length``)."""
    settings: tuple[tuple[str, str], ...] = ()
    """The task's settings (``-o KEY=VALUE``), as ``longread eval`` takes them (:mod:`.settings`)."""
    show_progress: bool = False
    """Items cut so far, rate and ETA on stderr (the command line shows it)."""


@dataclass
class ExportReport:
    out: Path
    facts: ExportFacts
    files: list[Path]

    def summary_lines(self) -> list[str]:
        lines = [f"wrote {self.facts.target} export of {self.facts.task} to {self.out}"]
        if self.facts.export.output_type == "generate_until":
            for window, counts in self.facts.counts.items():
                lines.append(
                    f"  model window {window}: {counts['items']} items, {counts['context_cut']} documents "
                    f"cut to fit, {counts['context_inexact']} prompts not re-tokenising exactly"
                )
            return lines
        for length, counts in self.facts.counts.items():
            lines.append(
                f"  prefix {length}: {counts['items']} items, {counts['context_cut']} contexts cut "
                f"({counts['context_inexact']} not exact, {counts['short_prefix']} shorter than {length}), "
                f"{counts['candidates_cut']} choices cut ({counts['candidates_inexact']} not exact)"
            )
        return lines


def check_task(task: str) -> None:
    if task not in TASKS:
        raise LongreadError(f"cannot export task {task!r}: this version exports {', '.join(TASKS)}")


def check_target(target: str) -> None:
    if target not in TARGETS:
        raise LongreadError(f"unknown export target {target!r} — use one of {', '.join(TARGETS)}")


def data_files(data: Path) -> list[Path]:
    """The data file, or the ``*.jsonl`` files of a folder (sorted); a run directory is refused."""
    if not data.exists():
        raise BadInputError(data, "does not exist", "give the data `longread build` wrote")
    if data.is_file():
        return [data]
    found = [name for name in RUN_DIR_FILES if (data / name).is_file()]
    if found:
        raise BadInputError(
            data,
            f"is a run directory (it holds {', '.join(found)}), not benchmark data",
            "export the data the run read: its config.json names the file under data.path",
        )
    return sorted(data.glob("*.jsonl"))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prepare_out(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder", "choose another --out")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise BadInputError(
            out, "exists and is not empty", "choose an empty or new folder, or pass --overwrite to replace it"
        )


def _task_items(
    task: str, data: Path, tokenizer: NamedTokenizer, options: ExportOptions
) -> tuple[TaskItems, list[Path]]:
    """The task's items and the files they were read from."""
    files = data_files(data)
    if task == STYLE_TASK:
        return export_style_change(data, tokenizer, options.tokenizer, dict(options.settings)), files
    if task.startswith("muld/"):
        return _muld_items(task, data, options), files
    resolved = resolve_settings(task, options.prefix_lengths, options.suffix_tokens, options.settings)
    if task == "narrativexl":
        reading = load_reading_books(data)
        if data.is_dir():
            files = sorted(path for path in data.rglob("*") if path.is_file())
        return export_readalong(reading, tokenizer, options.tokenizer, resolved, options.show_progress), files
    if task == "narrativexl-summaries":
        books = load_book_summaries(data)
        if data.is_dir():
            files = sorted(path for path in data.rglob("*") if path.is_file())
        return export_summaries(books, tokenizer, options.tokenizer, resolved, options.show_progress), files
    if not files:
        raise BadInputError(data, "holds no *.jsonl file", "give the JSONL file `longread build` wrote")
    if any(part.suffix not in (".jsonl", ".gz") for part in files):
        raise BadInputError(files[0], "is not a JSONL file", "give the JSONL file `longread build` wrote")
    instances = [instance for path in files for instance in load_instances(path)]
    assert resolved.suffix_tokens is not None
    built = export_chapterbreak(
        instances,
        tokenizer,
        options.tokenizer,
        resolved.prefix_lengths,
        resolved.suffix_tokens,
        options.show_progress,
    )
    built.settings = resolved.given
    return built, files


def _muld_items(task: str, data: Path, options: ExportOptions) -> TaskItems:
    from transformers import AutoTokenizer

    from longread.export.muld import export_muld
    from longread.export.tokenizer import model_folder
    from longread.models.hf.backend import HFTokenEncoder

    if options.max_length is None:
        raise LongreadError(f"exporting {task} needs --max-length: the window of the model it is for")
    name = options.tokenizer
    if name == "gpt2" or not (name in ("smollm2", "gemma3") or name.startswith("hf:")):
        raise LongreadError(
            f"exporting {task} needs the evaluated model's own tokenizer (smollm2, gemma3 or hf:FOLDER), "
            f"not {name!r}: the prompt is fitted to its window token by token"
        )
    folder = Path(name.removeprefix("hf:")) if name.startswith("hf:") else model_folder(name)
    encoder = HFTokenEncoder(AutoTokenizer.from_pretrained(folder, local_files_only=True))
    if task == ARCHETYPE_TASK:
        has_start = encoder.start_token_id is not None
        tokenizer = export_tokenizer(name)
        settings = dict(options.settings)
        return export_archetype(data, tokenizer, name, options.max_length, has_start, settings)
    return export_muld(task, data, encoder, name, options.max_length, dict(options.settings))


def export_task(
    task: str, data: Path, target: str, out: Path, options: ExportOptions, command: str = ""
) -> ExportReport:
    check_task(task)
    check_target(target)
    prepare_out(out, options.overwrite)
    tokenizer = export_tokenizer(options.tokenizer)
    built, files = _task_items(task, data, tokenizer, options)
    facts = ExportFacts(
        export=built,
        target=target,
        data_files=[(path.name, _sha256(path)) for path in files],
        export_command=command or f"longread export {task} --to {target}",
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp makes it private
    try:
        written = WRITERS[target](staging, built.items, facts)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return ExportReport(out, facts, [out / path.relative_to(staging) for path in written])
