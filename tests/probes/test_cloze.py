"""The name cloze as Chang et al. ran it, the ranked cloze, and passages as the book prints them.

Right answers are made here: a tiny GPT-2 trained to answer each cloze prompt with its name must be
scored right on every passage (a scorer that always says "wrong" fails); tiny GPT-2s trained on a book's
cloze passages, or on another book's, are the positive and negative controls of the ranked cloze.
"""

from __future__ import annotations

import re

import pytest

from longread.documents.reader import read_book
from longread.metrics.paired import mcnemar_exact_p
from longread.probes.memory import MemoryProbeSettings, probe_memory
from longread.probes.memory.book import BookMemory
from longread.probes.memory.passages import ClozeSet, cloze_passages, passages, sentences, spacy_entities
from longread.probes.memory.probes import (
    CLOZE_PROMPT,
    answer_kind,
    cloze,
    cloze_answer,
    rank_candidates,
)
from longread.probes.memory.run import _cloze_score
from tests.helpers import GUTENBERG, REPO_ROOT, needs_shared
from tests.probes.trained import train_tiny_gpt2

BOOKS = REPO_ROOT / "src" / "longread" / "data" / "books"
AUTHORS_PROMPT = (
    "You have seen the following passage in your training data. What is the proper name that fills in the "
    "[MASK] token in it?  This name is exactly one word long, and is a proper name (not a pronoun or any "
    'other word). You must make a guess, even if you are uncertain.   \n\n  Example:\n\n  Input: "Stay '
    'gold, [MASK], stay gold."\n  Output: <name>Ponyboy</name>\n\n  Input: "The door opened, and [MASK], '
    'dressed and hatted, entered with a cup of tea."\n  Output: <name>Gerty</name>\n\n  Input: %s\n  '
    "Output: \n\n"
)
"""``scripts/openai_predict_name_cloze.py`` of bamman-group/gpt4-books, as its ``repr`` reads."""


@pytest.fixture(scope="module")
def pride() -> ClozeSet:
    return cloze_passages(read_book(BOOKS / "pg1342.txt.gz"), 16, 0, spacy_entities())


def test_the_prompt_is_the_authors_with_both_worked_examples() -> None:
    passage = "It was [MASK] who spoke."
    theirs = AUTHORS_PROMPT % passage
    ours = CLOZE_PROMPT.format(passage=passage)
    assert theirs.startswith(ours) and theirs[len(ours) :] == " \n\n"  # only the chat turn's end differs
    assert "<name>Ponyboy</name>" in ours and "<name>Gerty</name>" in ours


def test_answers_are_read_as_the_authors_read_them() -> None:
    assert cloze_answer(" <name>Elizabeth</name>") == "Elizabeth"
    assert cloze_answer("<name>Ma") == "Ma"  # an unclosed tag
    assert cloze_answer("<name>Jean Louise</name> (or <name>Scout</name>)") == "Jean Louise (or Scout)"
    names = frozenset({"elizabeth", "darcy", "jane"})
    assert answer_kind("elizabeth", "Elizabeth", names) == "right"  # case is ignored
    assert answer_kind("Darcy", "Elizabeth", names) == "wrong"  # another name of the book
    assert answer_kind("Gerty", "Elizabeth", names) == "copied example"
    assert answer_kind("Ponyboy", "Ponyboy", names) == "right"  # a book whose name it is
    # exact match, as the authors score: a near miss that names the book's own person is a wrong answer
    assert answer_kind("Elizabeth.", "Elizabeth", names) == "wrong"
    assert answer_kind("Elizabeth Bennet", "Elizabeth", names | {"bennet"}) == "wrong"
    assert answer_kind("Lizzy", "Elizabeth", names | {"lizzy"}) == "wrong"
    assert answer_kind("Darcy's", "Elizabeth", names) == "wrong"
    assert answer_kind("The door opened", "Elizabeth", names) == "not a name"
    assert answer_kind("Mr. Collins", "Elizabeth", names) == "not a name"  # no name of this book


def test_a_model_that_knows_the_names_is_scored_right(pride: ClozeSet) -> None:
    items = pride.passages[:4]
    answers = [CLOZE_PROMPT.format(passage=item.masked) + f" <name>{item.name}</name>" for item in items]
    knows = train_tiny_gpt2(answers, "answers-the-cloze", steps=70, answers=8)  # the answers' tokens alone
    lines = cloze(knows, items, [name for name, _ in pride.names])
    assert [line["prediction"] for line in lines] == [item.name for item in items]
    assert all(line["correct"] and line["kind"] == "right" for line in lines)
    summary = BookMemory("1342", "Pride and Prejudice")
    score = _cloze_score(lines, summary)
    assert score["value"] == 1.0 and score["count"] == 4 and "verdict" not in score and not summary.notes


def test_a_cloze_mostly_answered_with_examples_or_no_name_cannot_tell() -> None:
    def line(kind: str) -> dict[str, object]:
        return {"correct": kind == "right", "kind": kind}

    summary = BookMemory("b", "B")
    score = _cloze_score(
        [line("copied example")] * 3 + [line("not a name")] * 2 + [line("wrong")] * 4, summary
    )
    assert score["cloze_copied_example"] == 3 and score["cloze_not_a_name"] == 2
    assert score["verdict"] == "cannot tell" and "rests on the other probes" in summary.notes[0]
    even = _cloze_score([line("copied example")] * 2 + [line("right")] * 2, BookMemory("b", "B"))
    assert "verdict" not in even  # half is not most


