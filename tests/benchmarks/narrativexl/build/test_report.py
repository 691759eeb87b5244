"""The build report names redrawn questions and failed merges, in the file and in what the command prints."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from longread.benchmarks.narrativexl.build.report import BookOutcome, NarrativeXLBuildReport
from longread.benchmarks.narrativexl.questions import make_readalong_questions
from tests.benchmarks.narrativexl.books import main_book, other_books
from tests.helpers import needs_shared


@needs_shared
def test_redrawn_and_skipped_questions_and_failed_merges_are_reported(tmp_path: Path) -> None:
    book = main_book()
    same = book.summaries[0].summary
    summaries = tuple(s.model_copy(update={"summary": same}) if s.summary else s for s in book.summaries)
    one_text = book.model_copy(update={"summaries": summaries})
    drawn = make_readalong_questions(one_text, other_books(), np.random.default_rng(0))
    outcome = BookOutcome(
        book_id=book.book_id,
        skipped_questions=dict(drawn.skipped),
        redrawn_questions=dict(drawn.redrawn),
        failed_merges=["level 1 summary 0 (scenes 0–39): no ### BEGIN ANSWER ### tag"],
    )
    report = NarrativeXLBuildReport(out=tmp_path, books=[outcome])
    lines = "\n".join(report.summary_lines())
    redrawn = drawn.redrawn["lookahead: two options with the same text"]
    assert f"redrawn {redrawn} question(s): lookahead: two options with the same text" in lines
    skipped = drawn.skipped["lookahead: two options with the same text in every draw"]
    assert f"skipped {skipped} question(s): lookahead: two options with the same text in every draw" in lines
    assert "hierarchical merge failed: level 1 summary 0 (scenes 0–39): no ### BEGIN ANSWER ### tag" in lines
    saved = report.as_dict()["books"][0]
    assert saved["redrawn_questions"] == drawn.redrawn and saved["failed_merges"] == outcome.failed_merges
