"""``longread probe …``: probes of a model on raw books, beside the benchmarks.

``probe tokens``: every token of each book scored with a long context and a short one; which tokens
need the long context (LongPPL's key tokens), loss by context length and by category
(:mod:`longread.probes.tokens`). ``probe memory``: how much of each book the model remembers — name
cloze, extraction and min-k% (:mod:`longread.probes.memory`), on books or on built data (``--data``).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longread.cli.options import DeviceOption, DtypeOption, ModelOption, QuietOption, ThreadsOption, fail
from longread.errors import BadInputError, LongreadError

if TYPE_CHECKING:
    from longread.documents.excerpts import BookExcerpts

probe_app = typer.Typer(
    help="Probes of a model on raw books: which tokens need the long context; what it remembers."
)


EvaluatorOption = Annotated[
    str | None,
    typer.Option(
        help="Key tokens chosen by this model's long and short passes (LongPPL's evaluator), mapped "
        "onto the probed model's tokens; without it the model picks its own (LongPPL ≤ e^-beta by "
        "construction)."
    ),
]
EvaluatorFromOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--evaluator-from",
        help="Earlier probe folders whose evaluator passes to reuse when they match (evaluator, book, "
        "settings); --out's own are always reused.",
    ),
]


@probe_app.command("tokens")
def probe_tokens_command(
    books: Annotated[
        list[Path], typer.Argument(help="Books: files (a shell glob works).", show_default=False)
    ],
    model: ModelOption,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for tokens.parquet, summary.json/.md, tokens.png.")
    ],
    window: Annotated[int, typer.Option(help="Long context W (capped at the model's window).")] = 4096,
    short: Annotated[
        int, typer.Option(help="Short context K; tokens before the first K are not scored.")
    ] = 128,
    stride: Annotated[
        int, typer.Option(help="Short windows advance by S (1: exact K; cost K/S per token).")
    ] = 64,
    alpha: Annotated[float, typer.Option(help="Key token: LSD above alpha nats …")] = 2.0,
    beta: Annotated[float, typer.Option(help="… and long-context log-prob above beta.")] = -2.0,
    max_tokens: Annotated[
        int | None, typer.Option(help="Only the first N tokens of each book (recorded in the summary).")
    ] = None,
    evaluator: EvaluatorOption = None,
    evaluator_from: EvaluatorFromOption = None,
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Score every token of each book with up to W tokens of context and with K; key tokens (LongPPL),
    perplexity and LongPPL with intervals, loss by context length and category, a plot."""
    from longread.models.registry import load_backend
    from longread.probes.tokens import TokenProbeSettings

    try:
        settings = TokenProbeSettings(window, short, stride, alpha, beta, max_tokens, evaluator)
        if evaluator_from and not evaluator:
            raise typer.BadParameter("give --evaluator with it", param_hint="--evaluator-from")
        backend = load_backend(model, device=device, dtype=dtype, threads=threads)
        judge = load_backend(evaluator, device=device, dtype=dtype, threads=threads) if evaluator else None
        markdown, costs = _probe_token_books(
            books, backend, judge, settings, out, evaluator_from or [], quiet
        )
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(markdown.read_text(encoding="utf-8"))
    for name, cost in costs:
        long_s, short_s = cost["long_seconds"], cost["short_seconds"]
        per_token = cost["short_tokens_per_book_token"]
        typer.echo(
            f"{name}: {int(cost['book_tokens']):,} tokens; long pass {long_s:.1f} s, "
            f"short pass {short_s:.1f} s ({per_token:.2f} tokens read per token)"
            + (f"; evaluator {cost['evaluator_seconds']:.1f} s" if evaluator else "")
        )
    typer.echo(f"wrote {out / 'tokens.parquet'}, {out / 'summary.json'}, {markdown}, {out / 'tokens.png'}")


