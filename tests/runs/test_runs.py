"""Run directories: resume after a kill, config checks, full disks, deterministic results."""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import random
from pathlib import Path
from typing import Any

import pytest

from longread.metrics import accuracy_by
from longread.runs import (
    ConfigMismatchError,
    RunConfig,
    RunDir,
    RunDirError,
    RunExistsError,
    RunWriteError,
    make_run_config,
)
from longread.runs.config import canonical_json


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    return path


def config_for(data_file: Path, model: str = "smollm2", **runtime: Any) -> RunConfig:
    return make_run_config(
        task="chapterbreak",
        model={"name": model, "backend": "hf"},
        data_path=data_file,
        settings={"prefix_lengths": (256, 512), "seed": 0},
        runtime=runtime,
    )


def sample(instance: str, prefix_length: int, correct: bool) -> dict[str, Any]:
    return {"key": f"{instance}@{prefix_length}", "prefix_length": prefix_length, "correct": correct}


def test_fresh_run_writes_config_with_hash(tmp_path: Path, data_file: Path) -> None:
    config = config_for(data_file)
    with RunDir.create(tmp_path / "run", config, resume=False) as run:
        run.append(sample("a", 256, True), tokens=300)
    stored = json.loads((tmp_path / "run" / "config.json").read_text())
    assert stored["config_hash"] == config.config_hash
    assert stored["config"]["data"]["sha256"] == config.data.sha256
    timing = json.loads((tmp_path / "run" / "timing.json").read_text())
    assert timing["total"]["samples"] == 1
    assert timing["total"]["tokens"] == 300


