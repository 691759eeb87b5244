"""``longread export TASK --data FILE|DIR --to hf|lm-eval|inspect --out DIR``: checks, asks the task's
declared export for its items (:mod:`longread.exportable`), writes them.

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

from longread.errors import BadInputError, LongreadError
from longread.export.card import ExportFacts
from longread.export.hf import write_hf
from longread.export.inspect_task import write_inspect
from longread.export.lm_eval_task import write_lm_eval
from longread.exportable import ExportRequest, exporter_of
from longread.exportable.tokenizer import export_tokenizer

TARGETS = ("hf", "lm-eval", "inspect")
RUN_DIR_FILES = ("config.json", "samples.jsonl", "results.json")
Writer = Callable[[Path, dict[int, list[dict[str, Any]]], ExportFacts], list[Path]]
WRITERS: dict[str, Writer] = {"hf": write_hf, "lm-eval": write_lm_eval, "inspect": write_inspect}


@dataclass(frozen=True)
class ExportOptions:
    tokenizer: str = "gpt2"
    prefix_lengths: tuple[int, ...] | None = None
    """None: ``-o prefix_lengths`` or the task's default lengths (``longread export TASK --help``)."""
    suffix_tokens: int | None = None
    """Choices cut to their first N tokens (None: ``-o suffix_tokens`` or the task's default); a task
    that scores its choices whole ignores it."""
    overwrite: bool = False
    max_length: int | None = None
    """The evaluated model's window, for tasks that fit a prompt to it (as ``longread eval --max-length``)."""
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


def export_task(
    task: str, data: Path, target: str, out: Path, options: ExportOptions, command: str = ""
) -> ExportReport:
    make_items = exporter_of(task)
    check_target(target)
    prepare_out(out, options.overwrite)
    request = ExportRequest(
        task=task,
        data=data,
        files=data_files(data),
        tokenizer=export_tokenizer(options.tokenizer),
        tokenizer_name=options.tokenizer,
        prefix_lengths=options.prefix_lengths,
        suffix_tokens=options.suffix_tokens,
        max_length=options.max_length,
        settings=options.settings,
        show_progress=options.show_progress,
    )
    exported = make_items(request)
    built, files = exported.items, exported.files
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
