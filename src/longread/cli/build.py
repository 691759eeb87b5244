"""``longread build chapterbreak|narrativexl``, ``longread stats`` and ``longread convert chapterbreak``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import (
    DEFAULT_PREFILL_CHUNK,
    FORMAT_HELP,
    DeviceOption,
    DtypeOption,
    RayOption,
    RayWorkersOption,
    ThreadsOption,
    backend_from_options,
    fail,
    ray_from_options,
)
from longread.errors import LongreadError


def register(app: typer.Typer, build_app: typer.Typer, convert_app: typer.Typer) -> None:
    @build_app.command("chapterbreak")
    def build_chapterbreak_command(
        out: Annotated[Path, typer.Option("--out", help="Output JSONL file (written atomically).")],
        book_paths: Annotated[
            list[Path] | None,
            typer.Argument(
                help="Books: files, folders or tar/zip archives (a shell glob works).", show_default=False
            ),
        ] = None,
        books: Annotated[
            list[Path] | None,
            typer.Option(
                "--books", help="Books, as with the positional paths; `--books a b c` and repeats work too."
            ),
        ] = None,
        seed: Annotated[
            int, typer.Option(help="Seed for sampling negatives (same seed → byte-identical file).")
        ] = 0,
        prefix_tokens: Annotated[
            int, typer.Option(help="Prefix budget in tokens: the prefix is cut from the left to this length.")
        ] = 8192,
        prefix_margin: Annotated[
            float,
            typer.Option(
                help="Keep this fraction more prefix than the budget, for models whose tokenizer is less "
                "dense."
            ),
        ] = 0.25,
        suffix_tokens: Annotated[
            int, typer.Option(help="Suffix budget: every candidate is cut from the right.")
        ] = 128,
        negatives: Annotated[
            int, typer.Option(help="Negatives per instance (later boundaries of the same book).")
        ] = 5,
        tokenizer: Annotated[
            str, typer.Option(help="Tokenizer for the budgets: gpt2 or hf:FOLDER.")
        ] = "gpt2",
        suffix_type: Annotated[
            str,
            typer.Option(
                help="chapter (next chapter start), cause (because/due to/owing to) or dialogue (a quote)."
            ),
        ] = "chapter",
        negatives_from: Annotated[
            str, typer.Option(help="in-book (later boundaries) or out-of-book (other books).")
        ] = ("in-book"),
        min_prefix_tokens: Annotated[
            int, typer.Option(help="Skip boundaries with a shorter prefix than this.")
        ] = 1,
        max_per_book: Annotated[
            int | None,
            typer.Option(
                help="cause/dialogue: at most this many boundaries per book (a seeded sample); default 50, "
                "0 = no cap (uncapped, dialogue gives ~1,600 instances per novel). chapter is never capped."
            ),
        ] = None,
        workers: Annotated[
            int,
            typer.Option(
                help="Worker processes (books are read and built in parallel); with --ray, the CPUs of a "
                "local Ray."
            ),
        ] = 2,
        format: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "auto",
        heading_pattern: Annotated[
            str | None, typer.Option(help="plain text: a regex matching chapter heading lines.")
        ] = None,
        encoding: Annotated[
            str | None, typer.Option(help="Text encoding of the books when not UTF-8 (latin-1, cp1252 …).")
        ] = None,
        strict: Annotated[
            bool, typer.Option(help="Fail (and write nothing) if any book is skipped.")
        ] = False,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
        ray: RayOption = None,
    ) -> None:
        """Build ChapterBreak instances: a long prefix ending at a chapter break, the true next chapter
        start and negatives from later chapters, all carrying the gold's chapter number."""
        from longread.benchmarks.chapterbreak.build import BuildOptions
        from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
        from longread.documents.reader import FORMATS, ReadOptions

        if suffix_type not in ("chapter", "cause", "dialogue"):
            raise typer.BadParameter("use chapter, cause or dialogue", param_hint="--suffix-type")
        if negatives_from not in ("in-book", "out-of-book"):
            raise typer.BadParameter("use in-book or out-of-book", param_hint="--negatives-from")
        if format not in FORMATS:
            raise typer.BadParameter(f"use one of {', '.join(FORMATS)}", param_hint="--format")
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
        all_books: list[str | Path] = [*(books or []), *(book_paths or [])]
        if not all_books:
            raise typer.BadParameter(
                "give at least one book file, folder or archive", param_hint="BOOKS / --books"
            )
        try:
            report = build_chapterbreak(
                all_books,
                out,
                options,
                read_options=ReadOptions(format=format, heading_pattern=heading_pattern, encoding=encoding),  # type: ignore[arg-type]
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
        out: Annotated[
            Path, typer.Option("--out", help="Output directory (official layouts + longread JSON).")
        ],
        book_paths: Annotated[
            list[Path] | None,
            typer.Argument(
                help="Books: files, folders or archives (a shell glob works).", show_default=False
            ),
        ] = None,
        books: Annotated[
            list[Path] | None, typer.Option("--books", help="Books, as with the positional paths.")
        ] = None,
        model: Annotated[
            str,
            typer.Option(
                "--model",
                help="Model that writes the summaries (generation; chat template where it has one).",
            ),
        ] = "smollm2",
        seed: Annotated[int, typer.Option(help="Seed for names and questions (same seed → same files).")] = 0,
        max_scenes: Annotated[
            int | None, typer.Option(help="Keep each book's first N scenes (a quick build).")
        ] = None,
        scene_chars: Annotated[
            int, typer.Option(help="Scene length in characters (3000: the authors' code; 20000: the paper).")
        ] = 3000,
        overlap: Annotated[
            int, typer.Option(help="Characters of each neighbouring scene shown to the summariser.")
        ] = 300,
        min_scenes: Annotated[
            int, typer.Option(help="A book with fewer scenes than this is skipped (too short for questions).")
        ] = 10,
        decoy_books: Annotated[
            list[Path] | None,
            typer.Option(
                "--decoy-books", help="Books that only lend summaries to other-book decoys (no questions)."
            ),
        ] = None,
        decoy_max_scenes: Annotated[
            int | None, typer.Option(help="Scenes of each decoy book summarised (default: all).")
        ] = None,
        answer_tag: Annotated[
            bool,
            typer.Option(
                help="Ask for the authors' '### BEGIN ANSWER ###' tag (small models rarely follow it)."
            ),
        ] = False,
        substitute_names: Annotated[
            bool, typer.Option(help="Replace character names by seeded census names of the same gender.")
        ] = True,
        hierarchical: Annotated[
            bool,
            typer.Option(help="Also merge scene summaries into hierarchical ones (correction questions)."),
        ] = True,
        generate_batch: Annotated[
            int | None, typer.Option(help="Prompts generated together (default: the model's choice).")
        ] = None,
        device: DeviceOption = "cpu",
        dtype: DtypeOption = "float32",
        threads: ThreadsOption = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
        ray: RayOption = None,
        ray_workers: RayWorkersOption = None,
    ) -> None:
        """Build NarrativeXL: scenes, generated true and distorted summaries, renamed characters, read-along
        questions (look-ahead, change, other-book) and summary-correction questions."""
        from longread.benchmarks.narrativexl.build import NarrativeXLBuildSettings, build_narrativexl
        from longread.benchmarks.narrativexl.scenes import SceneSettings
        from longread.benchmarks.narrativexl.summaries import SummarySettings

        all_books: list[str | Path] = [*(books or []), *(book_paths or [])]
        if not all_books:
            raise typer.BadParameter("give at least one book", param_hint="BOOKS / --books")
        try:
            settings = NarrativeXLBuildSettings(
                seed=seed,
                max_scenes=max_scenes,
                substitute_names=substitute_names,
                hierarchical=hierarchical,
                scenes=SceneSettings(chars=scene_chars, overlap=overlap, min_scenes=min_scenes),
                summaries=SummarySettings(answer_tag=answer_tag),
            )
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
                ray=ray_from_options(ray, ray_workers),
            )
            if generate_batch is not None:
                if generate_batch < 1:
                    raise typer.BadParameter("give at least 1", param_hint="--generate-batch")
                backend.preferred_batch = generate_batch
            report = build_narrativexl(
                all_books,
                out,
                backend,
                settings,
                decoy_sources=decoy_books or (),
                decoy_max_scenes=decoy_max_scenes,
                show_progress=not quiet,
                log=typer.echo,
            )
        except LongreadError as exc:
            raise fail(exc) from None
        finally:
            if ray is not None:
                from longread.scaleout.ray_session import stop_ray

                stop_ray()
        for line in report.summary_lines():
            typer.echo(line)
        for incident in getattr(backend, "take_incidents", list)():
            typer.echo(f"incident (every summary was made all the same): {incident.message}")

    @app.command("stats")
    def stats_command(
        file: Annotated[Path, typer.Argument(help="A longread ChapterBreak JSONL file.")],
    ) -> None:
        """Statistics of a ChapterBreak set (works, examples per suffix type, chapters and words per work)."""
        from longread.benchmarks.chapterbreak.io import iter_instances
        from longread.benchmarks.chapterbreak.stats import compute_stats, format_stats

        try:
            typer.echo(format_stats(compute_stats(iter_instances(file))))
        except LongreadError as exc:
            raise fail(exc) from None

    @convert_app.command("chapterbreak")
    def convert_chapterbreak_command(
        file: Annotated[
            Path, typer.Argument(help="Input file (longread JSONL or the official JSON layout).")
        ],
        out: Annotated[
            Path, typer.Option("--out", help="Output file (a folder with --to official --prefix-lengths).")
        ],
        to: Annotated[
            str, typer.Option(help="official ({'pg19': {work: [{ctx,pos,negs}]}, 'ao3': …}) or longread.")
        ],
        tokenizer: Annotated[
            str, typer.Option(help="Tokenizer that recounts tokens when importing and cuts prefixes.")
        ] = "gpt2",
        prefix_lengths: Annotated[
            str | None,
            typer.Option(
                help="With --to official: one file per prefix length in the --out folder, "
                "chapterbreak_ctx_{N}.json with ctx cut from the left to N tokens (e.g. 256,512,1024)."
            ),
        ] = None,
    ) -> None:
        """Convert a ChapterBreak set between longread's JSONL and the official layout (both ways)."""
        from longread.benchmarks.chapterbreak.io import iter_instances, write_instances
        from longread.benchmarks.chapterbreak.official import (
            parse_prefix_lengths,
            read_official,
            write_official,
            write_official_by_length,
        )

        try:
            if to == "official" and prefix_lengths is not None:
                try:
                    lengths = parse_prefix_lengths(prefix_lengths)
                except ValueError as exc:
                    raise typer.BadParameter(str(exc), param_hint="--prefix-lengths") from None
                for path in write_official_by_length(iter_instances(file), out, lengths, tokenizer=tokenizer):
                    typer.echo(f"wrote {path}")
            elif to == "official":
                write_official(iter_instances(file), out)
            elif to == "longread":
                count = write_instances(read_official(file, tokenizer=tokenizer), out)
                typer.echo(f"wrote {count} instances to {out}")
            else:
                raise typer.BadParameter("use official or longread", param_hint="--to")
        except LongreadError as exc:
            raise fail(exc) from None
