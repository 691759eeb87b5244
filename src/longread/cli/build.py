"""``longread build chapterbreak`` and ``longread build narrativexl`` (MuLD's builders, also under
``longread build``, are declared in ``cli/muld.py``).

The options only one command has are declared here once, as ``Annotated`` aliases above the
command; those several commands share come from ``cli/options.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from longread.cli.options import (
    DEFAULT_PREFILL_CHUNK,
    DeviceOption,
    DtypeOption,
    FormatOption,
    QuietOption,
    RayOption,
    RayWorkersOption,
    ThreadsOption,
    backend_from_options,
    fail,
    invalid_settings,
    ray_for_command,
    ray_from_options,
)
from longread.errors import LongreadError

build_app = typer.Typer(help="Build a benchmark from raw books.", no_args_is_help=True)

# longread build chapterbreak
ChapterBreakOutOption = Annotated[Path, typer.Option("--out", help="Output JSONL file (written atomically).")]
ChapterBreakBooksArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Books: files, folders or tar/zip archives (a shell glob works; read in sorted order).",
        show_default=False,
    ),
]
ChapterBreakBooksOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--books", help="Books, as with the positional paths; `--books a b c` and repeats work too."
    ),
]
NegativesSeedOption = Annotated[
    int, typer.Option(help="Seed for sampling negatives (same seed → byte-identical file).")
]
PrefixTokensOption = Annotated[
    int, typer.Option(help="Prefix budget in tokens: the prefix is cut from the left to this length.")
]
PrefixMarginOption = Annotated[
    float,
    typer.Option(
        help="Keep this fraction more prefix than the budget, for models whose tokenizer is less dense."
    ),
]
SuffixBudgetOption = Annotated[
    int, typer.Option(help="Suffix budget: every candidate is cut from the right.")
]
NegativesOption = Annotated[
    int, typer.Option(help="Negatives per instance (later boundaries of the same book).")
]
BudgetTokenizerOption = Annotated[str, typer.Option(help="Tokenizer for the budgets: gpt2 or hf:FOLDER.")]
SuffixTypeOption = Annotated[
    str,
    typer.Option(help="chapter (next chapter start), cause (because/due to/owing to) or dialogue (a quote)."),
]
NegativesFromOption = Annotated[
    str, typer.Option(help="in-book (later boundaries) or out-of-book (other books).")
]
MinPrefixTokensOption = Annotated[int, typer.Option(help="Skip boundaries with a shorter prefix than this.")]
MaxPerBookOption = Annotated[
    int | None,
    typer.Option(
        help="cause/dialogue: at most this many boundaries per book (a seeded sample); default 50, "
        "0 = no cap (uncapped, dialogue gives ~1,600 instances per novel). chapter is never capped."
    ),
]
WorkersOption = Annotated[
    int,
    typer.Option(
        help="Worker processes (books are read and built in parallel); with --ray, the CPUs of a local Ray."
    ),
]
HeadingPatternOption = Annotated[
    str | None, typer.Option(help="plain text: a regex matching chapter heading lines.")
]
EncodingOption = Annotated[
    str | None, typer.Option(help="Text encoding of the books when not UTF-8 (latin-1, cp1252 …).")
]
StrictOption = Annotated[bool, typer.Option(help="Fail (and write nothing) if any book is skipped.")]
ExcludeRememberedOption = Annotated[
    Path | None,
    typer.Option(
        "--exclude-remembered",
        help="A `longread probe memory` folder: leave out the books its model remembers (the report "
        "names them and why); books it cannot tell about stay unless --strict-memory.",
    ),
]
StrictMemoryOption = Annotated[
    bool,
    typer.Option(
        "--strict-memory",
        help="With --exclude-remembered: also leave out the books the probes cannot tell about.",
    ),
]

# longread build narrativexl
NarrativeXLOutOption = Annotated[
    Path, typer.Option("--out", help="Output directory (official layouts + longread JSON).")
]
NarrativeXLBooksArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Books: files, folders or archives (a shell glob works; read in sorted order).",
        show_default=False,
    ),
]
NarrativeXLBooksOption = Annotated[
    list[Path] | None, typer.Option("--books", help="Books, as with the positional paths.")
]
SummariserOption = Annotated[
    str,
    typer.Option(
        "--model", help="Model that writes the summaries (generation; chat template where it has one)."
    ),
]
NamesSeedOption = Annotated[int, typer.Option(help="Seed for names and questions (same seed → same files).")]
MaxScenesOption = Annotated[int | None, typer.Option(help="Keep each book's first N scenes (a quick build).")]
SceneCharsOption = Annotated[
    int, typer.Option(help="Scene length in characters (3000: the authors' code; 20000: the paper).")
]
OverlapOption = Annotated[
    int, typer.Option(help="Characters of each neighbouring scene shown to the summariser.")
]
MinScenesOption = Annotated[
    int, typer.Option(help="A book with fewer scenes than this is skipped (too short for questions).")
]
DecoyBooksOption = Annotated[
    list[Path] | None,
    typer.Option("--decoy-books", help="Books that only lend summaries to other-book decoys (no questions)."),
]
DecoyMaxScenesOption = Annotated[
    int | None, typer.Option(help="Scenes of each decoy book summarised (default: all).")
]
AnswerTagOption = Annotated[
    bool,
    typer.Option(help="Ask for the authors' '### BEGIN ANSWER ###' tag (small models rarely follow it)."),
]
SubstituteNamesOption = Annotated[
    bool, typer.Option(help="Replace character names by seeded census names of the same gender.")
]
HierarchicalOption = Annotated[
    bool, typer.Option(help="Also merge scene summaries into hierarchical ones (correction questions).")
]
GenerateBatchOption = Annotated[
    int | None, typer.Option(help="Prompts generated together (default: the model's choice).")
]


@build_app.command("chapterbreak")
def build_chapterbreak_command(
    out: ChapterBreakOutOption,
    book_paths: ChapterBreakBooksArgument = None,
    books: ChapterBreakBooksOption = None,
    seed: NegativesSeedOption = 0,
    prefix_tokens: PrefixTokensOption = 8192,
    prefix_margin: PrefixMarginOption = 0.25,
    suffix_tokens: SuffixBudgetOption = 128,
    negatives: NegativesOption = 5,
    tokenizer: BudgetTokenizerOption = "gpt2",
    suffix_type: SuffixTypeOption = "chapter",
    negatives_from: NegativesFromOption = "in-book",
    min_prefix_tokens: MinPrefixTokensOption = 1,
    max_per_book: MaxPerBookOption = None,
    workers: WorkersOption = 2,
    format: FormatOption = "auto",
    heading_pattern: HeadingPatternOption = None,
    encoding: EncodingOption = None,
    strict: StrictOption = False,
    exclude_remembered: ExcludeRememberedOption = None,
    strict_memory: StrictMemoryOption = False,
    quiet: QuietOption = False,
    ray: RayOption = None,
) -> None:
    """Build ChapterBreak instances: a long prefix ending at a chapter break, the true next chapter
    start and negatives from later chapters, all carrying the gold's chapter number."""
    from longread.benchmarks.chapterbreak.build import BuildOptions
    from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
    from longread.documents.reader import FORMATS, ReadOptions

    check_choice(suffix_type, ("chapter", "cause", "dialogue"), "--suffix-type")
    check_choice(negatives_from, ("in-book", "out-of-book"), "--negatives-from")
    options = BuildOptions(
        seed=seed,
        prefix_tokens=prefix_tokens,
        prefix_margin=prefix_margin,
        suffix_tokens=suffix_tokens,
        negatives=negatives,
        tokenizer=tokenizer,
        suffix_type=suffix_type,  # type: ignore[arg-type]
        negatives_from=negatives_from,  # type: ignore[arg-type]
        min_prefix_tokens=min_prefix_tokens,
        max_per_book=max_per_book,
    )
    if format not in FORMATS:
        raise typer.BadParameter(f"use one of {', '.join(FORMATS)}", param_hint="--format")
    sources = all_books(books, book_paths, "give at least one book file, folder or archive")
    try:
        read_options = ReadOptions(
            format=format,  # type: ignore[arg-type]
            heading_pattern=heading_pattern,
            encoding=encoding,
            exclude=remembered_books(exclude_remembered, strict_memory),
        )
        report = build_chapterbreak(
            sources,
            out,
            options,
            read_options=read_options,
            workers=workers,
            strict=strict,
            show_progress=not quiet,
            ray=ray_from_options(ray, workers),
        )
    except LongreadError as exc:
        raise fail(exc) from None
    for line in report.summary_lines():
        typer.echo(line)


