"""``inputs.jsonl.gz`` beside ``samples.jsonl`` (``longread eval --save-inputs``): the exact token ids each
request sent to the model, one line per sample.

- a log-likelihood request: ``{"key": KEY, "context": [ids], "continuations": [[ids], …]}`` — the context as
  read, without a start token; each candidate or option in the order of the row's log-probs;
- a generation: ``{"key": KEY, "prompt": [ids]}`` (the prompt as read, without a start token);
- a request group (chunks, sections): ``{"key": KEY, "parts": [one of the above, …]}``;
- a request whose backend reads no token ids of its own (a ranker, a read-along that reads the book once,
  a chat prompt rendered by a server): ``{"key": KEY, "unavailable": WHY}``.

Append-only and safe to resume: each line is its own gzip member, written with one ``write`` and flushed
to disk, so a run killed mid-line loses that line only, and ``gzip`` reads the members as one file.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

INPUTS_FILE = "inputs.jsonl.gz"


class InputsLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def append(self, line: dict[str, Any]) -> None:
        data = (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        os.write(self._fd, gzip.compress(data, mtime=0))
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def read_inputs(path: Path) -> list[dict[str, Any]]:
    """Every whole line of an inputs file (a member cut short by a kill is left out)."""
    data = path.read_bytes()
    lines: list[dict[str, Any]] = []
    while data:
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            text = decompressor.decompress(data)
        except zlib.error:
            break
        if not decompressor.eof:
            break
        lines += [json.loads(line) for line in text.decode("utf-8").splitlines() if line]
        data = decompressor.unused_data
    return lines


def inputs_line(key: str, result: Any) -> dict[str, Any]:
    """The line of one sample from its backend result (see the module docstring)."""
    parts = getattr(result, "parts", None)
    if parts is not None:
        return {"key": key, "parts": [_ids_of(part) for part in parts]}
    return {"key": key, **_ids_of(result)}


def _ids_of(result: Any) -> dict[str, Any]:
    read = getattr(result, "read_ids", None)
    if read is not None and hasattr(result, "scores"):
        context, continuations = read
        return {"context": list(context), "continuations": [list(c) for c in continuations]}
    prompt = getattr(result, "prompt_ids", None)
    if prompt is not None:
        return {"prompt": list(prompt)}
    why = "read once, ranked, or rendered or re-tokenised by a server"
    return {"unavailable": f"a {type(result).__name__} carries no token ids ({why})"}
