"""MuLD style-change baseline: same-author scores of adjacent paragraphs, on real Gutenberg novels.

Documents come from ``tests/style_pairs_fixture.py`` (real paragraphs of
different authors interleaved in runs); the held-out test documents use authors
the classifier never saw. Margins asserted below were measured with these seeds
(bench/muld_style_pairs.py prints the same numbers).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score, roc_auc_score

from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.benchmarks.muld.style_training import read_style_documents, train_style_pairs
from longread.benchmarks.muld.tasks.style import paragraphs_of
from longread.errors import BadInputError
from longread.metrics.style_change import style_change_f1
from longread.models.errors import ModelSpecError
from longread.models.style_pairs import PAIR_SCORES, PairScoreRequest, PairScoreResult
from longread.models.style_pairs.backend import StylePairBackend, load_style_backend, style_backend
from longread.models.style_pairs.classifier import load_model
from longread.models.style_pairs.documents import split_paragraphs
from longread.models.style_pairs.features_minilm import MAX_PIECE_TOKENS, MiniLMFeatures
from longread.models.style_pairs.features_stylometric import feature_names, paragraph_features
from longread.models.style_pairs.featurizer import Featurizer
from longread.models.style_pairs.scoring import best_threshold, pan_change_f1
from longread.models.style_pairs.train import fit_model
from tests.helpers import gutenberg_book, needs_shared
from tests.models.style_pairs.authors import book_paragraphs, split_authors, style_records

pytestmark = needs_shared


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("style")
    train_authors, test_authors = split_authors(0)
    assert not set(train_authors) & set(test_authors)
    train, test = folder / "train.jsonl", folder / "test.jsonl"
    write_records(train, style_records(train_authors, 60, seed=0))
    write_records(test, style_records(test_authors, 40, seed=1))
    return {"train": train, "test": test, "folder": folder}


@pytest.fixture(scope="module")
def trained(files: dict[str, Path]) -> Path:
    out = files["folder"] / "stylometric.json"
    train_style_pairs(files["train"], "stylometric", out, seed=0)
    return out


def _evaluate(backend: StylePairBackend, test: Path) -> tuple[float, float, float]:
    documents, problems = read_style_documents(test)
    assert not problems
    results = backend.pair_scores([PairScoreRequest(doc.paragraphs) for doc in documents])
    scores = np.concatenate([np.asarray(r.same_author) for r in results])
    changes = np.concatenate([np.asarray(doc.changes) for doc in documents])
    auc = float(roc_auc_score(1 - changes, scores))
    f1 = pan_change_f1(changes.tolist(), (scores < backend.threshold).astype(int).tolist())
    return auc, f1, pan_change_f1(changes.tolist(), [0] * len(changes))


def test_trained_stylometric_separates_held_out_authors(files: dict[str, Path], trained: Path) -> None:
    auc, f1, no_change_f1 = _evaluate(load_style_backend(str(trained)), files["test"])
    # Measured: AUC 0.730, F1 0.620 at the learned threshold, 0.448 for "never a change".
    assert auc > 0.70
    assert f1 > no_change_f1 + 0.12


def test_untrained_stylometric_cosine_beats_chance(files: dict[str, Path]) -> None:
    auc, f1, no_change_f1 = _evaluate(load_style_backend("stylometric"), files["test"])
    # Measured: AUC 0.761, F1 0.529 at the default threshold 0.5.
    assert auc > 0.72
    assert f1 > no_change_f1 + 0.05


def test_model_file_round_trips_to_identical_scores(files: dict[str, Path], trained: Path) -> None:
    documents, _ = read_style_documents(files["train"])
    featurizer = Featurizer("stylometric")
    model, _, _, _ = fit_model(documents[:20], featurizer, seed=3)
    saved = files["folder"] / "roundtrip.json"
    sha = model.save(saved)
    loaded, loaded_sha = load_model(saved)
    assert loaded_sha == sha == hashlib.sha256(saved.read_bytes()).hexdigest()
    assert loaded.dumps() == saved.read_text(encoding="utf-8")
    test_docs, _ = read_style_documents(files["test"])
    for doc in test_docs[:10]:
        vectors = featurizer.vectors(doc.paragraphs)
        assert np.array_equal(model.same_author(vectors), loaded.same_author(vectors))


def test_training_is_deterministic_and_the_seed_matters(files: dict[str, Path], trained: Path) -> None:
    again = files["folder"] / "again.json"
    other = files["folder"] / "other-seed.json"
    train_style_pairs(files["train"], "stylometric", again, seed=0)
    train_style_pairs(files["train"], "stylometric", other, seed=1)
    assert again.read_bytes() == trained.read_bytes()
    assert json.loads(other.read_text())["coef"] != json.loads(trained.read_text())["coef"]


def test_describe_names_threshold_and_model_file(trained: Path) -> None:
    backend = style_backend(f"style:{trained}", str(trained), object())
    info = backend.describe()
    raw = json.loads(trained.read_text())
    assert backend.capabilities == frozenset({PAIR_SCORES})
    assert info["model_sha256"] == hashlib.sha256(trained.read_bytes()).hexdigest()
    assert float(info["threshold"]) == raw["threshold"] == backend.threshold
    assert info["threshold_source"].startswith("learned: max PAN change F1")
    assert 0.0 < backend.threshold < 1.0
    paragraphs = split_paragraphs(style_records(split_authors(0)[1], 1, seed=4)[0].input)
    assert backend.pair_scores([PairScoreRequest(paragraphs)])[0].threshold == backend.threshold
    untrained = style_backend("style:stylometric", "stylometric", object()).describe()
    assert untrained["threshold_source"] == "default" and untrained["threshold"] == "0.5"
    with pytest.raises(ModelSpecError, match="style:stylometric"):
        style_backend("style:", "", object())


def test_fewer_than_two_paragraphs_have_no_pairs() -> None:
    backend = load_style_backend("stylometric")
    paragraph = book_paragraphs(gutenberg_book(1342))[0]
    results = backend.pair_scores([PairScoreRequest(()), PairScoreRequest((paragraph,))])
    assert results[0] == PairScoreResult(same_author=(), n_paragraphs=0, n_words=0)
    assert results[1].same_author == () and results[1].n_paragraphs == 1
    # Two paragraphs: nothing to standardise against, so the untrained score is undecided.
    two = backend.pair_scores([PairScoreRequest((paragraph, paragraph))])[0]
    assert two.same_author == (0.5,)
    with pytest.raises(ValueError, match="3 paragraphs have 2 adjacent pairs"):
        PairScoreResult(same_author=(0.1,), n_paragraphs=3)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\x89PNG\r\n\x1a\n\x00garbage", "not UTF-8 JSON"),
        (b'{"format": "longread-style-pairs", "version": 1, ', "not UTF-8 JSON"),
        (b'{"format": "something-else"}', "'format' is 'something-else'"),
    ],
)
def test_corrupt_model_file_is_named(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(BadInputError, match=problem) as caught:
        load_style_backend(str(path))
    assert caught.value.path == str(path)
    assert "longread train style-pairs" in str(caught.value)


def test_model_with_wrong_vector_length_is_named(tmp_path: Path, trained: Path) -> None:
    raw = json.loads(trained.read_text())
    raw["coef"] = raw["coef"][:-3]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(BadInputError, match="'coef' has") as caught:
        load_style_backend(str(path))
    assert caught.value.path == str(path)
    with pytest.raises(BadInputError, match="no such style-pair model file"):
        load_style_backend(str(tmp_path / "missing.json"))


def test_training_file_with_bad_records_names_them(tmp_path: Path, files: dict[str, Path]) -> None:
    records = style_records(split_authors(0)[0], 6, seed=5)
    truth = json.loads(records[2].output[0])
    truth["changes"] = truth["changes"][:-1]
    records[2] = MuldRecord(records[2].input, (json.dumps(truth),), records[2].metadata)
    truth = json.loads(records[4].output[0])
    truth["changes"][0] = 1 - truth["changes"][0]
    records[4] = MuldRecord(records[4].input, (json.dumps(truth),), records[4].metadata)
    data = tmp_path / "mixed.jsonl"
    write_records(data, records)
    summary = train_style_pairs(data, "stylometric", tmp_path / "m.json", seed=0)
    assert summary.documents == 4
    assert [(p.line, p.path) for p in summary.problems] == [(3, str(data)), (5, str(data))]
    assert "18 changes but the problem has 20 paragraphs (19 boundaries)" in summary.problems[0].problem
    assert "contradicts paragraph-authors" in summary.problems[1].problem
    with pytest.raises(ModelSpecError, match="unknown features 'bert'"):
        train_style_pairs(data, "bert", tmp_path / "b.json")
    single = tmp_path / "single.jsonl"
    write_records(single, [MuldRecord("one paragraph only", ('{"authors": 1, "changes": []}',))])
    with pytest.raises(BadInputError, match="no usable style-change document") as caught:
        train_style_pairs(single, "stylometric", tmp_path / "n.json")
    assert caught.value.path == str(single)


def test_pan_change_f1_and_threshold_match_scikit_learn() -> None:
    rng = random.Random(7)
    for _ in range(20):
        n = rng.randint(1, 40)
        truth = [rng.randint(0, 1) for _ in range(n)]
        scores = [round(rng.random(), 1) for _ in range(n)]  # ties on purpose
        predicted = [rng.randint(0, 1) for _ in range(n)]
        expected = f1_score(truth, predicted, average="macro", labels=[0, 1], zero_division=0)
        assert pan_change_f1(truth, predicted) == pytest.approx(expected)
        assert pan_change_f1(truth, predicted) == pytest.approx(style_change_f1([truth], [predicted]))
        threshold, best = best_threshold(scores, truth)
        chosen = [int(s < threshold) for s in scores]
        assert pan_change_f1(truth, chosen) == pytest.approx(best)
        for cut in [*sorted(set(scores)), 1.1]:
            assert pan_change_f1(truth, [int(s < cut) for s in scores]) <= best + 1e-12


def test_stylometric_features_follow_their_layout() -> None:
    vector = paragraph_features("The cat and the dog; the end!")
    names = feature_names()
    assert len(vector) == len(names)
    assert vector[names.index("fw:the")] == pytest.approx(3 / 7)
    assert vector[names.index("fw:and")] == pytest.approx(1 / 7)
    assert vector[names.index("punct:semicolon")] == pytest.approx(100 / 29)
    trigrams = [i for i, name in enumerate(names) if name.startswith("c3:")]
    assert vector[trigrams].sum() == pytest.approx(1.0)


def test_minilm_features_and_backend_on_real_paragraphs(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    austen = book_paragraphs(gutenberg_book(1342))
    melville = book_paragraphs(gutenberg_book(2701))
    long_one = " ".join(melville[10:16])
    features = MiniLMFeatures()
    pieces = features.pieces([long_one, ""])
    assert len(pieces[0]) >= 2 and all(len(p) <= MAX_PIECE_TOKENS for p in pieces[0])
    assert sum(len(p) for p in pieces[0]) == len(features._encoder.tokenize([long_one])[0])
    vectors = features.encode([austen[0], long_one, ""])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # Untrained MiniLM backend on a few paragraphs: three of Austen, then three of Melville.
    backend = load_style_backend("minilm")
    document = (*austen[20:23], *melville[40:43])
    result = backend.pair_scores([PairScoreRequest(document)])[0]
    assert result.n_paragraphs == 6 and len(result.same_author) == 5
    assert all(0.0 <= p <= 1.0 for p in result.same_author)
    assert backend.describe()["feature_fingerprint"].startswith("minilm|")
    # A small trained MiniLM model: JSON, the right width, scores in [0, 1].
    data = tmp_path / "tiny.jsonl"
    train_authors, _ = split_authors(0)
    write_records(data, style_records(train_authors, 4, seed=9, paragraphs=8))
    summary = train_style_pairs(data, "minilm", tmp_path / "minilm.json", seed=0)
    raw = json.loads(summary.out.read_text())
    assert raw["features"] == "minilm" and len(raw["coef"]) == 385
    trained = load_style_backend(str(summary.out))
    scored = trained.pair_scores([PairScoreRequest(document)])[0]
    assert len(scored.same_author) == 5 and all(0.0 <= p <= 1.0 for p in scored.same_author)


def test_paragraphs_are_split_as_the_task_splits_them() -> None:
    text = "First paragraph.\n\n  \nSecond one.\nThird.\n"
    expected = ("First paragraph.", "Second one.", "Third.")
    assert split_paragraphs(text) == tuple(paragraphs_of(text)) == expected
