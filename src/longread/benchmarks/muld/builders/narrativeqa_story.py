"""Where a NarrativeQA story runs inside its downloaded ``tmp/<document_id>.content`` file.

``documents.csv`` gives ``story_start`` and ``story_end``: the first and the
last few *tokens* of the story after the authors' cleanup and tokenisation
(``Produced by Sharon`` … ``new eBooks .``, punctuation split off). Rules:

- a marker matches its tokens in order with any whitespace between them
  (none needed next to punctuation, at least one between two word tokens);
- the story starts at the first match of ``story_start`` after the Gutenberg
  ``*** START OF THIS PROJECT GUTENBERG …`` line when the file has one (the
  authors cut the licence header first: The Time Machine's marker "The Time
  Machine" also occurs in the header), else at its first match in the file;
- it ends at the end of the last match of ``story_end`` after the start;
- a marker not found leaves that end of the file as it is (start 0 or the
  file's end) and says so (``start_found`` / ``end_found``), so the build
  report can list every story whose extent is a guess. Movie pages whose
  marker is JavaScript (``if ( window``) fall here: scripts are not text.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

_GUTENBERG_START = re.compile(r"^\*\*\*\s*START OF (?:THIS|THE) PROJECT GUTENBERG[^\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class StoryExtent:
    start: int
    end: int
    start_found: bool
    end_found: bool

    def cut(self, text: str) -> str:
        return text[self.start : self.end]


@lru_cache(maxsize=4096)
def marker_pattern(marker: str) -> re.Pattern[str] | None:
    """The regex of a tokenised marker, or None for an empty marker."""
    tokens = marker.split()
    if not tokens:
        return None
    parts = [re.escape(tokens[0])]
    for before, after in itertools.pairwise(tokens):
        between_words = _is_word_char(before[-1]) and _is_word_char(after[0])
        parts.append(r"\s+" if between_words else r"\s*")
        parts.append(re.escape(after))
    return re.compile("".join(parts))


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def find_story(text: str, story_start: str, story_end: str) -> StoryExtent:
    """The extent of the story in ``text`` (see the module rules)."""
    start, start_found = 0, False
    start_pattern = marker_pattern(story_start)
    if start_pattern is not None:
        header = _GUTENBERG_START.search(text)
        found = start_pattern.search(text, header.end()) if header is not None else None
        if found is None:
            found = start_pattern.search(text)
        if found is not None:
            start, start_found = found.start(), True
    end, end_found = len(text), False
    end_pattern = marker_pattern(story_end)
    if end_pattern is not None:
        last = None
        for last in end_pattern.finditer(text, start):  # noqa: B007 - the last match is the one we want
            pass
        if last is not None:
            end, end_found = last.end(), True
    return StoryExtent(start, end, start_found, end_found)
