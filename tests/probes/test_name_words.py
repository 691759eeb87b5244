"""The words of a book's person names that make a cloze answer "wrong" rather than "not a name"."""

from __future__ import annotations

from longread.probes.memory.passages import name_words, person_names

ENTS = [("Mr. Bennet", "PERSON"), ("Elizabeth Bennet's", "PERSON"), ("Lizzy", "PERSON"), ("London", "GPE")]


def test_every_word_of_a_person_name_counts_and_places_do_not() -> None:
    assert name_words(ENTS) == {"bennet", "elizabeth", "lizzy"}
    assert person_names(ENTS) == {"Bennet", "Lizzy"}  # the ranked cloze's candidates: one-word names only
