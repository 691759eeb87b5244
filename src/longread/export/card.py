"""What every export states about itself: the dataset card and the manifest beside the files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

LICENCES = {
    "gutenberg": "Project Gutenberg texts: public domain in the USA; the Project Gutenberg License applies "
    "to the ebooks as distributed (https://www.gutenberg.org/policy/license.html)",
    "pg19": "PG-19 (Project Gutenberg books before 1919): Apache-2.0 for the collection, the texts public "
    "domain in the USA",
    "ao3": "Archive of Our Own works: copyright of their authors; for research use only, do not redistribute",
    "plain": "plain-text books given by the user: the licence of those files",
}
FEATURES = {
    "id": "the longread instance id",
    "prefix_length": "the prefix length N of this config (tokens of the export's tokenizer)",
    "book_id": "the book the instance comes from",
    "book_title": "its title",
    "collection": "the collection the book came from (gutenberg, pg19, ao3, plain …)",
    "suffix_type": "chapter, cause or dialogue boundary",
    "negatives_from": "in-book or out-of-book negatives",
    "chapter_index": "index of the chapter the gold suffix starts",
    "context": "the prefix, cut from the left to N tokens (whole if shorter)",
    "context_tokens": "tokens of `context` (right-stripped), re-tokenised",
    "context_tokens_original": "tokens of the whole stored prefix",
    "context_cut_exact": "the cut text re-tokenises to exactly the ids longread keeps",
    "choices": "the negatives, then the gold LAST, each cut from the right to suffix_tokens",
    "label": "index of the gold in `choices`",
    "choice_tokens": "tokens each choice scores after the context (lm-eval's boundary rule)",
    "choice_tokens_original": "tokens of each whole candidate",
    "choices_cut_exact": "every choice cut re-tokenises to exactly the ids longread keeps",
    "tokenizer": "the tokenizer every token count is in",
    "seed": "the build's seed",
}


@dataclass
class ExportFacts:
    task: str
    target: str
    tokenizer: str
    prefix_lengths: tuple[int, ...]
    suffix_tokens: int
    data_files: list[tuple[str, str]]
    """(path, sha256) of every data file read."""
    build_command: str
    export_command: str
    citation: str
    tie_rule: str
    collections: dict[str, int]
    books: int
    seeds: list[int | None]
    counts: dict[int, dict[str, int]] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "target": self.target,
            "tokenizer": self.tokenizer,
            "prefix_lengths": list(self.prefix_lengths),
            "suffix_tokens": self.suffix_tokens,
            "data_files": [{"path": path, "sha256": sha} for path, sha in self.data_files],
            "build_command": self.build_command,
            "export_command": self.export_command,
            "tie_rule": self.tie_rule,
            "collections": self.collections,
            "books": self.books,
            "seeds": self.seeds,
            "counts": {str(length): counts for length, counts in self.counts.items()},
        }


def _yaml_header(configs: Sequence[tuple[str, str]], split: str) -> list[str]:
    lines = [
        "---",
        "license: other",
        "language:",
        "- en",
        "task_categories:",
        "- multiple-choice",
        "configs:",
    ]
    for index, (name, path) in enumerate(configs):
        lines += [f"- config_name: {name}", "  data_files:", f"  - split: {split}", f"    path: {path}"]
        if index == 0:
            lines.append("  default: true")
    return [*lines, "---", ""]


def card_text(facts: ExportFacts, configs: Sequence[tuple[str, str]], split: str) -> str:
    lines = _yaml_header(configs, split)
    lines += [
        f"# longread {facts.task}",
        "",
        f"Exported by longread from {facts.books} book(s) ({_collections(facts)}). Every token count is in "
        f"the `{facts.tokenizer}` tokenizer: the context is cut from the left to the config's prefix length, "
        f"every choice from the right to {facts.suffix_tokens} tokens, at points whose text re-tokenises to "
        "exactly that many tokens.",
        "",
        "```python",
        "import datasets",
        f'ds = datasets.load_dataset("PATH/TO/THIS/FOLDER", "{configs[0][0]}")["{split}"]',
        "```",
        "",
        "## Provenance",
        "",
        f"- build command (equivalent): `{facts.build_command}`",
        f"- export command: `{facts.export_command}`",
        f"- seed(s): {', '.join(str(seed) for seed in facts.seeds)}",
        f"- tokenizer: `{facts.tokenizer}`; suffix tokens: {facts.suffix_tokens}",
        *(f"- data file `{path}` sha256 `{sha}`" for path, sha in facts.data_files),
        f"- scoring rule: {facts.tie_rule}",
        "",
        "## Licences of the sources",
        "",
        *(
            f"- {name}: {LICENCES.get(name, 'unknown: check the source')}"
            for name in sorted(facts.collections)
        ),
        "",
        "## Counts per config (split `" + split + "`)",
        "",
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
    lines += ["", "## Features", ""]
    lines += [f"- `{name}`: {text}" for name, text in FEATURES.items()]
    lines += ["", "## Citation", "", "```bibtex", facts.citation, "```", ""]
    return "\n".join(lines)


def _collections(facts: ExportFacts) -> str:
    return ", ".join(f"{name}: {n} instances" for name, n in sorted(facts.collections.items()))
