"""The authors' NarrativeXL file layouts, both ways, byte for byte.

The authors (R-seny/NarrativeXL) store everything as "CSV with multi-symbol
separators": rows end with :data:`LINE_SEPARATOR` (the last row too), cells are
joined with :data:`COLUMN_SEPARATOR`, and a cell holding several entries joins
them with :data:`SUMMARY_SEPARATOR`. The first row is the header. Three kinds:

``BOOK.tagseparated`` (``Dataloaders.BookProcessor.save_summary_data``)
    ChunkInd, BookChunks, OverlappedBookChunks, Summaries, FakeSummaries,
    Failure, Comment. Texts and summaries are ``.strip()``-ed before writing; a
    ``Fail`` row has empty Summaries and FakeSummaries; an ``OK`` row has an
    empty Comment; empty distorted summaries are dropped.
``BOOK.questions_shortform`` (``QuestionGeneration.generate_questions``)
    WHEN_ASKED, RAW_CHUNK, OVERLAPPED_CHUNK, QUESTIONS, QUESTION_ANSWERS,
    QUESTION_TYPES, MEMLOADS; one row per scene; the last four cells hold that
    scene's questions (``RecognitionQuestion.question_string()``, 1-based
    answer, Lookahead/Change/Otherbook, retention demand). Nothing is stripped.
``BOOK.tagseparated_hierarch_sum`` (``save_hierarch_summaries``)
    TRUE_SUMMARY, FALSE_SUMMARY, LEVEL; the string ``None`` for a missing false
    summary. Nothing is stripped.

Files are decoded as the authors' loaders do (utf-8, then utf-16, cp1252,
latin-1), except that an encoding whose first row is not a known header is
passed over (utf-16 "decodes" most cp1252 files into nonsense). Line endings
are kept as they are, so reading and writing again gives the same bytes.
What a file cannot hold (a scene's chapter, its offset in a book with
different whitespace, the comment of an OK row …) is listed in
:func:`canonical_book`.

This module is the public entry point; the code lives in
:mod:`~longread.benchmarks.narrativexl.official.layout` (separators, headers,
kinds, decoding, rows, atomic writing),
:mod:`~longread.benchmarks.narrativexl.official.tagseparated`,
:mod:`~longread.benchmarks.narrativexl.official.questions_shortform` and
:mod:`~longread.benchmarks.narrativexl.official.hierarchical`.
"""

from __future__ import annotations

from longread.benchmarks.narrativexl.official.hierarchical import (
    HIERARCHY_GROUP_CHARS,
    MISSING_FALSE_SUMMARY,
    group_for_next_level,
    hierarchical_text,
    infer_scene_ranges,
    read_hierarchical,
    write_hierarchical,
)
from longread.benchmarks.narrativexl.official.layout import (
    COLUMN_SEPARATOR,
    ENCODINGS,
    HIERARCHICAL_HEADER,
    HIERARCHICAL_SUFFIX,
    LINE_SEPARATOR,
    OCHUNK_OVERLAP_SYMBOLS,
    QUESTIONS_HEADER,
    QUESTIONS_SUFFIX,
    SUMMARY_SEPARATOR,
    TAGSEPARATED_HEADER,
    TAGSEPARATED_SUFFIX,
    OfficialFormatError,
    OfficialKind,
    OfficialText,
    book_id_from_path,
    decode_official,
    detect_official_kind,
)
from longread.benchmarks.narrativexl.official.questions_shortform import (
    OFFICIAL_TYPE_NAMES,
    QUESTION_PROMPT,
    parse_question_string,
    question_id,
    question_string,
    questions_shortform_text,
    read_questions_shortform,
    reading_book_scenes,
    write_questions_shortform,
    write_reading_book,
)
from longread.benchmarks.narrativexl.official.tagseparated import (
    canonical_book,
    read_tagseparated,
    tagseparated_text,
    write_tagseparated,
)

__all__ = [
    "COLUMN_SEPARATOR",
    "ENCODINGS",
    "HIERARCHICAL_HEADER",
    "HIERARCHICAL_SUFFIX",
    "HIERARCHY_GROUP_CHARS",
    "LINE_SEPARATOR",
    "MISSING_FALSE_SUMMARY",
    "OCHUNK_OVERLAP_SYMBOLS",
    "OFFICIAL_TYPE_NAMES",
    "QUESTIONS_HEADER",
    "QUESTIONS_SUFFIX",
    "QUESTION_PROMPT",
    "SUMMARY_SEPARATOR",
    "TAGSEPARATED_HEADER",
    "TAGSEPARATED_SUFFIX",
    "OfficialFormatError",
    "OfficialKind",
    "OfficialText",
    "book_id_from_path",
    "canonical_book",
    "decode_official",
    "detect_official_kind",
    "group_for_next_level",
    "hierarchical_text",
    "infer_scene_ranges",
    "parse_question_string",
    "question_id",
    "question_string",
    "questions_shortform_text",
    "read_hierarchical",
    "read_questions_shortform",
    "read_tagseparated",
    "reading_book_scenes",
    "tagseparated_text",
    "write_hierarchical",
    "write_questions_shortform",
    "write_reading_book",
    "write_tagseparated",
]
