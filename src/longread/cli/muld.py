"""``longread build muld/TASK`` and ``longread train style-pairs``: MuLD's builders from the command line.

Every builder writes the published layout (JSON lines, ``.bz2`` by suffix) and
``<out>.report.json`` (what was kept, what was dropped and why), and prints a
one-line summary. ``--source`` is repeated; what each position means is in each
command's help.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from longread.cli.options import fail
from longread.errors import LongreadError

SourceOption = Annotated[
    list[Path], typer.Option("--source", help="Source path (repeat; see the command help).")
]
OutOption = Annotated[Path, typer.Option("--out", help="Output file: FILE.jsonl or FILE.jsonl.bz2.")]
MinTokensOption = Annotated[
    int, typer.Option(help="The paper's filter: drop documents shorter than this many tokens.")
]
TokenizerOption = Annotated[str, typer.Option(help="Tokenizer of the length filter (gpt2, or hf:FOLDER).")]


def _filter(min_tokens: int, tokenizer: str) -> Any:
    from longread.benchmarks.muld.builders.report import LengthFilter

    return LengthFilter(min_tokens=min_tokens, tokenizer=tokenizer)


def _build(out: Path, make: Callable[[], Any]) -> None:
    """Run one builder; print its report's summary, or the error (exit code 2)."""
    try:
        report = make()
    except (LongreadError, ValueError) as exc:
        raise fail(exc) from None
    typer.echo(report.summary())
    typer.echo(f"wrote {out} (+ report beside it)")


def _sources(source: list[Path], count: int, names: str) -> list[Path]:
    if len(source) < count:
        raise typer.BadParameter(f"give {names} as --source, in that order", param_hint="--source")
    return source


