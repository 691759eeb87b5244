"""A command that makes several runs names each as it starts, and an interruption names the run it
stopped in and what that run kept (not the first run's, not the command's folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from longread.cli.interrupts import RunAnnouncer


def test_an_interruption_names_the_run_it_stopped_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    announce = RunAnnouncer(tmp_path)
    first, second = tmp_path / "full", tmp_path / "snapkv-0.5"
    for path, rows in ((first, 5), (second, 2)):
        path.mkdir()
        (path / "samples.jsonl").write_text("{}\n" * rows + "{partial", encoding="utf-8")
    announce(1, 2, "full", first)
    announce(2, 2, "snapkv-0.5", second)
    stopped = announce.interrupted(KeyboardInterrupt())
    err = capsys.readouterr().err
    assert "[1/2] full: " in err and f"[2/2] snapkv-0.5: {second}" in err
    assert f"2 finished sample(s) are kept in {second / 'samples.jsonl'}" in err and "--resume" in err
    assert stopped.exit_code != 0
