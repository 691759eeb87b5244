"""MuLD metrics against each library's own published values, plus the rules this project adds.

Golden values and where they come from:
- sacrebleu: test/test_bleu.py (README corpus example 48.530827, empty hypotheses 0.0, the
  statistics of "am I am a character sequence") and test/test_sentence_bleu.py (8.493, 0.0).
- rouge-score: rouge/rouge_scorer_test.py (ROUGE-L 4/5 cases, empty prediction, and the
  ROUGE-1.5.5 values 0.51163 / 0.50000 on the first two lines of testdata/{target,prediction}.txt).
- nltk: meteor_score's docstring (0.6944, 0.0) and test/meteor.doctest (0.9654, 0.5, 0.7806, 0.0).
- PAN: clef21/clef22 style-change-detection test_evaluator.py (1.0, 0.66) and a hand-computed case.
- SQuAD v1.1 token F1: hand-computed cases.
"""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from longread.errors import BadInputError
from longread.metrics.classification import accuracy, classification_scores, macro_f1
from longread.metrics.cluster_t import jackknife_interval
from longread.metrics.meteor import corpus_meteor, meteor, meteor_from_tokens, meteor_tokens
from longread.metrics.style_change import (
    change_counts,
    is_multi_author,
    multi_author_f1,
    pooled_macro_f1,
    style_change_f1,
    style_change_f1_from_counts,
    sum_change_counts,
)
from longread.metrics.text_overlap import (
    bleu_from_stats,
    bleu_stats,
    corpus_bleu,
    corpus_rouge_l,
    corpus_token_f1,
    normalize_answer,
    pad_reference_streams,
    rouge_l,
    sentence_bleu,
    sum_bleu_stats,
    token_f1,
)
from longread.metrics.wordnet import (
    LEXNAMES_WN30,
    WORDNET_FILES,
    WORDNET_SOURCE,
    WordNetMissingError,
    default_nltk_root,
    ensure_wordnet,
    lexnames_text,
    wordnet_reader,
)
from tests.helpers import SHARED

# sacrebleu's README example: two reference streams, i.e. two references per hypothesis.
SACREBLEU_REF_STREAMS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
SACREBLEU_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
# The same references as one list per hypothesis (this module's layout).
SACREBLEU_REFS = [list(refs) for refs in zip(*SACREBLEU_REF_STREAMS, strict=True)]

# rouge-score's testdata/target.txt and prediction.txt, first two lines
# (random strings scored by ROUGE-1.5.5).
ROUGE_TARGETS = [
    "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM "
    "EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L\n",
    "KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing sbKao Q m "
    "qiing LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing tQ.saefZwJtKrTlixYpMMsJing "
    "UCAPwNHeYVjDing c T BUySKtion gMPfJpwGw p'NvxAoping eu pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN\n",
]
ROUGE_PREDICTIONS = [
    "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi\n",
    "n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed HqqLFXe,XPY,J "
    "XsurkMeo ,ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD\n",
]

# nltk meteor_score docstring.
HYPOTHESIS1 = "It is a guide to action which ensures that the military always obeys the commands of the party"
REFERENCE1 = "It is a guide to action that ensures that the military will forever heed Party commands"
REFERENCE2 = (
    "It is the guiding principle which guarantees the military forces always being under the command "
    "of the Party"
)
REFERENCE3 = "It is the practical guide for the army always to heed the directions of the party"

# PAN clef21/clef22 test_evaluator.py setUp.
PAN_TRUTH = {
    "1": {"changes": [0, 0, 0], "paragraph-authors": [1, 1, 1, 1]},
    "2": {"changes": [1, 0, 0], "paragraph-authors": [1, 2, 2, 2]},
}
PAN_SOLUTION = {
    "1": {"changes": [0, 0, 1], "paragraph-authors": [1, 1, 1, 1]},
    "2": {"changes": [1, 0, 0], "paragraph-authors": [1, 1, 1, 2]},
}


@pytest.fixture(scope="module")
def wordnet_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_wordnet(tmp_path_factory.mktemp("nltk_data"))


# --- BLEU -------------------------------------------------------------------------------------------


def test_corpus_bleu_reproduces_sacrebleu_readme_example() -> None:
    assert corpus_bleu(SACREBLEU_HYPS, SACREBLEU_REFS) == pytest.approx(48.530827, abs=1e-6)
    assert corpus_bleu(["", "", ""], SACREBLEU_REFS) == 0.0


