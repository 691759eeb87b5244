"""The page's Software section: report.md's paragraph of the same name as markup.

The versions that differ between the runs (one column per run) and, for runs of one model that asked the
same question, whether their log-probs and outputs agree (:mod:`longread.report.versions`). Nothing when
the runs share their software and none is compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from longread.report.load import RunReport
from longread.report.versions import (
    AGREEMENT_HEADING,
    agreement_lines,
    agreements,
    run_versions,
    version_differences,
)


def inline_markup(text: str) -> str:
    """``text`` escaped, its markdown ``**bold**`` and ```code``` marks turned into tags."""
    marked = escape(text)
    for mark, tag in (("**", "strong"), ("`", "code")):
        pieces = marked.split(mark)
        marked = "".join(piece if i % 2 == 0 else f"<{tag}>{piece}</{tag}>" for i, piece in enumerate(pieces))
    return marked


def software_html(runs: Sequence[RunReport]) -> str:
    """``<h2>Software</h2>`` with the differing versions and the agreement of the same rows, or ``""``."""
    recorded = [run_versions(run.path) for run in runs]
    differing = version_differences(recorded) if len(runs) > 1 else []
    said = agreement_lines(agreements(runs))
    if not differing and not said:
        return ""
    parts = ["<h2>Software</h2>"]
    if differing:
        head = "".join(f"<th>{escape(run.label)}</th>" for run in runs)
        rows = [
            f"<tr><th>{escape(d.name)}</th>" + "".join(f"<td>{escape(v)}</td>" for v in d.values) + "</tr>"
            for d in differing
        ]
        parts += [
            "<p>Software that differs between the runs:</p>",
            f"<table class=configs><thead><tr><th>software</th>{head}</tr></thead><tbody>",
            *rows,
            "</tbody></table>",
        ]
    else:
        parts.append("<p>The runs were made with the same software versions.</p>")
    if said:
        parts.append(f"<p>{escape(AGREEMENT_HEADING)}</p>")
        parts.append(
            "<ul class=agreement>" + "".join(f"<li>{inline_markup(line)}</li>" for line in said) + "</ul>"
        )
    return "\n".join(parts)
