"""The page's Software section: report.md's paragraph of the same name as markup.

The versions that differ between the runs (one column per run) and, for runs of one model that asked the
same question, whether their log-probs and outputs agree (:mod:`longread.report.software`). Nothing when
the runs share their software and none is compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from longread.report.agreement import AGREEMENT_HEADING
from longread.report.load import RunReport
from longread.report.software import DIFFERING_SOFTWARE, SAME_SOFTWARE, software_facts


def inline_markup(text: str) -> str:
    """``text`` escaped, its markdown ``**bold**`` and ```code``` marks turned into tags."""
    marked = escape(text)
    for mark, tag in (("**", "strong"), ("`", "code")):
        pieces = marked.split(mark)
        marked = "".join(piece if i % 2 == 0 else f"<{tag}>{piece}</{tag}>" for i, piece in enumerate(pieces))
    return marked


def software_html(runs: Sequence[RunReport]) -> str:
    """``<h2>Software</h2>`` with the differing versions and the agreement of the same rows, or ``""``."""
    facts = software_facts(runs)
    if not facts.worth_saying:
        return ""
    parts = ["<h2>Software</h2>"]
    if facts.differing:
        head = "".join(f"<th>{escape(run.label)}</th>" for run in runs)
        rows = [
            f"<tr><th>{escape(d.name)}</th>" + "".join(f"<td>{escape(v)}</td>" for v in d.values) + "</tr>"
            for d in facts.differing
        ]
        parts += [
            f"<p>{escape(DIFFERING_SOFTWARE)}</p>",
            f"<table class=configs><thead><tr><th>software</th>{head}</tr></thead><tbody>",
            *rows,
            "</tbody></table>",
        ]
    else:
        parts.append(f"<p>{escape(SAME_SOFTWARE)}</p>")
    if facts.lines:
        parts.append(f"<p>{escape(AGREEMENT_HEADING)}</p>")
        parts.append(
            "<ul class=agreement>"
            + "".join(f"<li>{inline_markup(line)}</li>" for line in facts.lines)
            + "</ul>"
        )
    return "\n".join(parts)