def test_bleu_stats_reproduce_sacrebleu_statistics_case() -> None:
    stats = bleu_stats("am I am a character sequence", ["I am a symbol string sequence a a"])
    # [hyp len, ref len, matches 1..4, totals 1..4]: sacrebleu's Statistics([4, 2, 1, 0], [6, 5, 4, 3]).
    assert stats == [6, 8, 4, 2, 1, 0, 6, 5, 4, 3]


def test_sentence_bleu_reproduces_sacrebleu_sentence_tests() -> None:
    reference = "producţia de zahăr brut se exprimă în zahăr alb;"
    system = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
    assert sentence_bleu(system, [reference]) == pytest.approx(8.493, abs=1e-3)
    assert sentence_bleu("this is a cat", ["okay thanks"]) == 0.0


def test_summed_stats_equal_sacrebleu_corpus_score_bleu4_and_bleu1() -> None:
    summed = sum_bleu_stats(bleu_stats(h, r) for h, r in zip(SACREBLEU_HYPS, SACREBLEU_REFS, strict=True))
    import sacrebleu

    for order in (4, 1):
        direct = sacrebleu.BLEU(max_ngram_order=order).corpus_score(SACREBLEU_HYPS, SACREBLEU_REF_STREAMS)
        assert bleu_from_stats(summed, order) == direct.score
        assert corpus_bleu(SACREBLEU_HYPS, SACREBLEU_REFS, order) == direct.score
    assert bleu_from_stats(summed, 1) != bleu_from_stats(summed, 4)


def test_ragged_references_are_padded_with_none_and_scored_against_their_own() -> None:
    refs = [SACREBLEU_REFS[0], SACREBLEU_REFS[1], SACREBLEU_REFS[2][:1]]
    assert pad_reference_streams(refs) == [
        [refs[0][0], refs[1][0], refs[2][0]],
        [refs[0][1], refs[1][1], None],
    ]
    summed = sum_bleu_stats(bleu_stats(h, r) for h, r in zip(SACREBLEU_HYPS, refs, strict=True))
    assert corpus_bleu(SACREBLEU_HYPS, refs) == bleu_from_stats(summed)
    # The dropped 'The man had bitten the dog.' held most of the third prediction's matches.
    assert corpus_bleu(SACREBLEU_HYPS, refs) < corpus_bleu(SACREBLEU_HYPS, SACREBLEU_REFS)


def test_bleu_rejects_a_prediction_without_references() -> None:
    with pytest.raises(ValueError, match="no reference"):
        bleu_stats("a prediction", [])
    with pytest.raises(TypeError, match="not one string"):
        bleu_stats("a prediction", "a reference")
    with pytest.raises(ValueError, match="pair up"):
        corpus_bleu(["a", "b"], [["a"]])


# --- ROUGE-L ----------------------------------------------------------------------------------------


def test_rouge_l_reproduces_rouge_score_tests() -> None:
    # testRougeLConsecutive / NonConsecutive: F = 4/5 (scaled to 0–100 here).
    assert rouge_l("testing one", ["testing one two"]) == pytest.approx(80.0)
    assert rouge_l("testing two", ["testing one two"]) == pytest.approx(80.0)
    assert rouge_l("", ["testing one two"]) == 0.0  # testRougeEmpty
    # testRougeLAgainstRouge155 (no stemming; 5 decimals on the 0–1 scale).
    for target, prediction, expected in zip(
        ROUGE_TARGETS, ROUGE_PREDICTIONS, (0.51163, 0.50000), strict=True
    ):
        assert rouge_l(prediction, [target], use_stemmer=False) == pytest.approx(100 * expected, abs=1e-3)


def test_rouge_l_stems_by_default() -> None:
    assert rouge_l("the dogs were running", ["the dog was running"]) > rouge_l(
        "the dogs were running", ["the dog was running"], use_stemmer=False
    )


# --- token F1 ---------------------------------------------------------------------------------------


def test_squad_normalisation_and_token_f1() -> None:
    assert normalize_answer("The  Cat, sat on a MAT!") == "cat sat on mat"
    assert normalize_answer("an apple-pie") == "applepie"
    # "cat sat on mat" vs "cat sat": 2 shared, P = 2/4, R = 2/2, F1 = 2/3.
    assert token_f1("The cat sat on the mat.", ["a cat sat"]) == pytest.approx(200 / 3)
    # Bag of tokens: "the the cat" vs "cat cat dog" → "cat" vs "cat cat dog": 1 shared, P 1, R 1/3, F1 1/2.
    assert token_f1("the the cat", ["cat cat dog"]) == pytest.approx(50.0)
    assert token_f1("", ["cat"]) == 0.0
    assert token_f1("Denver Broncos", ["denver broncos."]) == 100.0


