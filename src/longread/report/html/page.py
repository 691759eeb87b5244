"""``longread report RUN… --html DIR``: one self-contained page (``DIR/index.html``) for a comparison.

The page holds everything inline — style, script, the memory curve as SVG, the rows as a
JSON island — so it opens from disk with no network. Its tables carry the same cells as
``report.md`` (the same loader and formatting); every text from the runs is escaped (book text
is untrusted HTML): in markup by :func:`html.escape`, in the JSON island by escaping ``<``,
``>`` and ``&``, and the script writes it with ``textContent`` only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from longread.files import atomic_write_text
from longread.probes.memory.verdicts import MemoryVerdicts
from longread.report.html.assets import SCRIPT, STYLE
from longread.report.html.controlled import controlled_contexts
from longread.report.html.memory import memory_island, memory_split_html
from longread.report.html.plot import memory_curve_svg, run_colour
from longread.report.html.samples import model_entry, run_samples
from longread.report.html.software import inline_markup, software_html
from longread.report.load import RunReport, load_runs
from longread.report.memory_split import memory_splits
from longread.report.table import (
    format_caption,
    format_x,
    metric_cell,
    metric_header,
    metric_names,
    task_title,
)
from longread.runs.layout import CONFIG_FILE

HTML_FILE = "index.html"
GROUP_FIELDS = ("book_id", "book", "group")
"""Row fields the sample browser offers as book/group filter, the first a task's rows have."""


