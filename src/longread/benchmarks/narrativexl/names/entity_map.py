"""The saved entity map and the settings that build it: what a book's renaming is, not how it is found.

An :class:`EntityMap` lists a book's name parts (most mentioned first) with their kind, gender and
seeded replacement, and the PERSON words left out with their reasons; it is saved as sorted, stable
JSON (byte-identical for the same book and seed). :class:`EntitySettings` holds every threshold the
finding and drawing steps use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from longread.errors import BadInputError
from longread.files import atomic_write_text, read_text

ENTITY_MAP_VERSION = 1

Gender = Literal["male", "female", "unknown"]
NameKind = Literal["first", "last"]


class EntitySettings(BaseModel):
    """How characters are found and renamed (the defaults are measured on Pride and Prejudice)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_person_votes: int = Field(default=2, ge=1, description="PERSON mentions a name part needs")
    common_word_ratio: float = Field(
        default=0.5, description="lower-case uses / name uses above this: a word"
    )
    place_preposition_ratio: float = Field(
        default=0.15, description="share of uses after in/near/into/at/from/through: a place"
    )
    first_name_pool: int = Field(
        default=1000, ge=10, description="replacements come from this many top first names"
    )
    surname_pool: int = Field(
        default=5000, ge=10, description="replacements come from this many top surnames"
    )
    min_bare_mentions: int = Field(
        default=5,
        ge=0,
        description="a word never titled and no census first name needs this many PERSON mentions",
    )
    batch_chars: int = Field(default=2000, ge=100, description="characters of paragraphs spaCy reads at once")


class EntityEntry(BaseModel):
    """One name part and its replacement."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    original: str
    replacement: str
    kind: NameKind
    gender: Gender
    mentions: int = Field(description="whole-word uses in the text the map was built from")
    plural_of: str | None = Field(default=None, description="for a family plural ('Bingleys'): its stem")
    after_title_only: bool = Field(
        default=False,
        description="a common word that names someone after a title ('Mrs. Long'): replaced only there",
    )


class DroppedName(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    reason: str


class EntityMap(BaseModel):
    """A book's character names and their seeded replacements (saved as sorted, stable JSON)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = ENTITY_MAP_VERSION
    book_id: str
    seed: int
    entries: tuple[EntityEntry, ...] = Field(description="most mentioned first, then by name")
    dropped: tuple[DroppedName, ...] = Field(
        default=(), description="PERSON words that are not renamed, and why"
    )

    def replacements(self) -> dict[str, str]:
        return {entry.original: entry.replacement for entry in self.entries}

    def after_title_only(self) -> frozenset[str]:
        """The originals replaced only right after a title (common words: "Mrs. Long", not "Long ago")."""
        return frozenset(entry.original for entry in self.entries if entry.after_title_only)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=1, ensure_ascii=False) + "\n"

    def save(self, path: str | Path) -> None:
        atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> EntityMap:
        try:
            return cls.model_validate_json(read_text(path))
        except ValueError as exc:
            raise BadInputError(
                path, f"not an entity map: {exc}", "rebuild it with the build command"
            ) from exc