def register(build_app: typer.Typer, train_app: typer.Typer, convert_app: typer.Typer) -> None:
    @convert_app.command("muld-to-pan")
    def pan_export_command(
        data: Annotated[Path, typer.Argument(help="A MuLD style-change file.")],
        folder: Annotated[
            Path, typer.Argument(help="The PAN folder to write (problem-N.txt, truth-problem-N.json).")
        ],
    ) -> None:
        """Write a MuLD style-change file in the PAN layout (bad records named and skipped)."""
        from longread.benchmarks.muld.pan import export_pan

        try:
            problems = export_pan(data, folder)
        except LongreadError as exc:
            raise fail(exc) from None
        for problem in problems:
            typer.echo(f"skipped: {problem}")
        typer.echo(f"wrote {folder}")

    @convert_app.command("pan-to-muld")
    def pan_import_command(
        folder: Annotated[Path, typer.Argument(help="A PAN style-change folder.")],
        out: Annotated[Path, typer.Argument(help="The MuLD file to write (.jsonl or .jsonl.bz2).")],
    ) -> None:
        """Read a PAN folder into a MuLD style-change file (a truth that does not fit is named)."""
        from longread.benchmarks.muld.pan import import_pan

        try:
            read = import_pan(folder, out)
        except LongreadError as exc:
            raise fail(exc) from None
        for problem in read.problems:
            typer.echo(f"skipped: {problem}")
        typer.echo(f"wrote {out}")

    @build_app.command("muld/vlsp")
    def build_vlsp_command(
        source: SourceOption,
        out: OutOption,
        min_tokens: MinTokensOption = 10_000,
        tokenizer: TokenizerOption = "gpt2",
        long_abstract: Annotated[
            bool, typer.Option(help="Also use the abstract found in the paper as a reference, where present.")
        ] = True,
    ) -> None:
        """VLSP summarisation from thesis folders (<id>.main.txt[.gz], <id>.abstract[-long].txt[.gz])."""
        from longread.benchmarks.muld.builders.vlsp import build_vlsp

        _build(
            out,
            lambda: build_vlsp(
                source, out, length_filter=_filter(min_tokens, tokenizer), long_abstract=long_abstract
            ),
        )

    @build_app.command("muld/style-change")
    def build_style_change_command(
        source: SourceOption,
        out: Annotated[
            Path,
            typer.Option(
                "--out",
                help="A folder (style_change_{train,validation,test}.jsonl.bz2 inside) or a template "
                "NAME.jsonl[.bz2] (NAME_train… beside it).",
            ),
        ],
        min_tokens: MinTokensOption = 10_000,
        tokenizer: TokenizerOption = "gpt2",
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
    ) -> None:
        """Style change from AO3 works JSONL or Gutenberg books: 1–4 authors' paragraphs, PAN truth."""
        from longread.benchmarks.muld.builders.style_change import build_style_change, parse_documents

        _build(
            out,
            lambda: build_style_change(
                source,
                out,
                length_filter=_filter(min_tokens, tokenizer),
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
            ),
        )

    @build_app.command("muld/narrativeqa")
    def build_narrativeqa_command(
        source: SourceOption,
        out: OutOption,
        min_tokens: MinTokensOption = 10_000,
        tokenizer: TokenizerOption = "gpt2",
        split: Annotated[
            list[str] | None, typer.Option(help="train, valid or test (repeat; default all).")
        ] = None,
    ) -> None:
        """NarrativeQA: --source CHECKOUT (documents.csv, qaps.csv, tmp/) [--source STORIES_DIR]."""
        from longread.benchmarks.muld.builders.narrativeqa import build_narrativeqa

        _sources(source, 1, "the narrativeqa checkout")
        _build(
            out,
            lambda: build_narrativeqa(
                source[0],
                out,
                stories=source[1] if len(source) > 1 else None,
                length_filter=_filter(min_tokens, tokenizer),
                splits=tuple(split or ("train", "valid", "test")),
            ),
        )

    @build_app.command("muld/hotpotqa")
    def build_hotpotqa_command(
        source: SourceOption,
        out: OutOption,
        min_tokens: MinTokensOption = 10_000,
        tokenizer: TokenizerOption = "gpt2",
        seed: Annotated[int, typer.Option(help="Seed of the page order.")] = 0,
    ) -> None:
        """HotpotQA lengthened: --source HOTPOT.json --source PAGES.jsonl (title, text, links)."""
        from longread.benchmarks.muld.builders.hotpotqa import build_hotpotqa

        _sources(source, 2, "the HotpotQA JSON and the Wikipedia pages JSONL")
        _build(
            out,
            lambda: build_hotpotqa(
                source[0], source[1], out, seed=seed, length_filter=_filter(min_tokens, tokenizer)
            ),
        )

    @build_app.command("muld/character-archetype")
    def build_archetype_command(
        source: SourceOption,
        out: OutOption,
        min_tokens: MinTokensOption = 10_000,
        tokenizer: TokenizerOption = "gpt2",
    ) -> None:
        """Character archetype: --source SCRIPTS_DIR --source LABELS.csv (script, character, label)."""
        from longread.benchmarks.muld.builders.archetype import build_archetype

        _sources(source, 2, "the scripts folder and the labels CSV")
        _build(
            out,
            lambda: build_archetype(source[0], source[1], out, length_filter=_filter(min_tokens, tokenizer)),
        )

    @build_app.command("muld/opensubtitles")
    def build_opensubtitles_command(
        source: SourceOption,
        out: OutOption,
        min_tokens: MinTokensOption = 10_000,
        tokenizer: TokenizerOption = "gpt2",
        source_lang: Annotated[str, typer.Option(help="Language translated from.")] = "en",
        target_lang: Annotated[str, typer.Option(help="Language translated into.")] = "de",
        min_overlap: Annotated[
            float | None, typer.Option(help="Drop links with a lower OPUS overlap.")
        ] = None,
    ) -> None:
        """OpenSubtitles: --source ALIGNMENT.xml[.gz] --source FOLDER (the alignment paths start there)."""
        from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles

        _sources(source, 2, "the OPUS alignment file and the subtitles folder")
        _build(
            out,
            lambda: build_opensubtitles(
                source[0],
                source[1],
                out,
                source_lang=source_lang,
                target_lang=target_lang,
                min_overlap=min_overlap,
                length_filter=_filter(min_tokens, tokenizer),
            ),
        )

    @train_app.command("style-pairs")
    def train_style_pairs_command(
        data: Annotated[Path, typer.Option("--data", help="A MuLD style-change training file.")],
        out: Annotated[Path, typer.Option("--out", help="The model JSON to write.")],
        features: Annotated[str, typer.Option(help="stylometric or minilm.")] = "stylometric",
        validation: Annotated[
            Path | None, typer.Option(help="A validation file to pick the threshold on (default: training).")
        ] = None,
        seed: Annotated[int, typer.Option(help="Seed of the extra pairs and the classifier.")] = 0,
    ) -> None:
        """Train the same-author pair classifier of the style-change baseline (then --model style:OUT)."""
        from longread.benchmarks.muld.style_training import train_style_pairs

        try:
            summary = train_style_pairs(data, features, out, seed, validation_file=validation)
        except LongreadError as exc:
            raise fail(exc) from None
        for line in summary.lines():
            typer.echo(line)
