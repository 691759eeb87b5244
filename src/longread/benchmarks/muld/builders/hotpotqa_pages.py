"""The Wikipedia page pool of the HotpotQA lengthening: a JSONL of ``{"title", "text", "links"}``.

Rules:
- one page per line; ``title`` and ``text`` non-empty strings, ``links`` a list
  of titles (absent means no links). A bad line (not JSON, a field missing or
  of the wrong type) or a repeated title is skipped and listed in
  ``problems`` with its line: one broken page does not stop a build over
  millions (a question that needs it is then dropped as "page missing");
- titles are looked up exactly, then by the MediaWiki rule (underscores are
  spaces, the first letter is upper case), so links written either way resolve;
- a page enters a document as ``"Title\\n\\ntext"``; its token count under the
  length filter's tokenizer is computed once and cached;
- similar pages: TF-IDF (scikit-learn, English stop words, sublinear tf) over
  the block of every page, cosine similarity to the question; ranked by
  similarity, ties by pool order; pages with no word in common (similarity 0)
  are never "similar". The index is built once, the first time a question
  needs it, and does not depend on the questions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from longread.benchmarks.muld.builders.report import LengthFilter
from longread.errors import BadInputError
from longread.files import read_text


@dataclass(frozen=True)
class Page:
    title: str
    text: str
    links: tuple[str, ...]

    @property
    def block(self) -> str:
        return f"{self.title}\n\n{self.text}"


@dataclass(frozen=True)
class PageProblem:
    line: int
    problem: str


def wiki_key(title: str) -> str:
    """MediaWiki's title identity: underscores are spaces, runs of spaces collapse, first letter upper."""
    spaced = " ".join(title.replace("_", " ").split())
    return spaced[:1].upper() + spaced[1:]


def parse_page(raw: str) -> Page | str:
    """One JSONL line → a page, or what is wrong with it."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(value, dict):
        return "not a JSON object"
    title, text, links = value.get("title"), value.get("text"), value.get("links", [])
    if not isinstance(title, str) or not title.strip():
        return "no 'title' string"
    if not isinstance(text, str) or not text.strip():
        return f"page {title!r} has no 'text' string"
    if not isinstance(links, list) or not all(isinstance(link, str) for link in links):
        return f"page {title!r}: 'links' is not a list of titles"
    return Page(title.strip(), text.strip(), tuple(links))


@dataclass
class PagePool:
    path: Path
    pages: list[Page] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    """The JSONL line of each page."""
    problems: list[PageProblem] = field(default_factory=list)
    _exact: dict[str, int] = field(default_factory=dict)
    _by_key: dict[str, int] = field(default_factory=dict)
    _tokens: dict[int, int] = field(default_factory=dict)
    _tfidf: Any = None
    _matrix: Any = None

    @classmethod
    def read(cls, path: str | Path) -> PagePool:
        pool = cls(Path(path))
        text = read_text(pool.path, max_line_chars=None)
        for number, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            parsed = parse_page(raw)
            if isinstance(parsed, str):
                pool.problems.append(PageProblem(number, parsed))
            elif parsed.title in pool._exact:
                first = pool.lines[pool._exact[parsed.title]]
                pool.problems.append(
                    PageProblem(number, f"title {parsed.title!r} repeated (line {first} kept)")
                )
            else:
                pool._exact[parsed.title] = len(pool.pages)
                pool.lines.append(number)
                pool._by_key.setdefault(wiki_key(parsed.title), len(pool.pages))
                pool.pages.append(parsed)
        if not pool.pages:
            raise BadInputError(pool.path, "holds no usable page", "give a JSONL of {title, text, links}")
        return pool

    def find(self, title: str) -> int | None:
        """The index of the page called ``title`` (exact, then the MediaWiki rule), or None."""
        index = self._exact.get(title.strip())
        return index if index is not None else self._by_key.get(wiki_key(title))

    def tokens(self, index: int, length: LengthFilter) -> int:
        if index not in self._tokens:
            self._tokens[index] = length.count(self.pages[index].block)
        return self._tokens[index]

    def linked(self, indices: list[int]) -> Iterator[int]:
        """The pages the given pages link to, in link order, each once; links to absent pages skipped."""
        seen: set[int] = set()
        for index in indices:
            for title in self.pages[index].links:
                target = self.find(title)
                if target is not None and target not in seen:
                    seen.add(target)
                    yield target

    def similar(self, question: str) -> Iterator[int]:
        """Pages by decreasing TF-IDF cosine similarity to ``question`` (ties: pool order), similarity > 0."""
        if self._matrix is None:
            from sklearn.feature_extraction.text import TfidfVectorizer

            self._tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True, dtype=np.float32)
            self._matrix = self._tfidf.fit_transform([page.block for page in self.pages])
        query = self._tfidf.transform([question])
        scores = np.asarray((self._matrix @ query.T).todense()).ravel()
        order = np.lexsort((np.arange(len(scores)), -scores))
        for index in order:
            if scores[index] <= 0:
                return
            yield int(index)
