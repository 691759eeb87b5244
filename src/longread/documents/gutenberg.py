"""Project Gutenberg plain-text books: strip the licence header/footer and front matter, find chapters.

Both the modern markers (``*** START OF THE PROJECT GUTENBERG EBOOK …``) and the
pre-2004 headers without them (``*END*THE SMALL PRINT! …*END*`` … ``End of the
Project Gutenberg Etext of …``) are recognised.
"""

from __future__ import annotations

import re
from pathlib import Path

from longread.documents.ao3 import normalise_language
from longread.documents.book import Book
from longread.documents.chapters import detect_chapters, spans_to_chapters
from longread.errors import BadInputError
from longread.files import read_text, strip_compression_suffix

_START_MARKERS = (
    re.compile(r"^\s*\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E-?(?:BOOK|TEXT).*$", re.I | re.M),
    # The old header ends with the end of its "small print" licence.
    re.compile(r"^\s*\*?END\*?\s*THE SMALL PRINT!.*$", re.I | re.M),
)
_END_MARKERS = (
    re.compile(r"^\s*\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E-?(?:BOOK|TEXT)", re.I | re.M),
    re.compile(r"^\s*End of (?:the )?Project Gutenberg(?:'s|’s)?\b", re.I | re.M),
    re.compile(r"^\s*\*{3}\s*START: FULL LICENSE", re.I | re.M),
)
_FIELD = r"^{name}:[ \t]*(?P<value>.+(?:\n[ \t]+\S.*)*)"
_TITLE = re.compile(_FIELD.format(name="Title"), re.M)
_AUTHOR = re.compile(_FIELD.format(name="Author"), re.M)
_LANGUAGE = re.compile(_FIELD.format(name="Language"), re.M)
# "*The Project Gutenberg Etext of Howard's End, by E. M. Forster*" (old) and the modern first line.
_OLD_TITLE_LINE = re.compile(
    r"Project Gutenberg E-?(?:Book|text) of (?P<title>.+?), by (?P<author>[^*\n]+)", re.I
)
_BOOK_NUMBER = re.compile(r"(?:E-?Book|E-?text)\s*#\s*(?P<id>\d+)", re.I)
_FILE_NUMBER = re.compile(r"^(?:pg)?(?P<id>\d+)")
# Lines after the last chapter that start back matter rather than story.
_BACK_MATTER = re.compile(
    r"^[ \t]*(?:THE END\.?|FINIS\.?|THE END OF [A-Z ,.]+|FOOTNOTES?:?|END ?NOTES?:?|NOTES?\.?|"
    r"APPENDIX\b.*|(?:ORIGINAL )?TRANSCRIBER[’']S NOTES?:?.*|GLOSSARY\.?)[ \t]*$",
    re.M,
)
_FRONT_MATTER_KINDS = (
    ("contents list", re.compile(r"^\s*(?:TABLE OF )?CONTENTS?\b|^\s*Contents\b|^\s*Chapter Titles", re.M)),
    (
        "list of illustrations",
        re.compile(r"^\s*(?:LIST OF )?ILLUSTRATIONS\b|^\s*Illustrations\b", re.M | re.I),
    ),
    ("preface", re.compile(r"^\s*(?:THE |AUTHOR[’']S )?PREFACE\b|^\s*Preface\b", re.M)),
    ("introduction", re.compile(r"^\s*INTRODUCTION\b|^\s*Introduction\b", re.M)),
    ("transcriber's note", re.compile(r"TRANSCRIBER[’']S NOTE|Transcriber[’']s Note", re.M)),
    ("dedication", re.compile(r"^\s*(?:DEDICATION|Dedication|TO MY )", re.M)),
    ("production credits", re.compile(r"(?:Produced|prepared|transcribed) by", re.I)),
)
_MARKER_HINT = (
    "this does not look like a Project Gutenberg file; read it with the plain reader (--format plain)"
)


