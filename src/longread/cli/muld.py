"""``longread build muld/TASK``: MuLD's builders from the command line, one command per row of
:data:`MULD_BUILDERS`.

Every builder writes the published layout (JSON lines, ``.bz2`` by suffix) and
``<out>.report.json`` (what was kept, what was dropped and why), and prints a
one-line summary. ``--source`` is repeated; what each position means is in each
command's help.

A row names the command and the builder's adapter: a function ``(sources, out, length_filter,
*, its options) -> report`` whose keyword-only parameters, ``Annotated`` as in any command, are
the options only that builder has, and whose docstring is the command's help. Every command takes
the shared options of :func:`build_muld` first (``--source``, ``--out``, ``--min-tokens``,
``--tokenizer``), then the adapter's. Adding a builder is one adapter and one row.

No ``from __future__ import annotations`` here: typer reads the commands' signatures from these
functions, so their annotations are objects, not strings (only ``LengthFilter``, imported for type
checking alone, is quoted; no command option refers to it).
"""

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import typer

from longread.cli.build import ExcludeRememberedOption, StrictMemoryOption, remembered_books
from longread.cli.options import (
    LengthTokenizerOption,
    MinTokensOption,
    MuldOutOption,
    SourceOption,
    fail,
)
from longread.errors import LongreadError

if TYPE_CHECKING:
    from longread.benchmarks.muld.builders.report import LengthFilter

muld_app = typer.Typer()


class BuilderReport(Protocol):
    """What every MuLD builder returns: its one-line summary (the rest is in ``<out>.report.json``)."""

    def summary(self) -> str: ...


