from __future__ import annotations

from pathlib import Path

import pytest
import torch

from longread.benchmarks.chapterbreak.suffixlm import validation_questions
from longread.models.registry import load_backend
from longread.models.requests import RANKER_CAPABILITIES, Ranker, RankRequest
from longread.models.suffixlm.checkpoint import export
from longread.models.suffixlm.train import BEST, CHECKPOINT, train
from tests.models.suffixlm.fixtures import tiny_config, write_books


class Killed(Exception):
    pass


def _quiet(message: str) -> None:
    pass


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("suffixlm")
    return root, write_books(root)


@pytest.fixture(scope="module")
def trained(books: tuple[Path, list[Path]]) -> Path:
    root, paths = books
    out = root / "run-a"
    train(tiny_config(root, paths, out, variant="C"), validation_questions, _quiet)
    return out


def _model_state(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=False)["model"]  # type: ignore[no-any-return]


def test_training_writes_checkpoints_history_and_split(trained: Path) -> None:
    state = torch.load(trained / CHECKPOINT, weights_only=False)
    assert state["epoch"] == 2 and len(state["history"]) == 2
    assert all(0.0 <= h["val_accuracy"] <= 1.0 and h["val_instances"] > 0 for h in state["history"])
    split = state["split"]
    assert len(split["validation"]) == 1 and len(split["train"]) == 3
    assert not set(split["train"]) & set(split["validation"])
    assert (trained / BEST).is_file()


def test_second_run_encodes_nothing_and_same_seed_same_weights(
    books: tuple[Path, list[Path]], trained: Path
) -> None:
    root, paths = books
    logs: list[str] = []
    train(tiny_config(root, paths, root / "run-b", variant="C"), validation_questions, logs.append)
    assert "segments encoded now: 0 (the rest came from the cache)" in logs
    a, b = _model_state(trained / CHECKPOINT), _model_state(root / "run-b" / CHECKPOINT)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resume_after_a_kill_matches_an_uninterrupted_run(
    books: tuple[Path, list[Path]], trained: Path
) -> None:
    root, paths = books
    out = root / "run-killed"

    def die_mid_epoch_two(message: str) -> None:
        if message.startswith("epoch 2/2 step"):
            raise Killed

    config = tiny_config(root, paths, out, variant="C")
    reference = trained  # the same configuration, never interrupted
    with pytest.raises(Killed):
        train(config, validation_questions, die_mid_epoch_two)
    assert torch.load(out / CHECKPOINT, weights_only=False)["epoch"] == 1
    logs: list[str] = []
    train(config, validation_questions, logs.append)
    assert any(m.startswith("resumed from") for m in logs)
    a, b = _model_state(reference / CHECKPOINT), _model_state(out / CHECKPOINT)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_exported_checkpoint_ranks_through_the_registry(
    books: tuple[Path, list[Path]], trained: Path
) -> None:
    root, _ = books
    small = export(trained / CHECKPOINT, root / "small.pt")
    ranker = load_backend(f"suffixlm:{small}")
    assert isinstance(ranker, Ranker) and ranker.capabilities == RANKER_CAPABILITIES
    context = "The ship sailed north. The fog was thick and grey. " * 30
    requests = [
        RankRequest(context, ("The captain wrote a letter.", "Ice closed in."), 64, 128),
        RankRequest("", ("Anything at all.",)),
    ]
    first, empty = ranker.rank(requests)
    assert len(first.scores) == 2 and all(abs(s) < 1e3 for s in first.scores)
    assert first.context_tokens_kept == 64 < first.context_tokens_original == ranker.count_tokens(context)
    assert first.candidate_tokens == first.candidate_tokens_original == (6, 4)
    assert empty.scores == (0.0,) and empty.context_tokens_kept == 0
    assert ranker.rank(requests[:1])[0].scores == first.scores
    described = ranker.describe()
    assert described["variant"] == "C" and len(described["weights_sha256"]) == 64