def test_every_metric_takes_the_best_reference(wordnet_root: Path) -> None:
    prediction = "Captain Ahab hunts the white whale"
    weak, strong = "A story about the sea", "Captain Ahab hunts a white whale"
    for metric in (token_f1, rouge_l):
        both = metric(prediction, [weak, strong])
        assert both == metric(prediction, [strong]) > metric(prediction, [weak])
    # BLEU is not a max over references: an n-gram may match in any of them ("the" is only in `weak`).
    assert (
        sentence_bleu(prediction, [weak, strong])
        > sentence_bleu(prediction, [strong])
        > sentence_bleu(prediction, [weak])
    )
    assert meteor(prediction, [weak, strong], wordnet_root) == meteor(prediction, [strong], wordnet_root)
    assert meteor(prediction, [strong], wordnet_root) > meteor(prediction, [weak], wordnet_root)
    assert corpus_token_f1([prediction, "x"], [[weak, strong], ["x"]]) == pytest.approx(
        (token_f1(prediction, [strong]) + 100) / 2
    )


# --- METEOR and WordNet -----------------------------------------------------------------------------


def test_meteor_reproduces_nltk_doctests(wordnet_root: Path) -> None:
    hypothesis = meteor_tokens(HYPOTHESIS1)
    references = [meteor_tokens(r) for r in (REFERENCE1, REFERENCE2, REFERENCE3)]
    assert round(meteor_from_tokens(hypothesis, references, wordnet_root) / 100, 4) == 0.6944
    assert round(meteor_from_tokens(hypothesis, references[:1], wordnet_root) / 100, 4) == 0.6944
    cases = [
        ("John loves Mary", "The candidate has no alignment to any of the references", 0.0),
        ("The cat was sat on the mat", "The cat sat on the mat", 0.9654),
        ("on the mat sat the cat", "The cat sat on the mat", 0.5),
        ("creates or updates a virtual machine scale set", "create or update a vm set", 0.7806),
    ]
    for prediction, reference, expected in cases:
        assert round(meteor(prediction, [reference], wordnet_root) / 100, 4) == expected
    assert (
        round(meteor("The cat sat on the mat", ["The cat sat on the mat"], wordnet_root) / 100, 4) == 0.9977
    )


def test_meteor_uses_wordnet_synonyms(wordnet_root: Path) -> None:
    reader = wordnet_reader(wordnet_root)
    assert reader.synset("dog.n.01").lexname() == "noun.animal"  # lexnames read in order
    # "big" and "great" match only through WordNet's synonym stage. (nltk runs that stage on the
    # Porter stems left over from the stem stage, so a pair like big/large — "larg" — never matches.)
    assert round(meteor("a big house", ["a great house"], wordnet_root), 4) == 98.1481  # 3 matches, 1 chunk
    assert round(meteor("a tall house", ["a great house"], wordnet_root), 4) == 33.3333  # 2 matches, 2 chunks


def test_meteor_tokenizer() -> None:
    assert meteor_tokens("Don't stop, guide-book users!") == [
        "Don't",
        "stop",
        ",",
        "guide-book",
        "users",
        "!",
    ]


def test_wordnet_root_is_a_copy_with_lexnames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LONGREAD_CACHE", str(tmp_path / "cache"))
    assert default_nltk_root() == tmp_path / "cache" / "nltk_data"
    root = ensure_wordnet()
    folder = root / "corpora" / "wordnet"
    assert root == (tmp_path / "cache" / "nltk_data").resolve()
    for name in WORDNET_FILES:
        assert not (folder / name).is_symlink()
        assert (folder / name).read_bytes() == (WORDNET_SOURCE / name).read_bytes()
    lines = (folder / "lexnames").read_text(encoding="ascii").splitlines()
    assert len(lines) == 45 and lines[0] == "00\tadj.all\t3" and lines[44] == "44\tadj.ppl\t3"
    assert sorted(p.name for p in folder.parent.iterdir()) == ["wordnet"]  # no temporary folder left
    before = (folder / "data.noun").stat().st_mtime_ns
    assert ensure_wordnet() == root and (folder / "data.noun").stat().st_mtime_ns == before  # built once


def test_lexnames_match_the_wordnet_manual() -> None:
    manual = gzip.decompress(Path("/usr/share/man/man5/lexnames.5WN.gz").read_bytes()).decode()
    rows = [line.split("\t") for line in manual.splitlines() if line[:2].isdigit() and "\t" in line]
    assert [(int(row[0]), row[1].strip()) for row in rows] == [
        (i, name) for i, (name, _) in enumerate(LEXNAMES_WN30)
    ]
    assert lexnames_text().count("\n") == 45