@build_app.command("narrativexl")
def build_narrativexl_command(
    out: NarrativeXLOutOption,
    book_paths: NarrativeXLBooksArgument = None,
    books: NarrativeXLBooksOption = None,
    model: SummariserOption = "smollm2",
    seed: NamesSeedOption = 0,
    max_scenes: MaxScenesOption = None,
    scene_chars: SceneCharsOption = 3000,
    overlap: OverlapOption = 300,
    min_scenes: MinScenesOption = 10,
    decoy_books: DecoyBooksOption = None,
    decoy_max_scenes: DecoyMaxScenesOption = None,
    answer_tag: AnswerTagOption = False,
    substitute_names: SubstituteNamesOption = True,
    hierarchical: HierarchicalOption = True,
    generate_batch: GenerateBatchOption = None,
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    quiet: QuietOption = False,
    exclude_remembered: ExcludeRememberedOption = None,
    strict_memory: StrictMemoryOption = False,
    ray: RayOption = None,
    ray_workers: RayWorkersOption = None,
) -> None:
    """Build NarrativeXL: scenes, generated true and distorted summaries, renamed characters, read-along
    questions (look-ahead, change, other-book) and summary-correction questions."""
    from pydantic import ValidationError

    from longread.benchmarks.narrativexl.build import NarrativeXLBuildSettings, build_narrativexl
    from longread.benchmarks.narrativexl.scenes import SceneSettings
    from longread.benchmarks.narrativexl.summaries import SummarySettings

    sources = all_books(books, book_paths, "give at least one book")
    try:
        settings = NarrativeXLBuildSettings(
            seed=seed,
            max_scenes=max_scenes,
            substitute_names=substitute_names,
            hierarchical=hierarchical,
            scenes=SceneSettings(chars=scene_chars, overlap=overlap, min_scenes=min_scenes),
            summaries=SummarySettings(answer_tag=answer_tag),
        )
        exclude = remembered_books(exclude_remembered, strict_memory)
    except ValidationError as exc:
        raise invalid_settings(exc, {"chars": "--scene-chars"}) from None
    except LongreadError as exc:
        raise fail(exc) from None
    with ray_for_command(ray, ray_workers) as on_ray:
        try:
            # On Ray each generation call's prompts are shared between the replicas; batched generation
            # equals one-at-a-time, so the files are the same bytes.
            backend = backend_from_options(
                model,
                device=device,
                dtype=dtype,
                mode="shared",
                batch_size=8,
                prefill_chunk=DEFAULT_PREFILL_CHUNK,
                threads=threads,
                ray=on_ray,
            )
            if generate_batch is not None:
                if generate_batch < 1:
                    raise typer.BadParameter("give at least 1", param_hint="--generate-batch")
                backend.preferred_batch = generate_batch
            report = build_narrativexl(
                sources,
                out,
                backend,
                settings,
                decoy_sources=decoy_books or (),
                decoy_max_scenes=decoy_max_scenes,
                show_progress=not quiet,
                log=typer.echo,
                exclude=exclude,
            )
        except LongreadError as exc:
            raise fail(exc) from None
    echo_build(report, backend)


