"""The inline style and script of the HTML report (no file or network fetched at view time).

The script reads the JSON island ``#report-data``, writes every text from the runs with
``textContent`` (book text is untrusted HTML), and wires: model toggles (hide a run in the plot,
the table and the sample list), hover on plot points (n and interval), the sample filters and
the detail view of one sample (task views: :mod:`longread.report.html.assets_views`).
"""

from longread.report.html.assets_views import VIEWS_SCRIPT, VIEWS_STYLE

_BASE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.overall td { font-weight: bold; background: #f6f6f6; }
tr.differs th { background: #fff4d6; }
.toggles label { margin-right: 1.2em; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: -1px; }
#tip { position: fixed; display: none; background: #222; color: #fff; padding: 4px 8px;
       border-radius: 4px; font-size: 0.85em; pointer-events: none; }
.filters button { margin-right: 0.3em; } .filters button.active { font-weight: bold; background: #dde8ff; }
.filters label { margin-left: 1em; }
#samples tbody tr { cursor: pointer; } #samples tbody tr:hover { background: #eef4ff; }
#samples tbody tr.selected { background: #dde8ff; }
.hidden { display: none !important; }
.context { white-space: pre-wrap; max-height: 24em; overflow: auto; border: 1px solid #ccc;
           padding: 0.6em; font-family: Georgia, serif; background: #fdfdf8; }
.context .dropped { color: #999; } .cutmark { color: #b00; font-weight: bold; }
p.cut.exact { color: #060; } p.cut.approximate { color: #a50; font-weight: bold; }
tr.picked td { background: #ffe9e9; } tr.gold td:first-child { font-weight: bold; }
tr.picked.gold td { background: #e4f7e4; }
.note { color: #666; font-size: 0.9em; }
pre.cand { white-space: pre-wrap; margin: 0; font-family: Georgia, serif; max-width: 60em; }
"""

_MAIN_SCRIPT = r"""
(function () {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const hiddenRuns = new Set();
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };
  const MAX_LIST = 500;

  // model toggles
  document.querySelectorAll('.toggles input').forEach(box => box.addEventListener('change', () => {
    if (box.checked) hiddenRuns.delete(box.value); else hiddenRuns.add(box.value);
    document.querySelectorAll('[data-run]').forEach(node => {
      if (node.closest('.toggles')) return;
      node.classList.toggle('hidden', hiddenRuns.has(node.getAttribute('data-run')));
    });
    renderList();
  }));

  // hover on plot points
  const tip = document.getElementById('tip');
  document.querySelectorAll('circle.point').forEach(c => {
    c.addEventListener('mouseenter', ev => { tip.textContent = c.getAttribute('data-tip');
      tip.style.display = 'block';
      tip.style.left = (ev.clientX + 12) + 'px'; tip.style.top = (ev.clientY + 12) + 'px'; });
    c.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  });

  // sample browser
  const all = [];
  data.runs.forEach(run => run.rows.forEach((row, i) => all.push({ run, row, index: i })));
  let outcome = 'all';
  const xSelect = document.getElementById('filter-x'), groupSelect = document.getElementById('filter-group');
  const xValue = s => s.row[s.run.x_field], groupValue = s => s.row[s.run.group_field];
  const fill = (select, values) => { [...new Set(values.map(String))].sort((a, b) => {
      const na = Number(a), nb = Number(b); return (isNaN(na) || isNaN(nb)) ? a.localeCompare(b) : na - nb; })
    .forEach(v => { const o = el('option', v); o.value = v; select.appendChild(o); }); };
  fill(xSelect, all.map(xValue).filter(v => v !== undefined && v !== null));
  fill(groupSelect, all.map(groupValue).filter(v => v !== undefined && v !== null));
  document.querySelectorAll('.filters button').forEach(b => b.addEventListener('click', () => {
    outcome = b.getAttribute('data-outcome');
    document.querySelectorAll('.filters button').forEach(o => o.classList.toggle('active', o === b));
    renderList();
  }));
  xSelect.addEventListener('change', renderList); groupSelect.addEventListener('change', renderList);

  function visible(s) {
    if (hiddenRuns.has(s.run.id)) return false;
    if (outcome !== 'all') { if (typeof s.row.correct !== 'boolean') return false;
      if (s.row.correct !== (outcome === 'correct')) return false; }
    if (xSelect.value !== '' && String(xValue(s)) !== xSelect.value) return false;
    if (groupSelect.value !== '' && String(groupValue(s)) !== groupSelect.value) return false;
    return true;
  }

  function renderList() {
    const body = document.querySelector('#samples tbody');
    body.replaceChildren();
    const shown = all.filter(visible);
    document.getElementById('sample-count').textContent = String(shown.length);
    document.getElementById('list-note').textContent = shown.length > MAX_LIST ?
      'listing the first ' + MAX_LIST + ' — narrow the filters to see the others' : '';
    shown.slice(0, MAX_LIST).forEach(s => {
      const tr = el('tr'); tr.setAttribute('data-run', s.run.id); tr.setAttribute('data-key', s.row.key);
      tr.className = 'sample';
      const verdict = typeof s.row.correct === 'boolean' ? (s.row.correct ? 'correct' : 'wrong') : '—';
      [s.run.label, s.row.key, xValue(s), groupValue(s), verdict, rememberedCell(s.row)]
        .forEach(v => tr.appendChild(el('td', v)));
      tr.addEventListener('click', () => { document.querySelectorAll('#samples tr.selected')
        .forEach(o => o.classList.remove('selected')); tr.classList.add('selected'); showDetail(s); });
      body.appendChild(tr);
    });
  }

  function bookMemory(row) {
    const book = row.book_id !== undefined && row.book_id !== null ? String(row.book_id) : null;
    return data.memory && book !== null ? { book, entry: data.memory.books[book] } : null;
  }

  function rememberedCell(row) {
    const found = bookMemory(row);
    if (!found) return '';
    if (!found.entry) return 'not probed';
    const verdict = found.entry.remembered;
    if (verdict === 'cannot tell') return 'cannot tell';
    return verdict === true ? 'yes' : verdict === false ? 'no' : '—';
  }

  function showDetail(s) {
    const box = document.getElementById('detail'); box.replaceChildren();
    const row = s.row, run = s.run, text = run.texts[row.id];
    box.appendChild(el('h3', row.key + ' — ' + run.label));
    const found = bookMemory(row);
    if (found) box.appendChild(el('p', 'Memory of book ' + found.book + ' (' + data.memory.model + '): ' +
      (found.entry ? found.entry.text : 'not probed'), 'memory'));
    const shown = LONGREAD_VIEWS.controlled(box, row, run, el);
    const view = VIEW_OF_ROW(row);
    if (view) { LONGREAD_VIEWS[view](box, row, run, text, el); box.appendChild(fieldsTable(row)); return; }
    if (typeof row.correct === 'boolean') box.appendChild(el('p',
      (row.correct ? 'correct' : 'wrong') +
      (row.prediction !== undefined ? ' — the model picked candidate ' + row.prediction +
        (row.prediction === 0 ? ' (the gold)' : ' (a negative; the gold is candidate 0)') : '') +
      (row.tie ? ' — a tie' : ''), 'verdict'));
    if (!shown) box.appendChild(el('h4', 'Context as the model saw it'));
    if (shown) { /* the controlled context above is what the model read */ }
    else if (row.context_tokens_original !== undefined) box.appendChild(el('p',
      'kept ' + row.context_tokens_kept + ' of ' + row.context_tokens_original + ' prefix tokens' +
      (row.context_truncated ? ' (cut at the start: the model saw the end of the prefix)'
        : ' (the whole prefix)'), 'note'));
    if (text && !shown) {
      const exact = text.cuts && text.cuts[String(row.context_tokens_kept)] !== undefined;
      const share = row.context_tokens_original ? row.context_tokens_kept / row.context_tokens_original : 1;
      const keptChars = exact ? text.prefix_chars - text.cuts[String(row.context_tokens_kept)]
        : Math.round(text.prefix_chars * share);
      const how = exact || (run.cut && run.cut.startsWith('approximate')) ? run.cut
        : 'approximate: this cut could not be placed by the tokenizer; ' +
          'placed by the share of tokens kept, applied to characters';
      box.appendChild(el('p', 'cut: ' + how, exact ? 'cut exact' : 'cut approximate'));
      const tail = text.prefix_tail, start = Math.max(0, tail.length - keptChars);
      const ctx = el('div', undefined, 'context');
      if (start > 0) {
        ctx.appendChild(el('span', '… ' + tail.slice(Math.max(0, start - 400), start), 'dropped'));
        ctx.appendChild(el('span', ' ✂ the model saw from here ✂ ', 'cutmark')); }
      else if (keptChars > tail.length) ctx.appendChild(el('span', '[the first ' + (keptChars - tail.length) +
        ' characters of what the model saw are not embedded in this page] ', 'cutmark'));
      ctx.appendChild(el('span', tail.slice(start), 'kept'));
      box.appendChild(ctx);
      box.appendChild(el('p', run.text_note, 'note'));
    } else if (!shown) box.appendChild(el('p', run.text_note, 'note'));
    const scores = row.logprobs || row.scores;
    if (scores) {
      box.appendChild(el('h4', 'Candidates'));
      const table = el('table'); table.className = 'candidates';
      const head = el('tr');
      ['#', 'role', row.logprobs ? 'log-prob (nats)' : 'score', 'tokens scored', 'text']
        .forEach(h => head.appendChild(el('th', h))); table.appendChild(head);
      scores.forEach((value, i) => {
        const tr = el('tr'); tr.className = (i === 0 ? 'gold ' : '') + (i === row.prediction ? 'picked' : '');
        const role = (i === 0 ? 'gold' : 'negative') + (i === row.prediction ? ' · picked' : '');
        const toks = row.continuation_tokens ?
          row.continuation_tokens[i] + ' of ' + row.continuation_tokens_original[i] : '';
        [i, role, Number(value).toFixed(3), toks].forEach(v => tr.appendChild(el('td', v, 'num')));
        const td = el('td');
        td.appendChild(el('pre', text ? text.candidates[i] : '(text not available)', 'cand'));
        tr.appendChild(td); table.appendChild(tr);
      });
      box.appendChild(table);
    }
    box.appendChild(fieldsTable(row));
  }

  function fieldsTable(row) {
    const wrap = el('div', undefined, 'fields');
    wrap.appendChild(el('h4', 'Every field of the row'));
    const fields = el('table');
    Object.entries(row).forEach(([k, v]) => { const tr = el('tr'); tr.appendChild(el('th', k));
      tr.appendChild(el('td', typeof v === 'object' ? JSON.stringify(v) : v)); fields.appendChild(tr); });
    wrap.appendChild(fields);
    return wrap;
  }
  renderList();
})();
"""

STYLE = _BASE_STYLE + VIEWS_STYLE
SCRIPT = VIEWS_SCRIPT + _MAIN_SCRIPT