def _strip_licence(text: str, path: str | Path) -> tuple[str, str, list[str]]:
    """The book's own text, the header before it, and notes on what was cut."""
    start = 0
    header_end = 0
    for marker in _START_MARKERS:
        match = marker.search(text)
        if match:
            start, header_end = match.end(), match.start()
            break
    end = len(text)
    for marker in _END_MARKERS:
        match = marker.search(text, start)
        if match and match.start() < end:
            end = match.start()
    if start == 0 and end == len(text):
        raise BadInputError(path, "no Project Gutenberg header/footer found", _MARKER_HINT)
    notes = []
    if start == 0:
        notes.append("no Gutenberg start marker; the text is taken from the beginning of the file")
    if end == len(text):
        notes.append("no Gutenberg end marker; the text is taken to the end of the file")
    header = text[:header_end] if header_end else text[: min(end, 5000)]
    return text[start:end], header, notes


def _field(pattern: re.Pattern[str], header: str) -> str:
    match = pattern.search(header)
    return " ".join(match.group("value").split()) if match else ""


def _metadata(header: str, body: str, path: Path) -> tuple[str, str, str, str]:
    """Id, title, author and language from the header; the file name and first lines as fallbacks."""
    title = _field(_TITLE, header)
    author = _field(_AUTHOR, header)
    old = _OLD_TITLE_LINE.search(header)
    if old:
        title = title or old.group("title").strip()
        author = author or old.group("author").strip(" *")
    if not title:
        first_lines = [line.strip() for line in body.splitlines() if line.strip()]
        title = first_lines[0] if first_lines else strip_compression_suffix(path.name)
    number = _BOOK_NUMBER.search(header)
    file_number = _FILE_NUMBER.match(strip_compression_suffix(path.name))
    if number:
        book_id = number.group("id")
    elif file_number:
        book_id = file_number.group("id")
    else:
        book_id = Path(strip_compression_suffix(path.name)).stem
    language = normalise_language(_field(_LANGUAGE, header) or "English")
    return book_id, title, author or "Unknown", language


def _describe_front_matter(front: str) -> str:
    kinds = [name for name, pattern in _FRONT_MATTER_KINDS if pattern.search(front)]
    what = ", ".join(kinds) if kinds else "title page"
    return f"dropped {len(front.strip()):,} characters of front matter ({what})"


def _trim_back_matter(text: str) -> tuple[str, str | None]:
    """Cut "THE END", footnotes, appendices … after the story in the last chapter."""
    # Only the last fifth of a chapter is searched: "NOTES" in the middle is a heading of the story.
    floor = len(text) * 4 // 5
    match = _BACK_MATTER.search(text, floor)
    if match is None:
        return text, None
    kept = text[: match.start()].rstrip()
    cut = text[match.start() :].strip()
    if not cut or len(cut.split()) <= 3:
        return kept, "dropped the closing line " + repr(" ".join(cut.split()))
    first = " ".join(cut.splitlines()[0].split())
    return kept, f"dropped {len(cut):,} characters of back matter after the last chapter (from {first!r})"


def _unit_start(body: str, parts: tuple[str, ...], heading_start: int) -> int:
    """Where the first chapter's unit starts: at its first part heading ("BOOK I") if it has one."""
    if not parts:
        return heading_start
    pattern = r"\s+".join(re.escape(word) for word in parts[0].split())
    starts = [m.start() for m in re.finditer(pattern, body[:heading_start])]
    return starts[-1] if starts else heading_start


def read_gutenberg(path: str | Path, *, encoding: str | None = None) -> Book:
    """Read one Project Gutenberg plain-text book (.txt, .gz, .bz2, .zst) into a Book with chapters."""
    path = Path(path)
    text = read_text(path, encoding)
    body, header, notes = _strip_licence(text, path)
    book_id, title, author, language = _metadata(header, body, path)
    spans = detect_chapters(body, source=str(path))
    first = spans[0]
    front_end = _unit_start(body, first.parts, first.heading_start)
    if body[:front_end].strip():
        notes.append(_describe_front_matter(body[:front_end]))
    chapters = list(spans_to_chapters(body, spans))
    last_text, note = _trim_back_matter(chapters[-1].text)
    if note:
        chapters[-1] = type(chapters[-1])(chapters[-1].heading, last_text, chapters[-1].parts)
        notes.append(note)
    return Book(
        id=book_id,
        title=title,
        author=author,
        language=language,
        source=str(path),
        chapters=tuple(chapters),
        notes=tuple(notes),
    )