def echo_build(report: Any, backend: Any) -> None:
    """The build report's lines, then what happened to the summariser on the way."""
    for line in report.summary_lines():
        typer.echo(line)
    for incident in getattr(backend, "take_incidents", list)():
        typer.echo(f"incident (every summary was made all the same): {incident.message}")


def remembered_books(probe_dir: Path | None, strict: bool = False) -> tuple[tuple[str, str], ...]:
    """``--exclude-remembered``: (book id, why) of every book the probed model remembers, and with
    ``--strict-memory`` of every book the probes cannot tell about; the rest stay, and are counted."""
    if probe_dir is None:
        if strict:
            raise typer.BadParameter(
                "give --exclude-remembered PROBE_DIR with it", param_hint="--strict-memory"
            )
        return ()
    from longread.probes.memory.verdicts import load_verdicts

    verdicts = load_verdicts(probe_dir)
    remembered = verdicts.remembered()
    unsure = verdicts.cannot_tell()
    typer.echo(
        f"--exclude-remembered: {len(remembered)} of the {len(verdicts.books)} books probed are remembered "
        f"by {verdicts.model_name}"
        + (f" ({', '.join(sorted(remembered))})" if remembered else "")
        + f"; the probes cannot tell for {len(unsure)}"
        + (f" ({', '.join(sorted(unsure))})" if unsure else "")
        + (", left out too (--strict-memory)" if strict and unsure else ", kept" if unsure else "")
    )
    left_out = {**remembered, **(unsure if strict else {})}
    return tuple(sorted(left_out.items()))


def check_choice(value: str, choices: tuple[str, ...], option: str) -> None:
    """A value outside ``choices`` is a usage error naming the option and what to use."""
    if value not in choices:
        raise typer.BadParameter(f"use {', '.join(choices[:-1])} or {choices[-1]}", param_hint=option)


def all_books(books: list[Path] | None, book_paths: list[Path] | None, missing: str) -> list[str | Path]:
    """The books of ``--books`` then the positional paths; none at all is an error saying ``missing``."""
    sources: list[str | Path] = [*(books or []), *(book_paths or [])]
    if not sources:
        raise typer.BadParameter(missing, param_hint="BOOKS / --books")
    return sources