def _probe_token_books(
    books: list[Path], backend: Any, judge: Any, settings: Any, out: Path, reuse: list[Path], quiet: bool
) -> tuple[Path, list[tuple[str, dict[str, float]]]]:
    """Both passes over every book (and the evaluator's, where given), then the files; (the summary page,
    each book's costs)."""
    from longread.documents.reader import read_book
    from longread.probes.token_files import plot_tokens, write_summary, write_tokens
    from longread.probes.tokens import probe_book, summarise
    from longread.progress import Progress

    out.mkdir(parents=True, exist_ok=True)
    tables, summaries, costs = [], [], []
    for book_path in books:
        book = read_book(book_path)
        with Progress(
            total=None, desc=f"probing {book.id} (tokens read)", unit="tok", enabled=not quiet
        ) as bar:
            table, cost = probe_book(
                backend, book, settings, progress=partial(_count, bar), evaluator=judge, out=out, reuse=reuse
            )
        tables.append(table)
        summaries.append(summarise(table))
        costs.append((book.id, cost))
    write_tokens(tables, out)
    plot_tokens(summaries, out / "tokens.png")
    _, markdown = write_summary(summaries, settings, [cost for _, cost in costs], backend.describe(), out)
    return markdown, costs


@probe_app.command("compare")
def probe_compare_command(
    a: Annotated[Path, typer.Argument(help="A `probe tokens` folder (A).", show_default=False)],
    b: Annotated[Path, typer.Argument(help="Another, of the same books (B).", show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="Folder for compare.md and compare.json.")],
) -> None:
    """Two token probes of the same books: key-token share, LongPPL, perplexity and the LSD by category of
    each, and B − A, with paired intervals over tokens clustered by book."""
    from longread.probes.compare import compare, load_tokens, write_compare

    try:
        markdown = write_compare(compare(load_tokens(a), load_tokens(b)), out)
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(markdown.read_text(encoding="utf-8"))
    typer.echo(f"wrote {markdown}, {out / 'compare.json'}")


def _count(bar: Any, tokens: int) -> None:
    bar.update(items=tokens)


MemoryOutOption = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Folder for items.jsonl, books.json, summary.md, memory.png and finished-books.jsonl "
        "(an interrupted probe resumes from it).",
    ),
]
MemoryBooksArgument = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Books: files, folders, archives or bundled: names (a shell glob works); or give --data.",
        show_default=False,
        metavar="BOOKS",
    ),
]
MemoryDataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Built data instead of books: a ChapterBreak JSONL (its prefixes; extraction at its breaks), "
        "a MuLD NarrativeQA file (its Gutenberg stories) "
        "or a NarrativeXL build folder (its scenes as read).",
    ),
]


MemoryBooksOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--books", help="Books, as with the positional paths; `--books a b c` and repeats work too."
    ),
]


