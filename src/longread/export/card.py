"""What every export states about itself: the dataset card and the manifest beside the files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from longread.exportable.items import TaskItems

LICENCES = {
    "gutenberg": "Project Gutenberg texts: public domain in the USA; the Project Gutenberg License applies "
    "to the ebooks as distributed (https://www.gutenberg.org/policy/license.html)",
    "pg19": "PG-19 (Project Gutenberg books before 1919): Apache-2.0 for the collection, the texts public "
    "domain in the USA",
    "ao3": "Archive of Our Own works: copyright of their authors; for research use only, do not redistribute",
    "plain": "plain-text books given by the user: the licence of those files",
}
"""Licences of the collections books come from (an export adds its own: ``TaskItems.licences``)."""


@dataclass
class ExportFacts:
    """The task's items and where they came from: what the card, the YAML and the manifest state."""

    export: TaskItems
    target: str
    data_files: list[tuple[str, str]]
    """(file name, sha256) of every data file read: named, never by a path of the exporter's machine."""
    export_command: str

    @property
    def task(self) -> str:
        return self.export.task

    @property
    def provenance(self) -> str:
        """The export command and the data it read, by file name and sha256 (for task files' headers)."""
        data = "; ".join(f"{name} sha256 {sha}" for name, sha in self.data_files)
        return f"{self.export_command} (data: {data})"

    @property
    def tokenizer(self) -> str:
        return self.export.tokenizer

    @property
    def prefix_lengths(self) -> tuple[int, ...]:
        return self.export.prefix_lengths

    @property
    def suffix_tokens(self) -> int | None:
        return self.export.suffix_tokens

    @property
    def tie_rule(self) -> str:
        return self.export.scoring_rule

    @property
    def seeds(self) -> list[int | None]:
        return self.export.seeds

    @property
    def counts(self) -> dict[int, dict[str, int]]:
        return {length: counts.as_dict() for length, counts in self.export.counts.items()}

    def manifest(self) -> dict[str, Any]:
        export = self.export
        return {
            "task": export.task,
            "target": self.target,
            "tokenizer": export.tokenizer,
            "prefix_lengths": list(export.prefix_lengths),
            "suffix_tokens": export.suffix_tokens,
            "data_files": [{"path": path, "sha256": sha} for path, sha in self.data_files],
            "build_command": export.build_command,
            "export_command": self.export_command,
            "scoring_rule": export.scoring_rule,
            "task_settings": dict(sorted(export.settings.items())),
            "collections": export.collections,
            "books": export.books,
            "seeds": export.seeds,
            "counts": {str(length): counts for length, counts in self.counts.items()},
        }


def _yaml_header(configs: Sequence[tuple[str, str]], split: str, category: str) -> list[str]:
    lines = [
        "---",
        "license: other",
        "language:",
        "- en",
        "task_categories:",
        f"- {category}",
        "configs:",
    ]
    for index, (name, path) in enumerate(configs):
        lines += [f"- config_name: {name}", "  data_files:", f"  - split: {split}", f"    path: {path}"]
        if index == 0:
            lines.append("  default: true")
    return [*lines, "---", ""]


def card_text(
    facts: ExportFacts,
    configs: Sequence[tuple[str, str]],
    split: str,
    whole: tuple[str, str] | None = None,
) -> str:
    """The card; ``whole`` (config, path) names the config holding the instances as longread built them."""
    generate = facts.export.output_type == "generate_until"
    category = "text-generation" if generate else "multiple-choice"
    lines = _yaml_header([*configs, *([whole] if whole else [])], split, category)
    lines += [f"# longread {facts.task}", "", _intro(facts), ""]
    lines += [
        "```python",
        "import datasets",
        f'ds = datasets.load_dataset("PATH/TO/THIS/FOLDER", "{configs[0][0]}")["{split}"]',
        "```",
        "",
        "## Provenance",
        "",
        f"- build command (equivalent): `{facts.export.build_command}`",
        f"- export command: `{facts.export_command}`",
        f"- seed(s): {', '.join(str(seed) for seed in facts.seeds)}",
        f"- tokenizer: `{facts.tokenizer}`; suffix tokens: {facts.suffix_tokens or 'whole choices'}",
        *(f"- data file `{path}` sha256 `{sha}`" for path, sha in facts.data_files),
        f"- scoring rule: {facts.tie_rule}",
        f"- task settings (`-o`): {_settings(facts)}",
        "",
        "## Licences of the sources",
        "",
        *(
            f"- {name}: {({**LICENCES, **facts.export.licences}).get(name, 'unknown: check the source')}"
            for name in sorted(facts.export.collections)
        ),
        "",
        "## Counts per config (split `" + split + "`)",
        "",
        *_counts_table(facts, configs, generate),
    ]
    lines += ["", "## Features", ""]
    lines += [f"- `{name}`: {text}" for name, text in facts.export.features.items()]
    if whole:
        lines += [
            "",
            f"The config `{whole[0]}` holds every instance whole, as longread read it (one JSON record per "
            f"row): `longread eval {facts.task} --data THIS/FOLDER` reads it and "
            "scores exactly what it scores from the data it was exported from.",
        ]
    lines += ["", "## Citation", "", "```bibtex", facts.export.citation, "```", ""]
    return "\n".join(lines)


def _intro(facts: ExportFacts) -> str:
    generate = facts.export.output_type == "generate_until"
    source = f"Exported by longread from {facts.export.books} {facts.export.unit} ({_collections(facts)})."
    if generate:
        return (
            f"{source} One prompt per instance, fitted to a model window of the config's length in the "
            f"`{facts.tokenizer}` tokenizer exactly as longread fits it (the document cut, the instruction "
            "whole), with the generation budget and stop strings longread uses; `prompt_exact` says whether "
            "the prompt's text re-tokenises to exactly longread's ids."
        )
    return (
        f"{source} Every token count is in the `{facts.tokenizer}` tokenizer: the context is cut from the "
        f"left to the config's prefix length, {_choices_cut(facts)}, at points whose text re-tokenises to "
        "exactly that many tokens."
    )


def _counts_table(facts: ExportFacts, configs: Sequence[tuple[str, str]], generate: bool) -> list[str]:
    if generate:
        lines = ["| config | items | documents cut to fit | prompts not exact |", "|---|---|---|---|"]
        for (name, _), length in zip(configs, facts.prefix_lengths, strict=True):
            c = facts.counts[length]
            lines.append(f"| {name} | {c['items']} | {c['context_cut']} | {c['context_inexact']} |")
        return lines
    lines = [
        "| config | items | contexts cut | short prefixes (kept whole) | contexts not exact | "
        "choices cut | choices not exact |",
        "|---|---|---|---|---|---|---|",
    ]
    for (name, _), length in zip(configs, facts.prefix_lengths, strict=True):
        c = facts.counts[length]
        lines.append(
            f"| {name} | {c['items']} | {c['context_cut']} | {c['short_prefix']} | {c['context_inexact']} "
            f"| {c['candidates_cut']} | {c['candidates_inexact']} |"
        )
    return lines


def _collections(facts: ExportFacts) -> str:
    return ", ".join(f"{name}: {n} instances" for name, n in sorted(facts.export.collections.items()))


def _choices_cut(facts: ExportFacts) -> str:
    if facts.suffix_tokens is None:
        return "every choice kept whole"
    return f"every choice cut from the right to {facts.suffix_tokens} tokens"


def _settings(facts: ExportFacts) -> str:
    given = facts.export.settings
    return ", ".join(f"`{key}={value}`" for key, value in sorted(given.items())) or "the task's defaults"
