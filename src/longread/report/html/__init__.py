"""``longread report RUN… --html DIR``: one self-contained page (``DIR/index.html``) for a comparison.

The page holds everything inline — style, script, the memory curve as SVG, the rows as a
JSON island — so it opens from disk with no network. Its tables carry the same cells as
``report.md`` (the same loader and formatting); every text from the runs is escaped (book text
is untrusted HTML): in markup by :func:`html.escape`, in the JSON island by escaping ``<``,
``>`` and ``&``, and the script writes it with ``textContent`` only.
"""

from __future__ import annotations

from longread.report.html.page import build_html_report, json_island

__all__ = ["build_html_report", "json_island"]
