"""Named-entity substitution with the real spaCy model on real novels (a few chapters each, to stay fast)."""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path

from longread.benchmarks.narrativexl.names import (
    EntityEntry,
    EntityMap,
    FoundNames,
    adapt_other_book,
    apply_entity_map,
    build_entity_map,
    draw_replacements,
    find_names,
    other_book_names,
)
from longread.benchmarks.narrativexl.scenes import SceneCut, SceneSettings, cut_scenes
from longread.documents.reader import read_book
from tests.helpers import REPO_ROOT

BOOKS = REPO_ROOT / "src" / "longread" / "data" / "books"


@functools.cache
def pride_opening() -> SceneCut:
    """Pride and Prejudice, chapters 1–12 (~130,000 characters)."""
    book = read_book(BOOKS / "pg1342.txt.gz")
    return cut_scenes(replace(book, chapters=book.chapters[:12]), SceneSettings(min_scenes=1))


@functools.cache
def pride_found() -> FoundNames:
    return find_names(pride_opening().narrative)


@functools.cache
def pride_map(seed: int = 7) -> EntityMap:
    return draw_replacements(pride_found(), book_id="1342", seed=seed, text=pride_opening().narrative)


@functools.cache
def frankenstein_map() -> tuple[str, EntityMap]:
    book = read_book(BOOKS / "pg84.txt.gz")
    cut = cut_scenes(replace(book, chapters=book.chapters[:9]), SceneSettings(min_scenes=1))
    return cut.narrative, build_entity_map(cut.narrative, book_id=book.id, seed=7)


def _entry(entity_map: EntityMap, name: str) -> EntityEntry:
    return next(entry for entry in entity_map.entries if entry.original == name)


def _whole_word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![^\W\d_]){re.escape(name)}(?![^\W\d_])")


def test_known_characters_are_found_with_their_gender_and_kind() -> None:
    entity_map = pride_map()
    expected = {
        "Elizabeth": ("first", "female"),
        "Jane": ("first", "female"),
        "Lydia": ("first", "female"),
        "Darcy": ("last", "male"),
        "Bingley": ("last", None),
        "Bennet": ("last", None),
        "Hurst": ("last", None),
    }
    for name, (kind, gender) in expected.items():
        entry = _entry(entity_map, name)
        assert entry.kind == kind, name
        if gender is not None:
            assert entry.gender == gender, name
        assert entry.mentions >= 10, name
    assert {entry.original for entry in entity_map.entries[:4]} == {"Elizabeth", "Bingley", "Darcy", "Bennet"}
    dropped = {item.name: item.reason for item in entity_map.dropped}
    originals = {entry.original for entry in entity_map.entries}
    for place in ("Netherfield", "Longbourn", "Meryton"):
        assert place not in originals and place in dropped
    # Mrs. Long: "long" is a word of the book, but a title before it makes it a name there
    long = _entry(entity_map, "Long")
    assert long.after_title_only and long.kind == "last" and long.mentions >= 2
    assert "Long" not in dropped


def test_a_common_word_after_a_title_is_renamed_only_after_a_title() -> None:
    """Pride and Prejudice: "Mrs. Long" is renamed everywhere; "…founded. Long before…" stays."""
    entity_map = pride_map()
    book = read_book(BOOKS / "pg1342.txt.gz")
    whole = cut_scenes(book, SceneSettings(min_scenes=1)).narrative
    renamed = apply_entity_map(whole, entity_map)
    replacement = _entry(entity_map, "Long").replacement
    assert not re.search(r"Mrs\.\s+Long\b", renamed)
    assert len(re.findall(rf"Mrs\.\s+{replacement}\b", renamed)) == len(re.findall(r"Mrs\.\s+Long\b", whole))
    assert re.search(r"founded\.\s+Long before", renamed)
    assert len(re.findall(r"\blong\b", renamed)) == len(re.findall(r"\blong\b", whole))


def test_places_that_are_census_first_names_are_not_characters() -> None:
    """Frankenstein: Geneva, Milan (census first names) and America are places of the story."""
    _, entity_map = frankenstein_map()
    originals = {entry.original for entry in entity_map.entries}
    dropped = {item.name: item.reason for item in entity_map.dropped}
    for place in ("Geneva", "Milan", "America"):
        assert place not in originals
        assert dropped[place].startswith("a known place"), dropped.get(place)
    for person in ("Elizabeth", "Clerval", "Henry", "Victor", "Waldman"):
        assert person in originals, person


