"""The task views of the sample browser's detail pane (inline script, text written with textContent only).

``LONGREAD_VIEWS`` maps a view name to ``function (box, row, run, text, el)`` that fills the detail pane
below its heading; the main script (:mod:`longread.report.html.assets`) picks the view by
:data:`VIEW_OF_ROW` (the row's fields, so a row whose data is gone still gets its view and the note why).

- ``narrativexl``: the question, every option (kind, log-prob, tokens, per-token mean, right / picked),
  and the scenes read before the question — folded ones counted, the true scene marked, the window's
  cut marked inside its scene when the report could place it, else the row's own account in words.
- ``controlled`` (called for every row first): a controlled run's context as the model read it, decoded
  from its saved token ids — the perturbed part marked, then the kept tail — or the note why it cannot be
  shown.
- ``muld``: the prediction and the references side by side, and what the baseline kept of the document
  (chunk index, character span, tokens, score) or the spans the row records.
"""

VIEWS_SCRIPT = r"""
const LONGREAD_VIEWS = (function () {
  function narrativexl(box, row, run, text, el) {
    const kinds = row.option_kinds || [];
    const name = i => (i === null || i === undefined) ? 'no option (nothing readable)'
      : 'option ' + (i + 1) + ' (' + kinds[i] + ')';
    box.appendChild(el('p', (row.correct ? 'correct' : 'wrong') + ' — the model picked ' +
      name(row.prediction) + '; the right one is ' + name(row.answer) + (row.tie ? ' — a tie for first' : ''),
      'verdict'));
    box.appendChild(el('h4', 'Question'));
    box.appendChild(el('p', text ? text.question : '(question text not available)', 'question'));
    box.appendChild(el('h4', 'Options'));
    const table = el('table', undefined, 'options');
    const head = el('tr');
    ['#', 'kind', 'role', 'log-prob (nats)', 'tokens', 'per token', 'text']
      .forEach(h => head.appendChild(el('th', h)));
    table.appendChild(head);
    kinds.forEach((kind, i) => {
      const right = i === row.answer, picked = i === row.prediction;
      const tr = el('tr'); tr.className = (right ? 'gold ' : '') + (picked ? 'picked' : '');
      const role = [right ? 'right' : '', picked ? 'picked' : ''].filter(Boolean).join(' · ');
      const lp = row.option_logprobs ? row.option_logprobs[i] : null;
      const toks = row.option_tokens ? row.option_tokens[i] : null;
      [i + 1, kind, role].forEach(v => tr.appendChild(el('td', v)));
      const cell = el('td', lp === null ? '—' : Number(lp).toFixed(3), 'num logprob');
      if (lp !== null) cell.setAttribute('data-value', String(lp));
      tr.appendChild(cell);
      tr.appendChild(el('td', toks === null ? '—' : toks, 'num'));
      tr.appendChild(el('td', lp === null || !toks ? '—' : (lp / toks).toFixed(3), 'num'));
      const td = el('td');
      const option = text ? text.options[i] : null;
      td.appendChild(el('pre', option ? option.text : '(text not available)', 'cand'));
      const origin = option && option.kind !== 'none' && (option.book_id || option.scene !== null);
      if (origin) td.appendChild(el('span',
        'from ' + (option.book_id ? 'book ' + option.book_id : 'this book') +
        (option.scene !== null && option.scene !== undefined ? ', scene ' + option.scene : ''), 'note'));
      tr.appendChild(td); table.appendChild(tr);
    });
    box.appendChild(table);
    if (row.generated !== null && row.generated !== undefined) {
      box.appendChild(el('p', 'generated: ' + row.generated)); }
    box.appendChild(el('h4', 'What the model read'));
    if (!text) { box.appendChild(el('p', run.text_note, 'note')); return; }
    const store = (run.texts[text.scene_texts] || { texts: {} }).texts;
    const scenes = text.scenes.map(index => ({ index, text: store[String(index)] }));
    const shownIdx = new Set(text.scenes);
    box.appendChild(el('p', 'the model read ' + text.scenes_read + ' scene' +
      (text.scenes_read === 1 ? '' : 's') +
      (text.scenes_read ? ' (0–' + (text.scenes_read - 1) + ')' : '') + ' before the question; ' +
      text.folded + ' earlier ' + (text.folded === 1 ? 'scene is' : 'scenes are') + ' folded' +
      (text.true_scene === null ? '; the right answer is "None of the above."' :
        '; the evidence is scene ' + text.true_scene + ', ' + row.retention_demand + ' scenes back'),
      'note scenes-note'));
    box.appendChild(el('p', text.cut_note, 'note cut-note'));
    if (text.cut && !shownIdx.has(text.cut.scene)) box.appendChild(el('p',
      'the held text starts in scene ' + text.cut.scene + ' (folded) at character ' + text.cut.offset,
      'cutmark'));
    const ctx = el('div', undefined, 'context scenes');
    let previous = -1;
    scenes.forEach(sc => {
      if (sc.index > previous + 1) ctx.appendChild(el('p', '… ' + (sc.index - previous - 1) + ' scene' +
        (sc.index - previous - 1 === 1 ? '' : 's') + ' folded …', 'folded'));
      previous = sc.index;
      const div = el('div', undefined, 'scene' + (sc.index === text.true_scene ? ' evidence' : ''));
      div.setAttribute('data-scene', String(sc.index));
      const outside = text.cut && sc.index < text.cut.scene;
      const evidence = sc.index === text.true_scene ? ' — the evidence: its summary is the right option' : '';
      div.appendChild(el('h5', 'scene ' + sc.index + evidence +
        (outside ? ' — outside the window' : '')));
      const body = el('div', undefined, 'scene-text');
      if (text.cut && sc.index === text.cut.scene) {
        body.appendChild(el('span', sc.text.slice(0, text.cut.offset), 'dropped'));
        body.appendChild(el('span', ' ✂ the model held from here ✂ ', 'cutmark'));
        body.appendChild(el('span', sc.text.slice(text.cut.offset), 'kept'));
      } else body.appendChild(el('span', sc.text, outside ? 'dropped' : 'kept'));
      div.appendChild(body); ctx.appendChild(div);
    });
    box.appendChild(ctx);
    box.appendChild(el('p', run.text_note, 'note'));
  }

  function muld(box, row, run, text, el) {
    box.appendChild(el('h4', 'Prediction and references'));
    const side = el('table', undefined, 'sidebyside');
    const head = el('tr'); ['prediction', 'references'].forEach(h => head.appendChild(el('th', h)));
    side.appendChild(head);
    const tr = el('tr');
    const pred = el('td'); pred.appendChild(el('pre', typeof row.prediction === 'object' ?
      JSON.stringify(row.prediction) : row.prediction, 'cand prediction'));
    const refs = el('td');
    (row.references || []).forEach(r => refs.appendChild(el('pre', r, 'cand reference')));
    tr.appendChild(pred); tr.appendChild(refs); side.appendChild(tr);
    box.appendChild(side);
    const selection = row.kept && row.kept.kept ? row.kept : null;
    box.appendChild(el('h4', 'What the baseline kept of the document'));
    if (selection) {
      box.appendChild(el('p', selection.method + ' — ' + selection.kept.length + ' of ' + selection.n_units +
        ' chunks, ' + selection.document_tokens + ' ' + selection.tokenizer + ' tokens in the document',
        'note'));
      const table = el('table', undefined, 'kept');
      const h = el('tr');
      ['chunk', 'characters', 'tokens kept', 'score', 'label'].forEach(x => h.appendChild(el('th', x)));
      table.appendChild(h);
      selection.kept.forEach(k => { const r = el('tr');
        [k.index, k.start + '–' + k.end, k.n_tokens + ' of ' + k.full_tokens,
         k.score === null || k.score === undefined ? '—' : Number(k.score).toFixed(4), k.label || '']
          .forEach(v => r.appendChild(el('td', v, 'num'))); table.appendChild(r); });
      box.appendChild(table);
    } else if (row.spans) {
      const table = el('table', undefined, 'kept');
      row.spans.forEach(sp => { const r = el('tr'); sp.forEach(v => r.appendChild(el('td', v)));
        table.appendChild(r); });
      box.appendChild(table);
    } else box.appendChild(el('p', row.kept === null ? 'the whole document from its start (no retrieval)' :
      'the row records no kept chunks', 'note'));
    box.appendChild(el('p', run.text_note, 'note'));
  }

  function controlled(box, row, run, el) {
    if (!row.context_control || row.context_control === 'intact') return false;
    const view = (run.controlled || {})[row.key];
    const what = { shuffle: 'shuffled', replace: 'replaced by other documents\' tokens', none: 'dropped' };
    box.appendChild(el('h4', 'Context as the model read it — ' + row.context_control + ', the last ' +
      row.keep_last + ' tokens kept'));
    if (!view) { box.appendChild(el('p', run.controlled_note || 'no token ids saved for this row', 'note'));
      return false; }
    if (view.unavailable) { box.appendChild(el('p', view.unavailable, 'note')); return false; }
    const donors = view.donors.length ? ' (from ' + view.donors.join(', ') + ')' : '';
    box.appendChild(el('p', view.tokens_perturbed + ' distant tokens ' +
      (what[view.control] || view.control) + donors + '; then ' +
      (view.kept_tokens === undefined ? 'the kept tail' : view.kept_tokens + ' tokens as they were') +
      ' (the kept tail, and the question where the task asks one after the document)', 'note control-note'));
    const omitted = part => part.omitted_chars ? '[' + part.omitted_chars + ' characters before this are ' +
      'not shown] ' : '';
    const ctx = el('div', undefined, 'context controlled');
    if (view.parts) view.parts.forEach((part, i) => {
      ctx.appendChild(el('h5', 'part ' + (i + 1)));
      ctx.appendChild(el('span', omitted(part) + part.text, 'kept')); });
    else {
      if (view.control === 'none') ctx.appendChild(el('span', '[' + view.tokens_perturbed +
        ' tokens dropped: the model read nothing before this] ', 'cutmark'));
      else if (view.distant.text || view.distant.omitted_chars) ctx.appendChild(el('span',
        omitted(view.distant) + view.distant.text, 'perturbed'));
      ctx.appendChild(el('span', ' ✂ the last ' + row.keep_last + ' tokens, kept as they were ✂ ',
        'cutmark'));
      ctx.appendChild(el('span', omitted(view.kept) + view.kept.text, 'kept'));
    }
    box.appendChild(ctx);
    box.appendChild(el('p', run.controlled_note, 'note'));
    return true;
  }

  return { narrativexl, muld, controlled };
})();
const VIEW_OF_ROW = row => row.option_kinds !== undefined && row.when_asked !== undefined ? 'narrativexl'
  : (row.references !== undefined && row.task !== undefined ? 'muld' : null);
"""

VIEWS_STYLE = """
.scene { border-top: 1px dashed #ccc; margin-top: 0.4em; } .scene h5 { margin: 0.3em 0; color: #555; }
.scene.evidence { background: #fff8d8; } .scene.evidence h5 { color: #7a5a00; }
p.folded { color: #888; font-style: italic; } p.question { white-space: pre-wrap; font-weight: bold; }
table.sidebyside td { width: 50%; }
.context .perturbed { background: #fde4e4; color: #7a2020; }
"""
