"""Heading vocabulary: how chapter and part labels are written, and the numbers inside them.

One place for it: chapter detection reads headings with it, and the ChapterBreak
builder rewrites the numbers in headings with it (so that a heading never leaks
which chapter a candidate continuation comes from).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

NUMBER_FORMS = (
    "arabic",
    "roman-upper",
    "roman-lower",
    "word-upper",
    "word-title",
    "word-lower",
    "ordinal-upper",
    "ordinal-title",
    "ordinal-lower",
)

_UNITS = (
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"),
)
_TENS = ("_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_IRREGULAR_ORDINALS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
_CARDINAL_VALUES = {word: value for value, word in enumerate(_UNITS)} | {
    word: 10 * index for index, word in enumerate(_TENS) if index >= 2
}
_SCALES = {"hundred": 100, "thousand": 1000}
_MAX_WORD_NUMBER = 999_999
_ROMAN_VALUES = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)
_ROMAN_DIGITS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def _ordinal_word(word: str) -> str:
    if word in _IRREGULAR_ORDINALS:
        return _IRREGULAR_ORDINALS[word]
    if word.endswith("y"):
        return word[:-1] + "ieth"
    return word + "th"


_ORDINAL_VALUES = {_ordinal_word(w): v for w, v in (_CARDINAL_VALUES | _SCALES).items() if v > 0}
_ALL_NUMBER_WORDS = sorted(
    {*_CARDINAL_VALUES, *_SCALES, *_ORDINAL_VALUES} - {"zero"}, key=lambda w: (-len(w), w)
)
_WORD = "(?:" + "|".join(_ALL_NUMBER_WORDS) + ")"
# A number written in words: "one", "forty-seven", "one hundred and two", "twenty-first".
WORD_NUMBER = rf"{_WORD}(?:(?:[- ]|\s+and\s+){_WORD})*"
ROMAN_NUMBER = r"[IVXLCDM]+|[ivxlcdm]+"
ARABIC_NUMBER = r"\d{1,4}"
NUMBER_TOKEN = rf"(?:{ARABIC_NUMBER}|{WORD_NUMBER}|{ROMAN_NUMBER})"

# ---------------------------------------------------------------------------
# numbers


def to_roman(value: int) -> str:
    if not 1 <= value <= 4999:
        raise ValueError(f"roman numerals cover 1..4999, not {value}")
    out = []
    for amount, letters in _ROMAN_VALUES:
        count, value = divmod(value, amount)
        out.append(letters * count)
    return "".join(out)


def from_roman(token: str) -> int | None:
    """The value of a well-formed roman numeral (either case, not mixed), else None."""
    if not token or not (token.isupper() or token.islower()):
        return None
    upper = token.upper()
    if any(ch not in _ROMAN_DIGITS for ch in upper):
        return None
    total = 0
    for index, ch in enumerate(upper):
        value = _ROMAN_DIGITS[ch]
        following = _ROMAN_DIGITS[upper[index + 1]] if index + 1 < len(upper) else 0
        total += -value if value < following else value
    # Only the canonical spelling counts: "IIII" or "VX" is not a number but a word or a typo.
    if total < 1 or total > 4999 or to_roman(total) != upper:
        return None
    return total


def _cardinal_words(value: int) -> str:
    if value < 20:
        return _UNITS[value]
    if value < 100:
        tens, unit = divmod(value, 10)
        return _TENS[tens] + ("-" + _UNITS[unit] if unit else "")
    if value < 1000:
        hundreds, rest = divmod(value, 100)
        head = _UNITS[hundreds] + " hundred"
        return head + (" and " + _cardinal_words(rest) if rest else "")
    thousands, rest = divmod(value, 1000)
    head = _cardinal_words(thousands) + " thousand"
    if not rest:
        return head
    return head + (" and " if rest < 100 else " ") + _cardinal_words(rest)


def _ordinal_words(value: int) -> str:
    words = _cardinal_words(value)
    cut = max(words.rfind(" "), words.rfind("-")) + 1
    return words[:cut] + _ordinal_word(words[cut:])


def _apply_case(text: str, case: str) -> str:
    if case == "upper":
        return text.upper()
    if case == "title":
        return text[:1].upper() + text[1:]
    return text


def format_number(value: int, form: str) -> str:
    """Write ``value`` in ``form`` (NUMBER_FORMS): 3,"roman-upper" → "III"; 1,"ordinal-title" → "First"."""
    if form == "arabic":
        return str(value)
    kind, _, case = form.partition("-")
    if kind == "roman" and case in ("upper", "lower"):
        roman = to_roman(value)
        return roman if case == "upper" else roman.lower()
    if kind in ("word", "ordinal") and case in ("upper", "title", "lower"):
        if not 1 <= value <= _MAX_WORD_NUMBER:
            raise ValueError(f"numbers in words cover 1..{_MAX_WORD_NUMBER}, not {value}")
        words = _cardinal_words(value) if kind == "word" else _ordinal_words(value)
        return _apply_case(words, case)
    raise ValueError(f"unknown number form {form!r}; expected one of {', '.join(NUMBER_FORMS)}")


def _case_of(token: str) -> Literal["upper", "lower", "title"]:
    if token.isupper():
        return "upper"
    if token.islower():
        return "lower"
    return "title"


def _word_value(token: str) -> tuple[int, bool] | None:
    """Value of a number in words and whether it is an ordinal; None unless spelled canonically."""
    words = [w for w in re.split(r"[-\s]+", token.lower()) if w and w != "and"]
    if not words:
        return None
    ordinal = words[-1] in _ORDINAL_VALUES and words[-1] not in _CARDINAL_VALUES
    total = 0
    current = 0
    for index, word in enumerate(words):
        is_last = index == len(words) - 1
        if is_last and ordinal:
            value = _ORDINAL_VALUES[word]
        elif word in _CARDINAL_VALUES or word in _SCALES:
            value = _CARDINAL_VALUES.get(word) or _SCALES[word]
        else:
            return None
        if value == 1000:
            total, current = (total + max(current, 1)) * 1000, 0
        elif value == 100:
            current = max(current, 1) * 100
        else:
            current += value
    total += current
    if not 1 <= total <= _MAX_WORD_NUMBER:
        return None
    canonical = _ordinal_words(total) if ordinal else _cardinal_words(total)
    # Compare spellings without separators so "forty seven" and "Forty-Seven" both count.
    if re.sub(r"[-\s]|\band\b", "", canonical) != re.sub(r"[-\s]|\band\b", "", token.lower()):
        return None
    return total, ordinal


def parse_number(token: str) -> tuple[int, str] | None:
    """The value and form of one number token ("XII" → (12, "roman-upper")), or None if it is not one."""
    token = token.strip()
    if not token:
        return None
    if token.isdigit():
        return (int(token), "arabic") if int(token) > 0 else None
    roman = from_roman(token)
    if roman is not None:
        return roman, "roman-" + ("upper" if token.isupper() else "lower")
    words = _word_value(token)
    if words is not None:
        value, ordinal = words
        return value, ("ordinal-" if ordinal else "word-") + _case_of(token)
    return None


# ---------------------------------------------------------------------------
# heading labels

# "title": an un-numbered heading (a story's or a narrative's name); chapter detection makes these.
HeadingKind = Literal["chapter", "part", "special", "title"]

CHAPTER_KEYWORDS = ("chapter", "chap", "stave", "letter", "canto", "fytte")
PART_KEYWORDS = ("book", "part", "volume", "vol", "phase", "epoch", "period", "narrative")
# Units that stand outside the numbering but are chapters of the story.
SPECIAL_HEADINGS = ("prologue", "prelude", "epilogue", "conclusion", "finale", "afterword", "postscript")

_KEYWORDS = "|".join(CHAPTER_KEYWORDS + PART_KEYWORDS)
# What may follow a label before the chapter's own title: punctuation, dashes or just a space.
_AFTER_LABEL = r"(?=$|[\s.:;,)\]—–-])"
_KEYWORD_LABEL = re.compile(
    rf"^(?:(?P<pre>\d{{1,4}})\.\s+)?(?P<kw>{_KEYWORDS})\.?\s+(?:(?P<the>the)\s+)?"
    rf"(?P<num>{NUMBER_TOKEN}|last){_AFTER_LABEL}",
    re.IGNORECASE,
)
# "First Epoch", "SECOND PERIOD", "Part First": ordinal before a part keyword.
_ORDINAL_PART_LABEL = re.compile(
    rf"^(?P<num>{WORD_NUMBER})\s+(?P<kw>{'|'.join(PART_KEYWORDS)}){_AFTER_LABEL}", re.IGNORECASE
)
_BARE_LABEL = re.compile(rf"^(?P<num>{ARABIC_NUMBER}|[IVXLCDM]+|[ivxlcdm]+){_AFTER_LABEL}")
_BARE_WORD_LABEL = re.compile(rf"^(?P<num>{WORD_NUMBER})[.:]?$", re.IGNORECASE)
_SPECIAL_LABEL = re.compile(rf"^(?:the\s+)?(?P<kw>{'|'.join(SPECIAL_HEADINGS)}){_AFTER_LABEL}", re.IGNORECASE)
_TITLE_SEPARATORS = " \t.:;,)]—–-"
# Emphasis marks around words ("_CHAPTER I_", "*II*", "=Part One="): they open before a
# word or close after one, while a rule of stars ("* * *") has spaces on both sides.
_EMPHASIS = re.compile(r"(?<![\w_*=])[_*=]+(?=[^\s_*=])|(?<=[^\s_*=])[_*=]+(?![\w_*=])")


# A label set between brackets or dashes: "[ I ]", "— II —", "~ III ~", "-IV-".
_FRAMED = re.compile(
    r"^(?P<open>\s*(?:\[|[—–~-]+)\s*)(?P<inner>[^\s\[\]—–~-].*?)(?P<close>\s*(?:\]|[—–~-]+)\s*)$"
)


def blank_emphasis(line: str) -> str:
    """The line with emphasis marks (and a frame of brackets or dashes around the whole line)
    replaced by spaces, so that every offset stays where it was."""
    framed = _FRAMED.match(line)
    if framed and (framed.group("open").strip() == "[") == (framed.group("close").strip() == "]"):
        line = " " * framed.end("open") + framed.group("inner") + " " * len(framed.group("close"))
    if "_" not in line and "*" not in line and "=" not in line:
        return line  # no emphasis mark to blank (most lines: skips the substitution)
    return _EMPHASIS.sub(lambda match: " " * len(match.group()), line)


@dataclass(frozen=True)
class NumberSpan:
    start: int  # span of the number token inside the heading string
    end: int
    value: int
    form: str  # one of NUMBER_FORMS


@dataclass(frozen=True)
class HeadingLabel:
    """What a heading line says about itself: its level, its keyword and its number."""

    kind: HeadingKind
    keyword: str  # lower-cased keyword ("chapter", "part" …); "" for a bare number
    number: NumberSpan | None  # None for "CHAPTER THE LAST" and special units
    label_end: int  # where the label ends and the heading's own title begins
    title: str  # the rest of the line after the label, without separating punctuation


def _number_span(match: re.Match[str], group: str = "num") -> NumberSpan | None:
    parsed = parse_number(match.group(group))
    if parsed is None:
        return None
    return NumberSpan(match.start(group), match.end(group), parsed[0], parsed[1])


def _label(kind: HeadingKind, keyword: str, number: NumberSpan | None, line: str, end: int) -> HeadingLabel:
    title = line[end:].lstrip(_TITLE_SEPARATORS).strip()
    return HeadingLabel(kind, keyword, number, end, title)


def parse_label(line: str) -> HeadingLabel | None:
    """Read the label at the start of a (stripped) heading line, or None if it has none.

    Recognises "CHAPTER XII. THE STORM", "Chapter the First", "9. Chapter 12",
    "STAVE ONE", "BOOK II", "First Epoch", bare "XII." / "12 The Storm" and
    PROLOGUE / EPILOGUE style units, also inside emphasis marks ("_CHAPTER I_", "_I_").
    Offsets in the label are offsets in ``line`` as given.
    """
    unmarked = blank_emphasis(line)
    stripped = unmarked.lstrip()
    shift = len(unmarked) - len(stripped)
    label = _parse_unmarked_label(stripped.rstrip())
    if label is None or not shift:
        return label
    number = label.number
    if number is not None:
        number = NumberSpan(number.start + shift, number.end + shift, number.value, number.form)
    return HeadingLabel(label.kind, label.keyword, number, label.label_end + shift, label.title)


def _parse_unmarked_label(line: str) -> HeadingLabel | None:
    match = _KEYWORD_LABEL.match(line)
    if match:
        keyword = match.group("kw").lower().rstrip(".")
        keyword = {"chap": "chapter", "vol": "volume"}.get(keyword, keyword)
        kind: HeadingKind = "part" if keyword in PART_KEYWORDS else "chapter"
        if match.group("num").lower() == "last":
            return _label(kind, keyword, None, line, match.end())
        number = _number_span(match)
        if number is not None:
            return _label(kind, keyword, number, line, match.end())
        return None
    match = _ORDINAL_PART_LABEL.match(line)
    if match:
        number = _number_span(match)
        if number is not None and number.form.startswith("ordinal"):
            return _label("part", match.group("kw").lower(), number, line, match.end())
    for pattern in (_BARE_LABEL, _BARE_WORD_LABEL):
        match = pattern.match(line)
        if match:
            number = _number_span(match)
            if number is not None:
                return _label("chapter", "", number, line, match.end())
    match = _SPECIAL_LABEL.match(line)
    if match:
        return _label("special", match.group("kw").lower(), None, line, match.end())
    return None


def label_numbers(heading: str) -> list[NumberSpan]:
    """The numbers in a heading's label ("9. Chapter 12" → 9 and 12), never those in its own title."""
    unmarked = blank_emphasis(heading)
    stripped = unmarked.lstrip()
    shift = len(unmarked) - len(stripped)
    label = parse_label(stripped)
    if label is None or label.number is None:
        return []
    spans = [label.number]
    match = _KEYWORD_LABEL.match(stripped)
    if match and match.group("pre"):
        pre = _number_span(match, "pre")
        if pre is not None:
            spans.insert(0, pre)
    return [NumberSpan(s.start + shift, s.end + shift, s.value, s.form) for s in spans]