def test_every_mention_in_every_scene_is_replaced_by_the_same_name() -> None:
    cut = pride_opening()
    entity_map = pride_map()
    replacements = entity_map.replacements()
    for scene in cut.scenes:
        substituted = apply_entity_map(scene.text, entity_map)
        for original, replacement in replacements.items():
            assert _whole_word(original).search(substituted) is None, (scene.index, original)
            assert _whole_word(original.upper()).search(substituted) is None, (scene.index, original)
            if entity_map.entries[0].original == original:
                count = len(_whole_word(original).findall(scene.text))
                assert len(_whole_word(replacement).findall(substituted)) == count
    text = apply_entity_map(cut.narrative, entity_map)
    bennet, elizabeth = replacements["Bennet"], replacements["Elizabeth"]
    assert re.search(rf"Miss\s+{bennet}\b", text) and re.search(rf"Mrs\.\s+{bennet}\b", text)
    assert re.search(rf"\b{elizabeth}['’]s\b", text)
    assert len(text.split()) == len(cut.narrative.split())  # one name part for one name part


def test_a_replacement_is_never_replaced_again_and_capitals_are_kept() -> None:
    chain = EntityMap(
        book_id="x",
        seed=0,
        entries=(
            EntityEntry(original="Jane", replacement="Mary", kind="first", gender="female", mentions=2),
            EntityEntry(original="Mary", replacement="Anna", kind="first", gender="female", mentions=1),
            EntityEntry(original="Maryanne", replacement="Susan", kind="first", gender="female", mentions=1),
        ),
    )
    text = "JANE met Mary and Maryanne; Jane's sister, _Jane_, Marys."
    assert apply_entity_map(text, chain) == "MARY met Anna and Susan; Mary's sister, _Mary_, Marys."


def test_replacements_are_seeded_and_saved_byte_identically(tmp_path: Path) -> None:
    text = pride_opening().narrative[:40000]
    first = build_entity_map(text, book_id="1342", seed=3)
    again = build_entity_map(text, book_id="1342", seed=3)
    assert first.to_json() == again.to_json()
    first.save(tmp_path / "a.json")
    again.save(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert EntityMap.load(tmp_path / "a.json") == first
    assert apply_entity_map(text, first) == apply_entity_map(text, again)
    other_seed = draw_replacements(find_names(text), book_id="1342", seed=4, text=text)
    assert other_seed.to_json() != first.to_json()
    assert [e.original for e in other_seed.entries] == [e.original for e in first.entries]
    other_book = draw_replacements(find_names(text), book_id="1343", seed=3, text=text)
    assert other_book.replacements() != first.replacements()  # the book id is part of the seed


def test_replacements_keep_gender_and_are_not_words_of_the_book() -> None:
    from longread.benchmarks.narrativexl.names import census

    names = census()
    entity_map = pride_map()
    words = set(re.findall(r"[^\W\d_]+", pride_opening().narrative.lower()))
    replacements = [entry.replacement for entry in entity_map.entries]
    assert len(set(replacements)) == len(replacements)
    for entry in entity_map.entries:
        assert entry.replacement.lower() not in words
        if entry.plural_of is not None:
            continue
        if entry.kind == "last":
            assert entry.replacement in names.surnames
        elif entry.gender == "male":
            assert entry.replacement in names.male
        elif entry.gender == "female":
            assert entry.replacement in names.female


def test_another_books_characters_become_this_books_characters() -> None:
    frankenstein_text, frankenstein = frankenstein_map()
    pride = pride_map()
    mapping = other_book_names(frankenstein, pride)
    assert set(mapping) == {entry.original for entry in frankenstein.entries}
    for original, target in mapping.items():
        source, goal = _entry(frankenstein, original), _entry(pride, target)
        assert goal.kind == source.kind
        assert not goal.after_title_only  # "Long" would stay "Long" where no title stands before it
        if source.plural_of is None and any(
            e.kind == source.kind and e.gender == source.gender and not e.after_title_only
            for e in pride.entries
        ):
            assert goal.gender == source.gender
    # Frankenstein's most mentioned woman is Pride and Prejudice's most mentioned woman.
    women = [e for e in frankenstein.entries if e.kind == "first" and e.gender == "female"]
    assert mapping[women[0].original] == "Elizabeth"
    passage = frankenstein_text[20000:26000]
    adapted = adapt_other_book(passage, frankenstein, pride)
    pride_names = {entry.original for entry in pride.entries}
    for entry in frankenstein.entries:
        if entry.original not in pride_names:
            assert _whole_word(entry.original).search(adapted) is None, entry.original
    assert any(_whole_word(name).search(adapted) for name in pride_names)
    # Then this book's own substitution applies, as for its own summaries.
    final = apply_entity_map(adapted, pride)
    for name in pride_names | {entry.original for entry in frankenstein.entries}:
        assert _whole_word(name).search(final) is None, name
