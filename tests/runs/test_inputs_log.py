"""``inputs.jsonl.gz``: one gzip member a line, appended; a line cut short by a kill is left out."""

from __future__ import annotations

import gzip
from pathlib import Path

from longread.runs.inputs_log import InputsLog, read_inputs


def test_lines_append_across_sessions_and_a_torn_last_line_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "inputs.jsonl.gz"
    first = InputsLog(path)
    first.append({"key": "a", "context": [1, 2], "continuations": [[3], [4, 5]]})
    first.close()
    second = InputsLog(path)  # a resumed session appends
    second.append({"key": "b", "prompt": [7, 8, 9]})
    second.close()
    assert gzip.decompress(path.read_bytes()).decode().count("\n") == 2  # plain gzip reads it whole
    whole = path.read_bytes()
    path.write_bytes(whole + gzip.compress(b'{"key": "c"}\n')[:-6])  # killed mid-write
    assert [line["key"] for line in read_inputs(path)] == ["a", "b"]
