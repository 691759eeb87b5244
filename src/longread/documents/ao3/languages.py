"""AO3 language names → BCP 47 codes.

Rule: AO3 names a work's language in its own script ("Deutsch", "日本語"); the
English names and ready-made codes are accepted too, and an unknown name is kept
as written rather than guessed.
"""

from __future__ import annotations

import re

UNKNOWN_LANGUAGE = "und"  # BCP 47 "undetermined"

# AO3 names languages in their own script; the English names are accepted too.
_LANGUAGE_CODES = {
    "english": "en",
    "deutsch": "de",
    "german": "de",
    "español": "es",
    "spanish": "es",
    "français": "fr",
    "french": "fr",
    "italiano": "it",
    "italian": "it",
    "nederlands": "nl",
    "dutch": "nl",
    "polski": "pl",
    "polish": "pl",
    "português brasileiro": "pt-BR",
    "português europeu": "pt-PT",
    "portuguese": "pt",
    "русский": "ru",
    "russian": "ru",
    "українська": "uk",
    "ukrainian": "uk",
    "中文-普通话 國語": "zh",
    "中文": "zh",
    "chinese": "zh",
    "中文-广东话 粵語": "yue",
    "日本語": "ja",
    "japanese": "ja",
    "한국어": "ko",
    "korean": "ko",
    "tiếng việt": "vi",
    "vietnamese": "vi",
    "bahasa indonesia": "id",
    "indonesian": "id",
    "suomi": "fi",
    "finnish": "fi",
    "svenska": "sv",
    "swedish": "sv",
    "norsk": "no",
    "norwegian": "no",
    "dansk": "da",
    "danish": "da",
    "čeština": "cs",
    "czech": "cs",
    "magyar": "hu",
    "hungarian": "hu",
    "türkçe": "tr",
    "turkish": "tr",
    "العربية": "ar",
    "arabic": "ar",
    "עברית": "he",
    "hebrew": "he",
    "ไทย": "th",
    "thai": "th",
    "català": "ca",
    "catalan": "ca",
    "ελληνικά": "el",
    "greek": "el",
    "română": "ro",
    "romanian": "ro",
    "filipino": "fil",
    "esperanto": "eo",
    "latina": "la",
    "latin": "la",
}
_LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")


def normalise_language(name: str) -> str:
    """A BCP 47 code for an AO3 language name ("English" → "en"); codes pass through.

    An unknown name is returned as written so nothing is silently mislabelled.
    """
    name = " ".join(name.split())
    if not name:
        return UNKNOWN_LANGUAGE
    code = _LANGUAGE_CODES.get(name.casefold())
    if code is not None:
        return code
    if _LANGUAGE_TAG.match(name):
        primary, *rest = name.replace("_", "-").split("-")
        return "-".join([primary.lower(), *rest])
    return name


def primary_language(code: str) -> str:
    """The primary subtag: "en-GB" → "en"."""
    return code.split("-", 1)[0].lower()