@dataclass(frozen=True)
class MuldBuilder:
    """One MuLD builder as the command ``longread build muld/NAME``.

    ``adapter(sources, out, length_filter, **options)`` runs the builder; its keyword-only
    parameters are the command's own options and its docstring the command's help. ``sources`` is
    how many ``--source`` the builder needs and ``source_names`` what they are (said when too few
    are given). ``out`` is the annotation of ``--out`` (a builder that writes a folder says so).
    """

    name: str
    adapter: Callable[..., BuilderReport]
    sources: int = 0
    source_names: str = ""
    out: Any = MuldOutOption

    @property
    def command_name(self) -> str:
        return f"muld/{self.name}"

    @property
    def help(self) -> str:
        return inspect.getdoc(self.adapter) or ""

    def options(self) -> list[inspect.Parameter]:
        """The adapter's keyword-only parameters: the options only this builder has."""
        parameters = inspect.signature(self.adapter).parameters.values()
        return [p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]

    def signature(self) -> inspect.Signature:
        """The command's signature: :func:`build_muld`'s shared options, then :meth:`options`."""
        shared = [
            p.replace(annotation=self.out) if p.name == "out" else p
            for p in inspect.signature(build_muld).parameters.values()
            if p.name != "builder" and p.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        keyword = inspect.Parameter.KEYWORD_ONLY
        return inspect.Signature([p.replace(kind=keyword) for p in [*shared, *self.options()]])


def build_muld(
    builder: MuldBuilder,
    source: SourceOption,
    out: MuldOutOption,
    min_tokens: MinTokensOption = 10_000,
    tokenizer: LengthTokenizerOption = "gpt2",
    **options: Any,
) -> None:
    """Run one builder with its options; print its report's summary, or the error (exit code 2)."""
    from longread.benchmarks.muld.builders.report import LengthFilter

    if len(source) < builder.sources:
        raise typer.BadParameter(
            f"give {builder.source_names} as --source, in that order", param_hint="--source"
        )
    try:
        report = builder.adapter(
            source, out, LengthFilter(min_tokens=min_tokens, tokenizer=tokenizer), **options
        )
    except (LongreadError, ValueError) as exc:
        raise fail(exc) from None
    typer.echo(report.summary())
    typer.echo(f"wrote {out} (+ report beside it)")


def muld_command(builder: MuldBuilder) -> Callable[..., None]:
    """The command of one row: :func:`build_muld` with the builder bound, carrying the signature typer
    reads the options from (a ``partial`` has none of its own, nor annotations)."""
    command = partial(build_muld, builder)
    vars(command).update(__signature__=builder.signature(), __annotations__={})
    return command


def vlsp(
    sources: Sequence[Path],
    out: Path,
    length_filter: "LengthFilter",
    *,
    long_abstract: Annotated[
        bool, typer.Option(help="Also use the abstract found in the paper as a reference, where present.")
    ] = True,
) -> BuilderReport:
    """VLSP summarisation from thesis folders (<id>.main.txt[.gz], <id>.abstract[-long].txt[.gz])."""
    from longread.benchmarks.muld.builders.vlsp import build_vlsp

    return build_vlsp(sources, out, length_filter=length_filter, long_abstract=long_abstract)


StyleChangeOutOption = Annotated[
    Path,
    typer.Option(
        "--out",
        help="A folder (style_change_{train,validation,test}.jsonl.bz2 inside) or a template "
        "NAME.jsonl[.bz2] (NAME_train… beside it).",
    ),
]


def style_change(
    sources: Sequence[Path],
    out: Path,
    length_filter: "LengthFilter",
    *,
    seed: Annotated[int, typer.Option(help="Seed of splits, author counts, paragraph draws.")] = 0,
    max_authors: Annotated[int, typer.Option(help="Most authors in one document (1 to this).")] = 4,
    documents: Annotated[
        str, typer.Option(help="Documents per split: N, all, or train=N,validation=M,test=K.")
    ] = "all",
    test_relationship: Annotated[
        str, typer.Option(help="AO3: the relationship held out for test ('' for none).")
    ] = "Draco Malfoy/Harry Potter",
    test_author: Annotated[
        list[str] | None, typer.Option(help="Gutenberg: an author held out for test (repeat).")
    ] = None,
    test_fraction: Annotated[float, typer.Option(help="Share of authors held out for test.")] = 0.2,
    validation_fraction: Annotated[float, typer.Option(help="Share of authors for validation.")] = 0.1,
    min_paragraph_words: Annotated[int, typer.Option(help="Shorter paragraphs are not drawn.")] = 20,
    pool_by: Annotated[
        str, typer.Option(help="Draw a document's authors from one: auto, relationship, fandom or all.")
    ] = "auto",
    typography: Annotated[
        str, typer.Option(help="plain: quotes/dashes made uniform (they give editions away); keep.")
    ] = "plain",
) -> BuilderReport:
    """Style change from AO3 works JSONL or Gutenberg books: 1–4 authors' paragraphs, PAN truth."""
    from longread.benchmarks.muld.builders.style_change import build_style_change, parse_documents

    return build_style_change(
        sources,
        out,
        length_filter=length_filter,
        seed=seed,
        max_authors=max_authors,
        documents=parse_documents(documents),
        test_relationship=test_relationship or None,
        test_authors=tuple(test_author or ()),
        test_fraction=test_fraction,
        validation_fraction=validation_fraction,
        min_paragraph_words=min_paragraph_words,
        pool_by=pool_by,
        typography=typography,
    )


def narrativeqa(
    sources: Sequence[Path],
    out: Path,
    length_filter: "LengthFilter",
    *,
    split: Annotated[
        list[str] | None, typer.Option(help="train, valid or test (repeat; default all).")
    ] = None,
    exclude_remembered: ExcludeRememberedOption = None,
    strict_memory: StrictMemoryOption = False,
) -> BuilderReport:
    """NarrativeQA: --source CHECKOUT (documents.csv, qaps.csv, tmp/) [--source STORIES_DIR]. With
    --exclude-remembered, the questions on Gutenberg books the probed model remembers are left out (a
    film script has no book a probe could judge: kept, and counted in the report)."""
    from longread.benchmarks.muld.builders.narrativeqa import build_narrativeqa

    return build_narrativeqa(
        sources[0],
        out,
        stories=sources[1] if len(sources) > 1 else None,
        length_filter=length_filter,
        splits=tuple(split or ("train", "valid", "test")),
        exclude=remembered_books(exclude_remembered, strict_memory),
    )


def hotpotqa(
    sources: Sequence[Path],
    out: Path,
    length_filter: "LengthFilter",
    *,
    seed: Annotated[int, typer.Option(help="Seed of the page order.")] = 0,
) -> BuilderReport:
    """HotpotQA lengthened: --source HOTPOT.json --source PAGES.jsonl (title, text, links)."""
    from longread.benchmarks.muld.builders.hotpotqa import build_hotpotqa

    return build_hotpotqa(sources[0], sources[1], out, seed=seed, length_filter=length_filter)


def character_archetype(sources: Sequence[Path], out: Path, length_filter: "LengthFilter") -> BuilderReport:
    """Character archetype: --source SCRIPTS_DIR --source LABELS.csv (script, character, label)."""
    from longread.benchmarks.muld.builders.archetype import build_archetype

    return build_archetype(sources[0], sources[1], out, length_filter=length_filter)


def opensubtitles(
    sources: Sequence[Path],
    out: Path,
    length_filter: "LengthFilter",
    *,
    source_lang: Annotated[str, typer.Option(help="Language translated from.")] = "en",
    target_lang: Annotated[str, typer.Option(help="Language translated into.")] = "de",
    min_overlap: Annotated[float | None, typer.Option(help="Drop links with a lower OPUS overlap.")] = None,
) -> BuilderReport:
    """OpenSubtitles: --source ALIGNMENT.xml[.gz] --source FOLDER (the alignment paths start there)."""
    from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles

    return build_opensubtitles(
        sources[0],
        sources[1],
        out,
        source_lang=source_lang,
        target_lang=target_lang,
        min_overlap=min_overlap,
        length_filter=length_filter,
    )


MULD_BUILDERS: tuple[MuldBuilder, ...] = (
    MuldBuilder("vlsp", vlsp),
    MuldBuilder("style-change", style_change, out=StyleChangeOutOption),
    MuldBuilder("narrativeqa", narrativeqa, sources=1, source_names="the narrativeqa checkout"),
    MuldBuilder(
        "hotpotqa", hotpotqa, sources=2, source_names="the HotpotQA JSON and the Wikipedia pages JSONL"
    ),
    MuldBuilder(
        "character-archetype",
        character_archetype,
        sources=2,
        source_names="the scripts folder and the labels CSV",
    ),
    MuldBuilder(
        "opensubtitles",
        opensubtitles,
        sources=2,
        source_names="the OPUS alignment file and the subtitles folder",
    ),
)
"""Every ``longread build muld/NAME`` command, in the order ``longread build --help`` lists them."""

for _builder in MULD_BUILDERS:
    muld_app.command(_builder.command_name, help=_builder.help)(muld_command(_builder))