def build_html_report(run_dirs: Sequence[Path], out_dir: Path, memory: MemoryVerdicts | None = None) -> Path:
    """Write ``out_dir/index.html``: tables, memory curves, the software that differs, configs side by
    side and a sample browser.

    ``memory`` (a memory probe's verdicts of the runs' model): each run's score split by whether the model
    remembers the book, and each book's memory scores beside its samples."""
    if not run_dirs:
        raise ValueError("build_html_report needs at least one run directory")
    runs = load_runs([Path(path) for path in run_dirs])
    splits = memory_splits(runs, memory) if memory is not None else []
    run_ids = [f"run{index}" for index in range(len(runs))]
    by_task: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_task.setdefault(run.task, []).append(index)
    sections = []
    for indices in by_task.values():
        chosen = [runs[i] for i in indices]
        ids = [run_ids[i] for i in indices]
        sections.append(
            f"<h2>{escape(task_title(chosen))}</h2>\n"
            f"<div class=caption>{_caption_html(chosen)}</div>\n{_table_html(chosen, ids)}\n"
            f"{memory_curve_svg(chosen, ids)}"
        )
    if memory is not None:
        sections.append(memory_split_html(splits, memory, runs, run_ids))
    software = software_html(runs)
    if software:
        sections.append(software)
    island = {
        "runs": [_run_island(run, run_id) for run, run_id in zip(runs, run_ids, strict=True)],
        "memory": None if memory is None else memory_island(memory),
    }
    page = _PAGE.format(
        title=escape(f"longread report: {task_title(runs)}"),
        style=STYLE,
        toggles=_toggles_html(runs, run_ids),
        sections="\n".join(sections),
        configs=_configs_html(runs),
        data=json_island(island),
        script=SCRIPT,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / HTML_FILE
    atomic_write_text(path, page)
    return path


def json_island(value: object) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``</script>`` or ``<!--`` can close it."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _run_island(run: RunReport, run_id: str) -> dict[str, Any]:
    samples = run_samples(run)
    controlled, controlled_note = controlled_contexts(run.path, model_entry(run.path), samples.rows)
    first = samples.rows[0] if samples.rows else {}
    return {
        "id": run_id,
        "label": run.label,
        "x_field": run.x_axis.field,
        "group_field": next((name for name in GROUP_FIELDS if name in first), "group"),
        "rows": samples.rows,
        "texts": samples.texts,
        "text_note": samples.text_note,
        "cut": samples.cut,
        "controlled": controlled,
        "controlled_note": controlled_note,
    }


def _caption_html(runs: Sequence[RunReport]) -> str:
    """The caption of report.md, its markdown marks turned into markup."""
    caption = inline_markup(format_caption(runs))
    return caption.replace("\n- ", "<br>• ").replace("\n", "<br>")


def _table_html(runs: Sequence[RunReport], run_ids: Sequence[str]) -> str:
    """The table of report.md, one ``<tr data-run>`` per run × x value (and the run's ``all`` row)."""
    names = metric_names(runs)
    extras = list(dict.fromkeys(e for run in runs for e in run.report_extras))
    header = ["model", runs[0].x_axis.label, "n", *[metric_header(runs, n) for n in names]]
    header += [name.replace("_", " ") for name in extras]
    lines = ["<table class=results><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header)]
    lines.append("</tr></thead><tbody>")
    for run, run_id in zip(runs, run_ids, strict=True):
        for x, point in run.points.items():
            cells = [format_x(x, run.x_axis.scale), str(point.n)]
            cells += [metric_cell(point.metrics.get(name)) for name in names]
            cells += ["—" if point.extras.get(e) is None else str(point.extras[e]) for e in extras]
            lines.append(_table_row(run, run_id, cells, x=str(x)))
        if run.overall is not None and len(run.points) > 1:
            cells = ["all", str(run.overall.n), *[metric_cell(run.overall.metrics.get(n)) for n in names]]
            lines.append(_table_row(run, run_id, cells + [""] * len(extras), x="all"))
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _table_row(run: RunReport, run_id: str, cells: list[str], x: str) -> str:
    kind = ' class="overall"' if x == "all" else ""
    body = "".join(f'<td class="num">{escape(cell)}</td>' for cell in cells)
    return f'<tr data-run="{run_id}" data-x="{escape(x)}"{kind}><td>{escape(run.label)}</td>{body}</tr>'


def _toggles_html(runs: Sequence[RunReport], run_ids: Sequence[str]) -> str:
    return "".join(
        f'<label data-run="{run_id}"><input type="checkbox" value="{run_id}" checked>'
        f'<span class="swatch" style="background:{run_colour(i)}"></span>{escape(run.label)}</label>'
        for i, (run, run_id) in enumerate(zip(runs, run_ids, strict=True))
    )


def _configs_html(runs: Sequence[RunReport]) -> str:
    """Each run's config.json flattened to ``section.key`` rows, side by side; differing rows marked."""
    flat = [_flatten(_read_config(run.path)) for run in runs]
    keys = list(dict.fromkeys(key for config in flat for key in config))
    head = "".join(f"<th>{escape(run.label)}</th>" for run in runs)
    lines = [f"<table class=configs><thead><tr><th>setting</th>{head}</tr></thead><tbody>"]
    for key in keys:
        values = [config.get(key, "—") for config in flat]
        differs = ' class="differs"' if len(set(values)) > 1 else ""
        cells = "".join(f"<td>{escape(value)}</td>" for value in values)
        lines.append(f"<tr{differs}><th>{escape(key)}</th>{cells}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _read_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / CONFIG_FILE
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"config": f"{path} not readable"}
    config = value.get("config", value) if isinstance(value, dict) else {}
    out = dict(config) if isinstance(config, dict) else {}
    if isinstance(value, dict) and "config_hash" in value:
        out["config_hash"] = value["config_hash"]
    return out


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            out.update(_flatten(item, f"{name}."))
        else:
            out[name] = item if isinstance(item, str) else json.dumps(item)
    return out


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; \
script-src 'unsafe-inline'; img-src data:">
<title>{title}</title>
<style>{style}</style></head>
<body>
<h1>{title}</h1>
<p class="toggles">Models: {toggles}</p>
{sections}
<h2>Samples</h2>
<div class="filters">
<button data-outcome="all" class="active">all</button><button data-outcome="correct">correct</button>\
<button data-outcome="wrong">wrong</button>
<label>x value <select id="filter-x"><option value="">any</option></select></label>
<label>book / group <select id="filter-group"><option value="">any</option></select></label>
<span> — <span id="sample-count">0</span> samples</span> <span id="list-note" class="note"></span>
</div>
<table id="samples"><thead><tr><th>model</th><th>sample</th><th>x</th><th>book / group</th>\
<th>outcome</th><th>book remembered?</th></tr></thead><tbody></tbody></table>
<div id="detail"><p class="note">Click a sample to see its context, candidates and what the model picked.\
</p></div>
<h2>Run configurations</h2>
<p class="note">Each run's config.json side by side (rows that differ are marked).</p>
{configs}
<div id="tip"></div>
<script type="application/json" id="report-data">{data}</script>
<script>{script}</script>
</body></html>
"""