@probe_app.command("memory")
def probe_memory_command(
    model: ModelOption,
    out: MemoryOutOption,
    book_paths: MemoryBooksArgument = None,
    books: MemoryBooksOption = None,
    data: MemoryDataOption = None,
    seed: Annotated[int, typer.Option(help="Seeds the passages and the places.")] = 0,
    passages: Annotated[int, typer.Option(help="Passages (cloze, min-k) and places (extraction).")] = 100,
    probes: Annotated[
        str, typer.Option(help="Probes, comma-separated: cloze, cloze-rank, extraction, min-k.")
    ] = "cloze,extraction,min-k",
    rank_names: Annotated[
        int, typer.Option(help="Ranked cloze: names offered per passage (N; chance 1/N).")
    ] = 10,
    prompt_tokens: Annotated[int, typer.Option(help="Extraction: tokens read before each place (N).")] = 100,
    new_tokens: Annotated[int, typer.Option(help="Extraction: greedy tokens compared (M).")] = 50,
    min_k_percent: Annotated[float, typer.Option(help="Min-k: the share of least likely tokens.")] = 20.0,
    remembered: Annotated[
        str, typer.Option(help="The verdict's rule: SCORE>=VALUE, comma-separated, any holding.")
    ] = "cloze>=0.3,extraction_exact>=0.05",
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Reading or remembering? Name cloze, extraction and min-k% per book, with intervals and a verdict."""
    from longread.models.registry import load_backend
    from longread.probes.memory import MemoryProbeSettings, probe_memory, write_memory
    from longread.probes.memory.journal import MemoryJournal, as_excerpts, probe_identity
    from longread.progress import Progress

    try:
        chosen = tuple(part.strip() for part in probes.split(",") if part.strip())
        settings = MemoryProbeSettings(
            seed=seed,
            passages=passages,
            probes=chosen,
            prompt_tokens=prompt_tokens,
            new_tokens=new_tokens,
            min_k_percent=min_k_percent,
            rank_names=rank_names,
            rule=remembered,
        )
        paths = [*(books or []), *(book_paths or [])]
        if bool(paths) == (data is not None):
            raise typer.BadParameter(
                "give books (or --books) or --data, not both and not neither", param_hint="BOOKS"
            )
        read = [
            as_excerpts(given) for given in (data_excerpts(data) if data is not None else _read_books(paths))
        ]
        backend = load_backend(model, device=device, dtype=dtype, threads=threads)
        described = backend.describe()
        with MemoryJournal(out, probe_identity(settings.as_dict(), described)) as journal:
            finished = journal.finished_books(read)
            if finished:
                typer.echo(f"resuming: {finished} of {len(read)} books already probed in {journal.path}")
            with Progress(
                total=len(read) * len(settings.probes),
                desc="probing memory (book × probe)",
                unit="step",
                initial=finished * len(settings.probes),
                enabled=not quiet,
            ) as bar:
                items, summaries = probe_memory(
                    backend, read, settings, progress=partial(_count, bar), journal=journal
                )
        markdown = write_memory(out, items, summaries, settings, described)
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(markdown.read_text(encoding="utf-8"))
    for summary in summaries:
        typer.echo(f"{summary.book}: {summary.seconds:.1f} s")
    typer.echo(f"wrote {out / 'items.jsonl'}, {out / 'books.json'}, {markdown}, {out / 'memory.png'}")


def _read_books(paths: list[Path]) -> list[Any]:
    """Every book of the files, folders, archives and ``bundled:`` names given, as ``build`` reads them
    (``iter_books``); a book that cannot be read stops the probe with its error (naming the file); a book
    given twice is probed once (the others are named)."""
    from longread.documents.corpus import iter_books
    from longread.documents.reader import RepeatedBook

    books: list[Any] = []
    for item in iter_books(paths):
        if isinstance(item, RepeatedBook):
            typer.echo(f"left out of the probe: {item}")
        elif isinstance(item, BadInputError):
            raise item
        else:
            books.append(item)
    return books


def data_excerpts(path: Path) -> list[BookExcerpts]:
    """``--data``: the books of a built ChapterBreak file, NarrativeXL folder or MuLD NarrativeQA file, as
    the data shows them (a NarrativeQA document that is not a Gutenberg book is left out and named)."""
    from longread.benchmarks.chapterbreak.excerpts import chapterbreak_excerpts
    from longread.benchmarks.muld.excerpts import is_narrativeqa_file, narrativeqa_books
    from longread.benchmarks.narrativexl.excerpts import narrativexl_excerpts

    if path.is_dir() and (path / "readalong").is_dir():
        return narrativexl_excerpts(path)
    if path.is_file() and is_narrativeqa_file(path):
        found = narrativeqa_books(path)
        for document, why in found.left_out.items():
            typer.echo(f"left out of the probe: document {document}: {why}")
        if not found.books:
            raise BadInputError(path, "holds no Gutenberg book to probe", "give the books themselves")
        return found.books
    if path.is_file():
        return chapterbreak_excerpts(path)
    raise BadInputError(
        path,
        "not built data the probe reads",
        "give a ChapterBreak JSONL (longread build chapterbreak), a NarrativeXL build folder (with "
        "readalong/) or a MuLD NarrativeQA file (longread build muld/narrativeqa); for other data give "
        "the books themselves",
    )