def test_ranked_cloze_offers_the_true_name_among_the_most_frequent() -> None:
    names = ["Elizabeth", "Darcy", "Jane", "Bennet", "Bingley"]
    assert rank_candidates("Jane", names, 3) == ["Darcy", "Elizabeth", "Jane"]
    assert rank_candidates("Lydia", names, 3) == ["Darcy", "Elizabeth", "Lydia"]  # in the last one's stead


def test_ranked_cloze_is_above_chance_for_a_model_that_read_the_passages_and_at_chance_otherwise(
    pride: ClozeSet,
) -> None:
    book = read_book(BOOKS / "pg1342.txt.gz")
    other = cloze_passages(read_book(BOOKS / "pg84.txt.gz"), 16, 0, spacy_entities())
    settings = MemoryProbeSettings(passages=16, probes=("cloze-rank",))
    # Each passage whole, every token in the loss, 40 steps: measured 15 of 16 right (Wilson 0.72-0.99)
    # for dropout seeds 0, 1 and 2 and with 1 or 2 threads, and 3 of 16 (0.07-0.43) for the model that read
    # Frankenstein. Random 24-token windows, 150 steps, gave 3-7 of 16 with the seed: a positive that failed
    # on some test orders.
    read = train_tiny_gpt2([item.passage.text for item in pride.passages], "read-pride", steps=40)
    unread = train_tiny_gpt2([item.passage.text for item in other.passages], "read-frankenstein", steps=40)
    scores, items_of = {}, {}
    for model in (read, unread):
        items, (summary,) = probe_memory(model, [book], settings)
        assert {item["probe"] for item in items} == {"cloze-rank"} and len(items) == len(pride.passages)
        assert all(len(item["candidates"]) == 10 and item["answer"] in item["candidates"] for item in items)
        order = [name for name, _ in pride.names]  # most frequent first
        assert all(item["most_frequent"] == min(item["candidates"], key=order.index) for item in items)
        scores[model.name] = summary.scores["cloze-rank"]
        items_of[model.name] = items
    positive, negative = scores["read-pride"], scores["read-frankenstein"]
    assert positive["chance"] == pytest.approx(0.1) and negative["chance"] == pytest.approx(0.1)
    assert positive["most_frequent"] == negative["most_frequent"]  # the names' prior: the same for both
    assert positive["ci_low"] > positive["chance"], positive  # above chance
    assert negative["ci_low"] <= negative["chance"] <= negative["ci_high"], negative  # at chance
    # against the prior on the same passages: the model that read them beats always naming the most frequent
    model_only = sum(1 for i in items_of["read-pride"] if i["correct"] and not i["most_frequent_right"])
    prior_only = sum(1 for i in items_of["read-pride"] if i["most_frequent_right"] and not i["correct"])
    assert (positive["model_only_right"], positive["most_frequent_only_right"]) == (model_only, prior_only)
    assert positive["most_frequent_p"] == mcnemar_exact_p(model_only, prior_only) < 0.05, positive
    # measured: 12 passages only it got right, 0 only the prior did (p = 0.0005); the model that read
    # Frankenstein named the most frequent name on every passage (p = 1)
    assert negative["most_frequent_p"] > 0.05, negative
    assert positive["over_most_frequent"] == pytest.approx(positive["value"] - positive["most_frequent"])
    assert positive["over_most_frequent_ci"][0] > 0, positive  # the interval excludes "no better"
    low, high = negative["over_most_frequent_ci"]
    assert low <= 0 <= high and negative["over_most_frequent"] == pytest.approx(0.0), negative


def _no_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_sentences_keep_the_text_as_printed() -> None:
    """Nothing of the printed text is lost but whitespace: closing quotes after a stop stay."""
    text = "\n\n".join(chapter.text for chapter in read_book(BOOKS / "pg1342.txt.gz").chapters)
    assert _no_space("".join(sentence for _, sentence in sentences(text))) == _no_space(text)
    assert sentences('"I go to gaol.  Good-\nbye."  For the warder came.') == [
        (0, '"I go to gaol.'),
        (16, 'Good-bye."'),
        (29, "For the warder came."),
    ]


@needs_shared
def test_passages_of_a_held_out_novel_are_as_printed() -> None:
    """*Jane Eyre* (not bundled; 65 words hyphenated across a line end): every passage is the book's text
    but whitespace, and a word broken after its hyphen is one word again."""
    book = read_book(GUTENBERG / "pg1260.txt.gz")
    text = "\n\n".join(chapter.text for chapter in book.chapters)
    printed = _no_space(text)
    chosen = passages(book, 200, 0)
    assert len(chosen) >= 150 and all(_no_space(item.text) in printed for item in chosen)
    joined = " ".join(sentence for _, sentence in sentences(text))
    broken = re.findall(r"(\w+-)\r?\n(\w+)", text)
    assert len(broken) >= 20 and all(f"{head}{tail}" in joined for head, tail in broken)