def test_two_builders_racing_leave_one_complete_folder(tmp_path: Path) -> None:
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def build() -> None:
        try:
            barrier.wait()
            ensure_wordnet(tmp_path)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    corpora = tmp_path / "corpora"
    assert sorted(p.name for p in corpora.iterdir()) == ["wordnet"]
    assert len(list((corpora / "wordnet").iterdir())) == len(WORDNET_FILES) + 1


def test_incomplete_wordnet_folder_is_rebuilt(tmp_path: Path) -> None:
    folder = tmp_path / "corpora" / "wordnet"
    folder.mkdir(parents=True)
    (folder / "lexnames").write_text("broken\n", encoding="ascii")
    ensure_wordnet(tmp_path)
    assert (folder / "lexnames").read_text(encoding="ascii") == lexnames_text()
    assert sorted(p.name for p in folder.parent.iterdir()) == ["wordnet"]


def test_missing_wordnet_gives_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(WordNetMissingError) as caught:
        ensure_wordnet(tmp_path / "root", source=tmp_path / "no-wordnet")
    message = str(caught.value)
    assert "no-wordnet" in message and "cntlist.rev" in message and "9 more" in message
    assert "apt-get install wordnet-base wordnet-sense-index" in message and "make install" in message
    assert not (tmp_path / "root" / "corpora" / "wordnet").exists()
    with pytest.raises(WordNetMissingError):
        meteor("a", ["a"], tmp_path / "root2", wordnet_source=tmp_path / "no-wordnet")


# --- real text: VLSP theses -------------------------------------------------------------------------


def _vlsp_rows(n: int) -> tuple[list[str], list[list[str]]]:
    folder = SHARED / "corpus" / "vlsp"
    ids = sorted(p.name.removesuffix(".main.txt.gz") for p in folder.glob("*.main.txt.gz"))[:n]
    assert len(ids) == n, f"expected {n} theses in {folder}"

    def text(name: str) -> str:
        return gzip.decompress((folder / name).read_bytes()).decode("utf-8")

    # Prediction: the thesis's first 150 words (a lead baseline); references: its two abstracts.
    predictions = [" ".join(text(f"{i}.main.txt.gz").split()[:150]) for i in ids]
    references = [[text(f"{i}.abstract.txt.gz"), text(f"{i}.abstract-long.txt.gz")] for i in ids]
    return predictions, references


def test_metrics_on_real_vlsp_theses_and_their_jackknife(wordnet_root: Path) -> None:
    import sacrebleu

    predictions, references = _vlsp_rows(10)
    stats = [bleu_stats(p, r) for p, r in zip(predictions, references, strict=True)]
    streams = pad_reference_streams(references)
    expected = sacrebleu.BLEU().corpus_score(predictions, streams).score  # type: ignore[arg-type]
    assert bleu_from_stats(sum_bleu_stats(stats)) == expected == corpus_bleu(predictions, references)
    assert 0 < expected < 100
    rouge = corpus_rouge_l(predictions, references)
    score = corpus_meteor(predictions, references, wordnet_root)
    assert 0 < rouge < 100 and 0 < score < 100
    assert meteor(references[0][0], references[0][:1], wordnet_root) > 99  # an abstract against itself

    # The jackknife of corpus BLEU over 100 rows: each leave-out sums the stored statistics again.
    rows = stats * 10
    interval = jackknife_interval(lambda kept: bleu_from_stats(sum_bleu_stats(rows[int(i)] for i in kept)),
                                  len(rows), None)  # fmt: skip
    assert interval.estimate == pytest.approx(expected)
    assert interval.low < expected < interval.high


# --- classification ---------------------------------------------------------------------------------


def test_classification_f1_matches_sklearn_over_truth_and_predicted_labels() -> None:
    truth = ["Hero", "Hero", "Villain", "Villain", "Hero", "Villain", "Hero"]
    predicted = ["Hero", "Villain", "Villain", "unknown", "Hero", "Hero", "Hero"]
    scores = classification_scores(truth, predicted)
    labels = sorted(set(truth) | set(predicted))
    assert [c.label for c in scores.per_class] == labels == ["Hero", "Villain", "unknown"]
    expected = f1_score(truth, predicted, labels=labels, average=None)
    assert [c.f1 for c in scores.per_class] == pytest.approx(list(expected))
    # By hand: Hero TP 3 FP 1 FN 1 → 6/8; Villain TP 1 FP 1 FN 2 → 2/5; unknown → 0.
    assert [c.f1 for c in scores.per_class] == pytest.approx([0.75, 0.4, 0.0])
    assert (
        scores.macro_f1
        == pytest.approx(f1_score(truth, predicted, average="macro"))
        == macro_f1(truth, predicted)
    )
    assert scores.accuracy == accuracy(truth, predicted) == pytest.approx(accuracy_score(truth, predicted))
    assert [c.support for c in scores.per_class] == [4, 3, 0]
    with pytest.raises(ValueError, match="pair up"):
        macro_f1(["Hero"], [])


