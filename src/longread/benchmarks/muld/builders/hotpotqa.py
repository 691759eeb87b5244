"""``longread build muld/hotpotqa``: HotpotQA questions lengthened with whole Wikipedia pages.

Sources: a HotpotQA JSON file (a list of ``{_id, question, answer,
supporting_facts: [[title, sent_idx]], context: [[title, [sentences]]], type,
level}``, as hotpotqa.github.io publishes ``hotpot_train_v1.1.json`` /
``hotpot_dev_distractor_v1.json``) and a JSONL of Wikipedia pages
(:mod:`.build_hotpotqa_pages`).

Rules, per question (independent of the other questions):
1. the supporting pages (titles of ``supporting_facts`` in first-mention
   order) IN FULL from the pool; one missing → the question is dropped;
2. distractors until the input reaches the length filter's minimum: first the
   pages the supporting pages link to (link order), then the pages most
   similar to the question (TF-IDF); the pool running out → dropped, too short;
3. the pages are shuffled with ``random.Random(question_seed(seed, _id))`` —
   a seed derived from the global seed and the question id, so one question's
   order does not depend on which other questions are built;
4. document = the pages as ``"Title\\n\\ntext"`` joined by ``"\\n\\n"``;
   ``input`` = question + ``"\\n\\n"`` + document; ``output`` = ``[answer]``.
- ``metadata``: ``id``, ``question``, ``type``, ``level``, ``seed``,
  ``document_offset`` (where the document starts in ``input``), ``pages`` in
  document order (``title``, ``start``, ``end`` — character span in the
  document —, ``supporting``, ``origin``: supporting/linked/similar) and
  ``evidence``: each supporting fact's sentence (from ``context``) with its
  span in the document, or null span when the page text does not hold it
  verbatim.
- Dropped with the reason: a question without answer (the test set), a field
  missing, a supporting page missing, too short; bad pool lines are listed
  in the report (``page_problems``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.builders.hotpotqa_pages import PagePool
from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter
from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.errors import BadInputError
from longread.files import read_text

PAGE_SEPARATOR = "\n\n"


def question_seed(seed: int, question_id: str) -> int:
    """A 64-bit seed from the global seed and the question id (stable across runs and Python versions)."""
    digest = hashlib.sha256(f"{seed}\x00{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class _Chosen:
    index: int
    origin: str


def read_questions(path: str | Path) -> list[Any]:
    path = Path(path)
    text = read_text(path, max_line_chars=None)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(
            path,
            f"not valid JSON ({exc.msg} at column {exc.colno})",
            "is this a HotpotQA file?",
            line=exc.lineno,
        ) from None
    if not isinstance(value, list):
        raise BadInputError(
            path, f"a JSON {type(value).__name__}, not a list of questions", "HotpotQA is a list"
        )
    return value


def _check_item(item: Any) -> str | None:
    if not isinstance(item, dict):
        return "not a JSON object"
    for name, kind in (("_id", str), ("question", str), ("supporting_facts", list), ("context", list)):
        if not isinstance(item.get(name), kind):
            return f"field missing or of the wrong type: {name}"
    if not isinstance(item.get("answer"), str) or not item["answer"].strip():
        return "no answer (HotpotQA's test set has none)"
    facts = item["supporting_facts"]
    if not facts or not all(isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) for f in facts):
        return "supporting_facts is not a list of [title, sentence index]"
    return None


def build_hotpotqa(
    questions: str | Path,
    pages: str | Path,
    out: str | Path,
    *,
    seed: int = 0,
    length_filter: LengthFilter | None = None,
) -> BuildReport:
    """Write the lengthened questions to ``out`` (see the module rules) and the build report."""
    length = length_filter or LengthFilter()
    pool = PagePool.read(pages)
    items = read_questions(questions)
    report = BuildReport(
        "hotpotqa",
        [str(questions), str(pages)],
        {
            **length.describe(),
            "seed": seed,
            "pool_pages": len(pool.pages),
            "distractors": "linked pages of the supporting pages, then TF-IDF similar pages",
        },
    )
    for problem in pool.problems:
        report.drop(f"{pool.path.name}:{problem.line}", f"bad page: {problem.problem}", line=problem.line)
    count = write_records(out, _records(items, pool, length, seed, report))
    report.settings["records"] = count
    report.write(out)
    return report


def _records(
    items: list[Any], pool: PagePool, length: LengthFilter, seed: int, report: BuildReport
) -> Iterator[MuldRecord]:
    for position, item in enumerate(items):
        name = item.get("_id") if isinstance(item, dict) and isinstance(item.get("_id"), str) else None
        label = name or f"question #{position}"
        problem = _check_item(item)
        if problem is not None:
            report.drop(label, problem, position=position)
            continue
        record = _lengthen(item, pool, length, seed, report)
        if record is not None:
            yield record


def _lengthen(
    item: dict[str, Any], pool: PagePool, length: LengthFilter, seed: int, report: BuildReport
) -> MuldRecord | None:
    question = item["question"].strip()
    support_titles = list(dict.fromkeys(fact[0] for fact in item["supporting_facts"]))
    chosen: list[_Chosen] = []
    for title in support_titles:
        index = pool.find(title)
        if index is None:
            report.drop(item["_id"], f"supporting page missing: {title!r} is not in the page pool")
            return None
        chosen.append(_Chosen(index, "supporting"))
    exhausted = _grow(question, chosen, pool, length)
    rng = random.Random(question_seed(seed, item["_id"]))
    rng.shuffle(chosen)
    document, spans = _assemble(chosen, pool)
    ok, tokens = length.check(question + "\n\n" + document)
    if not ok:
        why = " (page pool exhausted)" if exhausted else " (after shuffling)"
        report.drop(item["_id"], length.reason(tokens) + why, pages=len(chosen))
        return None
    metadata = {
        "id": item["_id"],
        "question": question,
        "type": item.get("type"),
        "level": item.get("level"),
        "seed": seed,
        "document_offset": len(question) + 2,
        "pages": [
            {
                "title": pool.pages[page.index].title,
                "start": start,
                "end": end,
                "supporting": page.origin == "supporting",
                "origin": page.origin,
            }
            for page, (start, end) in zip(chosen, spans, strict=True)
        ],
        "evidence": _evidence(item, chosen, spans, pool),
    }
    report.keep(item["_id"], tokens=tokens, pages=len(chosen))
    return MuldRecord(
        question + "\n\n" + document,
        (item["answer"].strip(),),
        json.dumps(metadata, ensure_ascii=False, sort_keys=True),
    )


def _grow(question: str, chosen: list[_Chosen], pool: PagePool, length: LengthFilter) -> bool:
    """Add linked, then similar pages to ``chosen`` until the input is long enough; True if the pool ran out.

    The sum of the pages' token counts decides when to look; the joined text is
    then counted exactly (BPE merges across page boundaries can differ by a token).
    """
    taken = {page.index for page in chosen}
    estimate = length.count(question) + sum(pool.tokens(page.index, length) for page in chosen)

    def candidates() -> Iterator[_Chosen]:
        for index in pool.linked([page.index for page in chosen if page.origin == "supporting"]):
            yield _Chosen(index, "linked")
        for index in pool.similar(question):
            yield _Chosen(index, "similar")

    source = candidates()
    while True:
        if estimate >= length.min_tokens:
            document = _assemble(chosen, pool)[0]
            if length.count(question + "\n\n" + document) >= length.min_tokens:
                return False
        extra = next((page for page in source if page.index not in taken), None)
        if extra is None:
            return True
        taken.add(extra.index)
        chosen.append(extra)
        estimate += pool.tokens(extra.index, length)


def _assemble(chosen: list[_Chosen], pool: PagePool) -> tuple[str, list[tuple[int, int]]]:
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for page in chosen:
        if parts:
            position += len(PAGE_SEPARATOR)
        block = pool.pages[page.index].block
        spans.append((position, position + len(block)))
        parts.append(block)
        position += len(block)
    return PAGE_SEPARATOR.join(parts), spans


def _evidence(
    item: dict[str, Any], chosen: list[_Chosen], spans: list[tuple[int, int]], pool: PagePool
) -> list[dict[str, Any]]:
    """Each supporting fact's sentence and its span in the document (null when not found verbatim)."""
    context = {
        entry[0]: entry[1]
        for entry in item["context"]
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list)
    }
    where = {pool.pages[page.index].title: span for page, span in zip(chosen, spans, strict=True)}
    out: list[dict[str, Any]] = []
    for title, sentence_index in item["supporting_facts"]:
        sentences = context.get(title, [])
        sentence = ""
        if isinstance(sentence_index, int) and 0 <= sentence_index < len(sentences):
            sentence = str(sentences[sentence_index]).strip()
        page_index = pool.find(title)
        page_title = pool.pages[page_index].title if page_index is not None else title
        start: int | None = None
        if sentence and page_title in where:
            found = pool.pages[page_index].text.find(sentence) if page_index is not None else -1
            if found >= 0:
                start = where[page_title][0] + len(page_title) + 2 + found
        out.append(
            {
                "title": page_title,
                "sentence_index": sentence_index,
                "sentence": sentence,
                "start": start,
                "end": start + len(sentence) if start is not None else None,
            }
        )
    return out
