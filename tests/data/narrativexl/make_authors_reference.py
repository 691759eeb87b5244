"""Run the AUTHORS' OWN NarrativeXL code on the test books and record what it writes.

Writes ``authors_reference.json`` beside this script: SHA-256 digests of the
files the authors' ``save_summary_data``, ``generate_questions`` and
``save_hierarch_summaries`` write for the books of ``tests/narrativexl_fixtures.py``,
and every question their ``RecognitionQuestionGenerator`` draws with numpy's
legacy global RNG seeded with ``SEED``. The tests compare longread's writers and
generator against it (the generator through a RandomState adapter), so CI needs
neither the authors' code nor openai.

Regenerate (needs the git mirror of R-seny/NarrativeXL)::

    .venv/bin/python tests/data/narrativexl/make_authors_reference.py /work/.mirror/R-seny+NarrativeXL/repo

The usage example at the end of Dataloaders.py (under ``__main__``) is cut off
because it does not parse. Only modules the authors' code imports for work it does not do here are
stand-ins: ``openai`` and the GPT wrappers (no call is made: summaries come
from the fixtures; the hierarchical merge is ``fake_merge``), the entity
replacer (identity, as longread's default ``adapt``) and the character list.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.narrativexl.books import fake_merge, hierarchy_book, main_book, other_books  # noqa: E402

SEED = 1234
FILES = (
    "settings.py",
    "Dataloaders.py",
    "QuestionGeneration.py",
    "CreateHiararchicalSummariesTrueOnly.py",
    "utils/__init__.py",
    "utils/BookProcessing.py",
)


def _sha(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _stub_modules() -> None:
    openai = types.ModuleType("openai")
    openai.error = types.SimpleNamespace()  # type: ignore[attr-defined]
    sys.modules["openai"] = openai

    gpt = types.ModuleType("gpt_api_processing")

    def merge(chunk_summaries: list[str], max_length: int = 10000) -> list[str]:
        from utils.BookProcessing import rechunk_book  # type: ignore[import-not-found]  # the authors'

        lines = [f"Summary {ind}: {summary}\n" for ind, summary in enumerate(chunk_summaries)]
        return [fake_merge(m) for m in rechunk_book(lines, max_length)]

    for name in (
        "SummarizeChunk",
        "SummarizeChunkRetry",
        "CreateFalseSummary",
        "SummarizeSummariesDetailedEvents",
    ):
        setattr(gpt, name, None)
    gpt.SummarizeSummariesDetailedEvents2 = merge  # type: ignore[attr-defined]
    sys.modules["gpt_api_processing"] = gpt

    entity = types.ModuleType("entity_replacement")

    class EntityReplacer:
        @staticmethod
        def sub_nonrandom_characters(source: Any, other: Any, text: str) -> str:
            return text

        @staticmethod
        def sub_random_characters(source: Any, text: str) -> str:
            return text

    entity.EntityReplacer = EntityReplacer  # type: ignore[attr-defined]
    sys.modules["entity_replacement"] = entity
    sys.modules["character_list_generator"] = types.ModuleType("character_list_generator")


def _processor(dl: Any, book: Any, folder: Path) -> tuple[Any, str]:
    """Fill the authors' BookProcessor, save it with their code, load it back with their code."""
    bp = dl.BookProcessor("unused.")
    bp.book_chunks = [s.text for s in book.scenes]
    bp.overlapped_book_chunks = [s.overlapped for s in book.scenes]
    bp.book_chunk_summaries = [item.summary for item in book.summaries]
    bp.false_book_chunk_summaries = [
        list(item.distorted) if item.distorted else None for item in book.summaries
    ]
    bp.failed_summaries = {i: item.comment for i, item in enumerate(book.summaries) if item.status != "OK"}
    path = folder / f"{book.book_id}.tagseparated"
    bp.save_summary_data(str(path))
    return dl.BookProcessor.init_from_summaries(str(path)), _sha(path)


def main(mirror: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="nxl_authors_"))
    for name in FILES:
        target = work / "code" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        source = subprocess.run(
            ["git", "-C", mirror, "show", f"HEAD:{name}"], capture_output=True, check=True
        ).stdout
        if name == "Dataloaders.py":
            # its usage example under __main__ is not valid Python (an unindented `with` body); drop it
            source = source.split(b'if __name__ == "__main__":')[0]
        target.write_bytes(source)
    commit = subprocess.run(
        ["git", "-C", mirror, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    sys.path.insert(0, str(work / "code"))
    _stub_modules()
    import CreateHiararchicalSummariesTrueOnly as hs  # type: ignore[import-not-found]
    import Dataloaders as dl  # type: ignore[import-not-found]
    import numpy as np
    import QuestionGeneration as qg  # type: ignore[import-not-found]

    books = [main_book(), *other_books()]
    (work / "Data").mkdir()
    processors = []
    tagseparated = {}
    for book in books:
        processor, digest = _processor(dl, book, work / "Data")
        processors.append(processor)
        tagseparated[book.book_id] = digest

    generators = [
        qg.RecognitionQuestionGenerator(p, book_filename=b.book_id, ent_rep_dict={})
        for p, b in zip(processors, books, strict=True)
    ]
    for i, g in enumerate(generators):
        g.set_parallel_books(generators[:i] + generators[i + 1 :])
    np.random.seed(SEED)
    generators[0].generate_questions()
    questions = []
    for position, asked in enumerate(generators[0].questions):
        for q in asked:
            questions.append(
                {
                    "when_asked": int(q.when_asked),
                    "position": position,
                    "type": q.question_type,
                    "answer": q.answer(),
                    "memload": int(q.retention_delay),
                    "text_sha256": hashlib.sha256(q.question_string().encode("utf-8")).hexdigest(),
                }
            )
    os.chdir(work)
    qg.qgs = generators[:1]  # their print names the __main__ global
    qg.generate_questions(generators[:1], saveto="Q", subchars=False)
    shortform = _sha(work / "Data" / "Q" / "raw" / "shortform" / f"{books[0].book_id}.questions_shortform")

    # Hierarchical summaries of a book without failed scenes (the authors' saver cannot join None).
    np.random.seed(SEED)
    hier_book = hierarchy_book()
    hier_processor, _ = _processor(dl, hier_book, work)
    true_summaries, false_summaries, levels = hs.get_true_hierarchical_summaries(hier_processor)
    hier_path = work / f"{hier_book.book_id}.tagseparated_hierarch_sum"
    hs.save_hierarch_summaries(str(hier_path), true_summaries, false_summaries, levels)
    chosen = []
    for item, false in zip(hier_book.summaries, false_summaries[: len(hier_book.summaries)], strict=True):
        chosen.append(None if false is None else list(item.distorted).index(str(false)))

    reference = {
        "authors_commit": commit,
        "seed": SEED,
        "tagseparated_sha256": tagseparated,
        "questions_shortform_sha256": shortform,
        "questions": questions,
        "hierarchical": {
            "book_id": hier_book.book_id,
            "level0_false_choice": chosen,
            "levels": [int(level) for level in levels],
            "sha256": _sha(hier_path),
        },
    }
    out = Path(__file__).with_name("authors_reference.json")
    out.write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(questions)} questions, work files in {work}")


if __name__ == "__main__":
    main(sys.argv[1])