# --- PAN style change -------------------------------------------------------------------------------


def test_style_change_f1_reproduces_pan_evaluator_tests() -> None:
    ids = sorted(PAN_TRUTH)
    truth = [PAN_TRUTH[i]["changes"] for i in ids]
    solution = [PAN_SOLUTION[i]["changes"] for i in ids]
    assert style_change_f1(truth, truth, ids) == 1.0  # test_multiple_predictions_2
    authors_truth = [PAN_TRUTH[i]["paragraph-authors"] for i in ids]
    authors_solution = [PAN_SOLUTION[i]["paragraph-authors"] for i in ids]
    assert pooled_macro_f1(authors_truth, authors_solution, [1, 2]) == pytest.approx(0.66, abs=0.01)
    assert multi_author_f1([0, 1], [0, 1]) == 1.0  # clef21 test_single_prediction ('multi-author' fields)
    # Derived from the solution's changes instead, document 1 becomes multi-author: F1 (0 + 2/3) / 2.
    derived = [is_multi_author(changes) for changes in solution]
    assert derived == [1, 1] and multi_author_f1([0, 1], derived) == pytest.approx(1 / 3)
    # Pooled [0,0,0,1,0,0] vs [0,0,1,1,0,0]: change TP 1 FP 1 FN 0 → 2/3; no change TP 4 FP 0 FN 1 → 8/9.
    assert style_change_f1(truth, solution, ids) == pytest.approx((2 / 3 + 8 / 9) / 2)
    flat_truth = [v for doc in truth for v in doc]
    flat_solution = [v for doc in solution for v in doc]
    official = f1_score(flat_truth, flat_solution, average="macro", labels=[0, 1], zero_division=0)
    assert style_change_f1(truth, solution, ids) == pytest.approx(official)
    counts = sum_change_counts(change_counts(t, s, i) for t, s, i in zip(truth, solution, ids, strict=True))
    assert counts == [1, 1, 0, 4]
    assert style_change_f1_from_counts(counts) == pytest.approx(official)


def test_style_change_f1_equals_pan_rule_on_random_documents() -> None:
    rng = np.random.default_rng(7)
    truth = [list(rng.integers(0, 2, size=int(rng.integers(1, 12)))) for _ in range(60)]
    predicted = [list(rng.integers(0, 2, size=len(doc))) for doc in truth]
    truth = [[int(v) for v in doc] for doc in truth]
    predicted = [[int(v) for v in doc] for doc in predicted]
    flat_t = [v for doc in truth for v in doc]
    flat_p = [v for doc in predicted for v in doc]
    official = f1_score(flat_t, flat_p, average="macro", labels=[0, 1], zero_division=0)
    assert style_change_f1(truth, predicted) == pytest.approx(official, abs=1e-12)
    counts = sum_change_counts(
        change_counts(t, p, str(i)) for i, (t, p) in enumerate(zip(truth, predicted, strict=True))
    )
    assert style_change_f1_from_counts(counts) == pytest.approx(official, abs=1e-12)
    gold = [int(any(d)) for d in truth]
    guess = [int(any(d)) for d in predicted]
    assert multi_author_f1(gold, guess) == pytest.approx(f1_score(gold, guess, average="macro"))


def test_style_change_f1_with_no_change_anywhere_scores_the_absent_label_zero() -> None:
    truth = [[0, 0], [0]]
    official = f1_score([0, 0, 0], [0, 0, 0], average="macro", labels=[0, 1], zero_division=0)
    assert style_change_f1(truth, truth) == official == 0.5
    assert style_change_f1_from_counts([0, 0, 0, 3]) == 0.5


def test_style_change_length_mismatch_names_the_document() -> None:
    with pytest.raises(BadInputError, match=r"problem-7.*3 labels.*prediction has 2"):
        style_change_f1([[0, 1], [0, 0, 1]], [[0, 1], [0, 1]], ["problem-3", "problem-7"])
    with pytest.raises(BadInputError, match="problem-9"):
        change_counts([0, 1], [0], "problem-9")
    with pytest.raises(BadInputError, match="other than 0 and 1"):
        style_change_f1([[0, 2]], [[0, 1]], ["problem-1"])