def test_resume_after_kill_drops_torn_line_and_keeps_finished_rows(
    tmp_path: Path, data_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run_path = tmp_path / "run"
    with RunDir.create(run_path, config_for(data_file), resume=False) as run:
        for instance in "abc":
            run.append(sample(instance, 256, instance != "b"))
    with (run_path / "samples.jsonl").open("ab") as fh:  # what a kill mid-write leaves
        fh.write(b'{"key":"d@256","prefix_len')

    with caplog.at_level(logging.WARNING), RunDir.create(run_path, config_for(data_file), resume=True) as run:
        assert run.done_keys() == {"a@256", "b@256", "c@256"}
        assert run.torn_tail is not None and run.torn_tail.dropped_bytes == len(b'{"key":"d@256","prefix_len')
        run.append(sample("d", 256, True))
        assert [row["key"] for row in run.rows()] == ["a@256", "b@256", "c@256", "d@256"]
    assert "torn" in caplog.text
    lines = (run_path / "samples.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a@256", "b@256", "c@256", "d@256"]


def test_damage_in_the_middle_is_refused_with_its_line(tmp_path: Path, data_file: Path) -> None:
    run_path = tmp_path / "run"
    with RunDir.create(run_path, config_for(data_file), resume=False) as run:
        run.append(sample("a", 256, True))
    with (run_path / "samples.jsonl").open("ab") as fh:
        fh.write(b"garbage\n" + json.dumps(sample("b", 256, True)).encode() + b"\n")
    with pytest.raises(RunDirError, match="line 2"):
        RunDir.create(run_path, config_for(data_file), resume=True)


def test_existing_run_needs_resume_or_overwrite(tmp_path: Path, data_file: Path) -> None:
    run_path = tmp_path / "run"
    with RunDir.create(run_path, config_for(data_file), resume=False) as run:
        run.append(sample("a", 256, True))
    with pytest.raises(RunExistsError, match="--resume"):
        RunDir.create(run_path, config_for(data_file), resume=False)
    with RunDir.create(run_path, config_for(data_file, model="gpt2"), resume=False, overwrite=True) as run:
        assert run.done_keys() == set()
        assert run.config.model["name"] == "gpt2"


def test_non_run_directory_is_not_touched(tmp_path: Path, data_file: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RunDirError, match=r"no config\.json"):
        RunDir.create(tmp_path, config_for(data_file), resume=True)


def test_resume_with_other_model_or_data_names_the_keys(tmp_path: Path, data_file: Path) -> None:
    run_path = tmp_path / "run"
    RunDir.create(run_path, config_for(data_file), resume=False).close()
    data_file.write_text('{"id": "changed"}\n', encoding="utf-8")
    with pytest.raises(ConfigMismatchError) as caught:
        RunDir.create(run_path, config_for(data_file, model="gpt2"), resume=True)
    assert set(caught.value.differences) == {"model.name", "data.sha256"}
    assert "model.name: 'smollm2' → 'gpt2'" in str(caught.value)


def test_resume_under_another_weights_fingerprint_names_both_and_the_way_out(
    tmp_path: Path, data_file: Path
) -> None:
    """A run made when the fingerprint still hashed the file's name is refused, naming both hashes."""
    run_path = tmp_path / "run"
    old = make_run_config(task="chapterbreak", model={"name": "m", "weights_fingerprint": "481feb0314dca03c"},
                          data_path=data_file, settings={})  # fmt: skip
    RunDir.create(run_path, old, resume=False).close()
    new = make_run_config(task="chapterbreak", model={"name": "m", "weights_fingerprint": "0a1b2c3d4e5f6a7b"},
                          data_path=data_file, settings={})  # fmt: skip
    with pytest.raises(ConfigMismatchError) as caught:
        RunDir.create(run_path, new, resume=True)
    said = str(caught.value)
    assert "'481feb0314dca03c' → '0a1b2c3d4e5f6a7b'" in said
    assert "by their content alone now" in said and "start a new run directory" in said


def test_a_fingerprinted_model_resumes_after_its_files_moved_and_an_unfingerprinted_one_does_not(
    tmp_path: Path, data_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Where the model is one GGUF file fingerprinted by content, how it was pointed at (its cache folder,
    the spec, the name taken from the file) is an address: a run made under the older rule, which hashed
    the folder, resumes from a moved cache with its hash recomputed; another fingerprint is still refused,
    and without a fingerprint the folder is the only name the weights have."""

    def model(
        weights: str, fingerprint: str | None, spec: str = "smollm2", name: str = "smollm2"
    ) -> dict[str, Any]:
        described = {"spec": spec, "name": name, "weights": weights, "architecture": "LlamaForCausalLM"}
        return described | ({"weights_fingerprint": fingerprint} if fingerprint else {})

    def config(described: dict[str, Any]) -> RunConfig:
        return make_run_config(task="chapterbreak", model=described, data_path=data_file, settings={})

    home, moved = "/root/.cache/longread/models/smollm2", "/home/ada/.cache/longread/models/smollm2"
    assert config(model(home, "481feb03")).config_hash == config(model(moved, "481feb03")).config_hash
    # One GGUF file holds all of the model: a spec that names it by a path, and the name taken from the
    # file, are pointers too. An hf: folder's fingerprint covers its weight files only (its config and
    # tokenizer are read from the folder), so the folder stays the run's name.
    gguf = "gguf:/root/models/smollm2.Q8_0.gguf"
    assert (
        config(model(home, "481feb03", spec=gguf, name="smollm2.q8_0")).config_hash
        == config(model(moved, "481feb03", spec="gguf:models/copy.gguf", name="copy")).config_hash
        == config(model(moved, "481feb03")).config_hash
    )
    assert (
        config(model(home, "481feb03", spec="hf:/root/models/SmolLM2", name="SmolLM2")).config_hash
        != config(model(home, "481feb03", spec="hf:/srv/SmolLM2-long", name="SmolLM2-long")).config_hash
    )
    assert (
        config(model(home, "481feb03")).config_hash
        != config(model(home, "481feb03") | {"architecture": "MistralForCausalLM"}).config_hash
    )
    assert config(model(home, "481feb03")).config_hash != config(model(home, "0a1b2c3d")).config_hash
    assert config(model(home, None)).config_hash != config(model(moved, None)).config_hash

    run_path = tmp_path / "run"
    with RunDir.create(run_path, config(model(home, "481feb03")), resume=False) as run:
        run.append(sample("a", 256, True))
    stored = json.loads((run_path / "config.json").read_text())
    older = RunConfig.model_validate(stored["config"]).result_defining()
    older["model"]["weights"] = home  # what the older rule hashed
    stored["config_hash"] = hashlib.sha256(canonical_json(older).encode("utf-8")).hexdigest()
    (run_path / "config.json").write_text(json.dumps(stored), encoding="utf-8")
    with (
        caplog.at_level(logging.INFO),
        RunDir.create(run_path, config(model(moved, "481feb03")), resume=True) as run,
    ):
        assert run.done_keys() == {"a@256"}
    assert "recomputed" in caplog.text
    with pytest.raises(ConfigMismatchError) as caught:
        RunDir.create(run_path, config(model(moved, "0a1b2c3d")), resume=True)
    assert set(caught.value.differences) == {"model.weights_fingerprint"}

    unhashed = tmp_path / "unhashed"
    RunDir.create(unhashed, config(model(home, None)), resume=False).close()
    with pytest.raises(ConfigMismatchError) as caught:
        RunDir.create(unhashed, config(model(moved, None)), resume=True)
    assert set(caught.value.differences) == {"model.weights"}


def test_resume_ignores_what_does_not_define_results(tmp_path: Path, data_file: Path) -> None:
    run_path = tmp_path / "run"
    with RunDir.create(run_path, config_for(data_file, limit=1), resume=False) as run:
        run.append(sample("a", 256, True))
    moved = tmp_path / "moved.jsonl"
    os.replace(data_file, moved)
    with RunDir.create(run_path, config_for(moved, limit=10, batch_size=4), resume=True) as run:
        assert run.resumed and run.done_keys() == {"a@256"}
        run.append(sample("b", 256, False))
    timing = json.loads((run_path / "timing.json").read_text())
    assert [session["runtime"] for session in timing["sessions"]] == [
        {"limit": 1},
        {"limit": 10, "batch_size": 4},
    ]


def test_a_finished_run_opened_again_keeps_its_files_byte_for_byte(tmp_path: Path, data_file: Path) -> None:
    """A campaign that goes on opens every finished run again: a resumed session that writes nothing new
    (no sample, no error, the same results) leaves config.json and timing.json as they were; one that
    writes a sample, an error or other results is listed."""
    run_path = tmp_path / "run"
    with RunDir.create(run_path, config_for(data_file), resume=False) as run:
        run.append(sample("a", 256, True))
        run.write_results(summarise(run))
    files = ("config.json", "timing.json", "results.json")
    before = {name: (run_path / name).read_bytes() for name in files}
    for _ in range(2):
        with RunDir.create(run_path, config_for(data_file, batch_size=4), resume=True) as run:
            assert run.done_keys() == {"a@256"}
            run.write_results(summarise(run))
        run.close()  # closing again changes nothing
        assert {name: (run_path / name).read_bytes() for name in files} == before
    with (run_path / "samples.jsonl").open("ab") as torn:  # a session killed mid-line: the next repairs it
        torn.write(b'{"key": "b@2')
    with RunDir.create(run_path, config_for(data_file), resume=True) as run:
        assert run.torn_tail is not None
        run.write_results(summarise(run))
    assert len(json.loads((run_path / "config.json").read_text())["sessions"]) == 2
    (run_path / "config.json").write_bytes(before["config.json"])
    (run_path / "timing.json").write_bytes(before["timing.json"])
    for change in ("sample", "error", "results"):
        with RunDir.create(run_path, config_for(data_file), resume=True) as run:
            if change == "sample":
                run.append(sample("b", 256, False))
            elif change == "error":
                run.append_error("c@256", "the server hung up")
            run.write_results(summarise(run) | {"extra": change} if change == "results" else summarise(run))
    sessions = json.loads((run_path / "config.json").read_text())["sessions"]
    assert [session["resumed"] for session in sessions] == [False, True, True, True]
    timing = json.loads((run_path / "timing.json").read_text())
    assert [session["samples"] for session in timing["sessions"]] == [1, 1, 0, 0]


def test_second_process_on_the_same_run_is_refused(tmp_path: Path, data_file: Path) -> None:
    with (
        RunDir.create(tmp_path / "run", config_for(data_file), resume=False),
        pytest.raises(RunDirError, match="in use"),
    ):
        RunDir.create(tmp_path / "run", config_for(data_file), resume=True)


def test_disk_full_gives_clear_error_and_keeps_rows(
    tmp_path: Path, data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_path = tmp_path / "run"
    run = RunDir.create(run_path, config_for(data_file), resume=False)
    run.append(sample("a", 256, True))
    run.append(sample("b", 256, False))
    real_write = os.write
    calls = 0

    def nearly_full_disk(fd: int, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:  # the disk takes half the line, then is full
            return real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", nearly_full_disk)
        with pytest.raises(RunWriteError) as caught:
            run.append(sample("c", 256, True))
    message = str(caught.value)
    assert message.startswith(
        f"disk full while writing {run_path / 'samples.jsonl'}; 2 samples are safely stored"
    )
    assert "--resume" in message
    run.close()
    with RunDir.create(run_path, config_for(data_file), resume=True) as resumed:
        assert resumed.torn_tail is None  # the half line was cut at once
        assert resumed.done_keys() == {"a@256", "b@256"}


def test_item_errors_are_logged_and_retried(tmp_path: Path, data_file: Path) -> None:
    run_path = tmp_path / "run"
    with RunDir.create(run_path, config_for(data_file), resume=False) as run:
        run.append(sample("a", 256, True))
        run.append_error("b@256", "prefix shorter than 256 tokens")
        run.append_error("c@256", "backend timeout")
        assert [error.key for error in run.errors()] == ["b@256", "c@256"]
    with RunDir.create(run_path, config_for(data_file), resume=True) as run:
        assert "c@256" not in run.done_keys()
        run.append(sample("c", 256, False))
        results = json.loads(run.write_results({"task": "chapterbreak"}).read_text())
    assert results["run"]["errors"] == 1
    assert results["run"]["error_keys"] == ["b@256"]


def test_rows_deduplicate_by_key_last_wins(tmp_path: Path, data_file: Path) -> None:
    with RunDir.create(tmp_path / "run", config_for(data_file), resume=False) as run:
        run.append(sample("a", 256, False))
        run.append(sample("b", 256, False))
        run.append(sample("a", 256, True))
        assert [(row["key"], row["correct"]) for row in run.rows()] == [("a@256", True), ("b@256", False)]


def test_row_without_key_is_refused(tmp_path: Path, data_file: Path) -> None:
    with (
        RunDir.create(tmp_path / "run", config_for(data_file), resume=False) as run,
        pytest.raises(ValueError, match="key"),
    ):
        run.append({"correct": True})


def summarise(run: RunDir) -> dict[str, Any]:
    rows = run.rows_by_key()
    by_length = accuracy_by(rows, "prefix_length")
    return {
        "task": "chapterbreak",
        "chance": 1 / 6,
        "by_prefix_length": {str(length): summary.as_dict() for length, summary in by_length.items()},
        "keys": [row["key"] for row in rows],
        "nan_is_null": float("nan"),
    }


def test_results_identical_for_interrupted_and_uninterrupted_runs(tmp_path: Path, data_file: Path) -> None:
    rows = [sample(f"i{n:02d}", length, (n * length) % 3 == 0) for n in range(12) for length in (256, 512)]
    straight = tmp_path / "straight"
    with RunDir.create(straight, config_for(data_file), resume=False) as run:
        for row in rows:
            run.append(row)
        run.write_results(summarise(run))

    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    interrupted = tmp_path / "interrupted"
    with RunDir.create(interrupted, config_for(data_file), resume=False) as run:
        for row in shuffled[:10]:
            run.append(row)
    with (interrupted / "samples.jsonl").open("ab") as fh:
        fh.write(json.dumps(shuffled[10]).encode()[:7])
    with RunDir.create(interrupted, config_for(data_file), resume=True) as run:
        for row in shuffled:
            if row["key"] not in run.done_keys():
                run.append(row)
        run.write_results(summarise(run))

    assert (straight / "results.json").read_bytes() == (interrupted / "results.json").read_bytes()
    results = json.loads((straight / "results.json").read_text())
    assert results["nan_is_null"] is None
    assert results["run"]["samples"] == len(rows)
    assert len(json.loads((interrupted / "timing.json").read_text())["sessions"]) == 2


def test_full_disk_on_results_keeps_the_previous_results(
    tmp_path: Path, data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(path: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with RunDir.create(tmp_path / "run", config_for(data_file), resume=False) as run:
        run.append(sample("a", 256, True))
        first = run.write_results({"task": "chapterbreak"}).read_bytes()
        run.append(sample("b", 256, True))
        monkeypatch.setattr("longread.runs.run_dir.atomic_write_text", full_disk)
        with pytest.raises(RunWriteError, match=r"^disk full while writing .*results\.json; 2 samples"):
            run.write_results({"task": "chapterbreak"})
        monkeypatch.undo()
    assert (tmp_path / "run" / "results.json").read_bytes() == first


def test_a_directory_hashes_by_its_files_not_their_order_or_hidden_caches(tmp_path: Path) -> None:
    from longread.runs.config import file_sha256

    first, second = tmp_path / "a", tmp_path / "b"
    for root, names in ((first, ["x.json", "sub/y.txt"]), (second, ["sub/y.txt", "x.json"])):
        for name in names:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(name, encoding="utf-8")
    (second / ".cache").mkdir()
    (second / ".cache" / "generations.jsonl").write_text("anything", encoding="utf-8")
    assert file_sha256(first) == file_sha256(second)
    (second / "sub" / "y.txt").write_text("changed", encoding="utf-8")
    assert file_sha256(first) != file_sha256(second)
