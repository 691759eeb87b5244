"""A run directory: the config, an append-only per-sample log, item errors, results and timing.

    RUN_DIR/
      config.json     what the run is (model, task, data + sha256, settings) and its config_hash, and
                      ``sessions``: every session's runtime (threads, sample, replicas …) and recheck;
                      a resumed session that changed nothing (a finished run opened again) is not kept
      samples.jsonl   one row per finished sample, each with a unique ``key``; append-only
      errors.jsonl    items that failed (key, message); retried on resume
      results.json    the evaluator's summary + run facts; deterministic
      timing.json     wall time and throughput, accumulated over resumed sessions

Resume redoes nothing that was finished and loses nothing: ``done_keys()``
lists the finished samples. For a resumed run to give a ``results.json``
byte-identical to an uninterrupted one, evaluators summarise ``rows_by_key()``
(sorted by key, not arrival order), and everything volatile (throughput, wall
time, dates) goes to ``timing.json``, never to ``results.json``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from longread.files import atomic_write_text
from longread.runs.config import RunConfig
from longread.runs.errors import (
    RunDirError,
    RunExistsError,
    RunWriteError,
    write_failure_reason,
)
from longread.runs.inputs_log import INPUTS_FILE, InputsLog
from longread.runs.jsonl_log import JsonlLog, read_rows
from longread.runs.layout import (
    CONFIG_FILE,
    ERRORS_FILE,
    INCIDENTS_FILE,
    RESULTS_FILE,
    RUN_FILES,
    SAMPLES_FILE,
    SELECTION_FILE,
    TIMING_FILE,
    read_samples,
)
from longread.runs.stored_config import StoredConfig, check_same_results, read_stored_config
from longread.runs.timing import RunTiming, SessionTiming

logger = logging.getLogger(__name__)

RESULTS_SCHEMA_VERSION = 1
# A killed session still leaves its wall time in timing.json, to within this many seconds.
TIMING_CHECKPOINT_S = 30.0


@dataclass(frozen=True)
class ItemError:
    key: str
    message: str


class RunDir:
    """An open run directory; make one with :meth:`RunDir.create` and close it (or use ``with``)."""

    def __init__(self, path: Path, config: RunConfig, stored: StoredConfig, *, resumed: bool) -> None:
        self.path = path
        self.config = config
        self.resumed = resumed
        self._samples = JsonlLog(path / SAMPLES_FILE)
        try:
            self._errors = JsonlLog(path / ERRORS_FILE)
        except BaseException:
            self._samples.close()
            raise
        self._incidents: JsonlLog | None = None
        self.inputs: InputsLog | None = None
        """``inputs.jsonl.gz`` when the run saves what the model read (:meth:`save_inputs`)."""
        self.torn_tail = self._samples.torn_tail
        self._done = {str(row["key"]) for row in self._samples.initial_rows if "key" in row}
        rows_now = len(self._samples.initial_rows)
        self._timing = _read_timing(path / TIMING_FILE)
        self._timing.count_unclosed(rows_now)
        self._session = SessionTiming(
            started_at=_now(),
            code_version=config.code.version,
            git_commit=config.code.git_commit,
            runtime=config.runtime,
            rows_at_start=rows_now,
        )
        self._changed = self.torn_tail is not None
        """This session wrote something beyond its own record: a sample, an error, an incident, a note,
        inputs, results or a selection other than those on disk, or a repair (a torn last line cut, a
        config rewritten under the current rule)."""
        self._timing.sessions.append(self._session)
        self._session_start = time.monotonic()
        self._last_checkpoint = self._session_start
        self._stored = stored
        if resumed and not stored.sessions:
            # A run made before sessions were listed: its first session is what its config recorded.
            stored.sessions.append({
                "started_at": stored.created_at,
                "resumed": False,
                "code": stored.config.code.model_dump(mode="json"),
                "runtime": _json_safe(stored.config.runtime),
                "listed_later": True,
            })  # fmt: skip
        if resumed and _pretty_json(stored.model_dump(mode="json")) != _read_text(path / CONFIG_FILE):
            self._changed = True
        self._session_record: dict[str, Any] = {
            "started_at": self._session.started_at,
            "resumed": resumed,
            "code": config.code.model_dump(mode="json"),
            "runtime": _json_safe(config.runtime),
        }
        self._stored.sessions.append(self._session_record)
        try:
            # Written at once, so a session killed before its first checkpoint is still listed.
            self._write_config()
            self._write_timing()
        except BaseException:
            self._close_logs()
            raise

    @classmethod
    def create(
        cls,
        path: str | Path,
        config: RunConfig | Mapping[str, Any],
        *,
        resume: bool,
        overwrite: bool = False,
    ) -> RunDir:
        """Start a run in ``path``, or continue the one there.

        An existing run is continued only with ``resume`` and only if its
        result-defining config (model, task, data content, settings) is the
        same; otherwise the differing keys are named. ``overwrite`` deletes the
        run files there and starts afresh. ``resume`` on a directory without a
        run simply starts one, so ``--resume`` is always safe to pass.
        """
        path = Path(path)
        run_config = config if isinstance(config, RunConfig) else RunConfig.model_validate(dict(config))
        if resume and overwrite:
            raise RunDirError(path, "both resume and overwrite were asked for", "choose one")
        config_path = path / CONFIG_FILE
        if path.exists() and not path.is_dir():
            raise RunDirError(path, "is a file, not a run directory", "give a directory path")
        if config_path.exists():
            if overwrite:
                _delete_run_files(path)
            elif resume:
                stored = read_stored_config(config_path)
                check_same_results(path, stored, run_config)
                return cls(path, run_config, stored, resumed=True)
            else:
                raise RunExistsError(
                    path,
                    "already holds a run",
                    "pass --resume to continue it, --overwrite to start over, or choose another directory",
                )
        elif path.exists() and any(path.iterdir()):
            raise RunDirError(
                path,
                "is not empty and holds no longread run (no config.json)",
                "choose a new or empty directory",
            )
        stored = StoredConfig(config_hash=run_config.config_hash, created_at=_now(), config=run_config)
        try:
            path.mkdir(parents=True, exist_ok=True)
            atomic_write_text(config_path, _pretty_json(stored.model_dump(mode="json")))
        except OSError as exc:
            raise RunWriteError(config_path, write_failure_reason(exc), 0) from exc
        return cls(path, run_config, stored, resumed=False)

    # -- sessions ------------------------------------------------------------------------

    def note_session(self, name: str, value: Any) -> None:
        """Record a fact of this session in ``config.json``'s ``sessions`` (e.g. ``recheck``: what
        re-scoring finished rows found)."""
        self._session_record[name] = _json_safe(value)
        self._changed = True
        self._write_config()

    def _write_config(self) -> None:
        self._write_file(self.path / CONFIG_FILE, _pretty_json(self._stored.model_dump(mode="json")))

    # -- samples -------------------------------------------------------------------------

    def done_keys(self) -> set[str]:
        """Keys of the samples already finished (in this session or an earlier one)."""
        return set(self._done)

    def append(self, row: Mapping[str, Any], *, tokens: int = 0) -> None:
        """Store one finished sample durably; ``tokens`` (model tokens it took) feeds tokens/s.

        Raises :class:`RunWriteError` when the disk is full or a write fails;
        the rows finished before stay intact.
        """
        key = row.get("key")
        if not isinstance(key, str) or not key:
            raise ValueError(f"a sample row needs a non-empty string 'key'; got {key!r}")
        self._samples.append(dict(row), stored=len(self._done))
        self._changed = True
        self._done.add(key)
        self._session.samples += 1
        self._session.tokens += tokens
        if time.monotonic() - self._last_checkpoint >= TIMING_CHECKPOINT_S:
            self._write_timing()

    def rows(self) -> list[dict[str, Any]]:
        """Stored rows, one per key (the last written wins), in the order keys first appeared."""
        return read_samples(self.path)

    def rows_by_key(self) -> list[dict[str, Any]]:
        """Stored rows sorted by key: summarise these, so results do not depend on arrival order."""
        return sorted(self.rows(), key=lambda row: str(row["key"]))

    # -- item errors ---------------------------------------------------------------------

    def append_error(self, key: str, message: str) -> None:
        """Record that an item failed; the run goes on and the item is retried on resume."""
        self._changed = True
        self._errors.append({"key": key, "message": message}, stored=len(self._done))

    def append_incident(self, keys: Iterable[str], message: str) -> None:
        """Record that the samples ``keys`` were affected by ``message`` but answered (e.g. re-asked after
        their worker died): ``incidents.jsonl``, append-only, created at the first incident."""
        if self._incidents is None:
            self._incidents = JsonlLog(self.path / INCIDENTS_FILE)
        self._changed = True
        self._incidents.append({"keys": sorted(keys), "message": message}, stored=len(self._done))

    def errors(self) -> list[ItemError]:
        """Failed items not finished since, sorted by key (the latest message per key)."""
        latest: dict[str, str] = {}
        for row in read_rows(self.path / ERRORS_FILE)[0]:
            latest[str(row.get("key"))] = str(row.get("message", ""))
        return [ItemError(key, message) for key, message in sorted(latest.items()) if key not in self._done]

    # -- results and timing --------------------------------------------------------------

    def write_results(self, results: Mapping[str, Any]) -> Path:
        """Write ``results.json`` atomically: ``results`` plus a ``run`` section of facts.

        The file is deterministic (sorted keys, NaN/inf written as null, no
        times), so compute ``results`` from :meth:`rows_by_key`. Timing goes to
        ``timing.json``, written alongside.
        """
        if "run" in results:
            raise ValueError("results may not have a top-level 'run' key; RunDir fills it in")
        errors = self.errors()
        facts = {
            "schema_version": RESULTS_SCHEMA_VERSION,
            "config_hash": self.config.config_hash,
            "samples": len(self._done),
            "errors": len(errors),
            "error_keys": [error.key for error in errors],
        }
        target = self.path / RESULTS_FILE
        self._write_output(target, _pretty_json(_json_safe({**results, "run": facts})))
        self._write_timing()
        return target

    def write_selection(self, keys: Iterable[str], pair_ids: Iterable[str] | None = None) -> Path:
        """Record which sample keys this session's results cover and, given, the pair ids of their
        instances (``--same-samples-as`` takes them); sorted: deterministic bytes."""
        target = self.path / SELECTION_FILE
        selection: dict[str, list[str]] = {"keys": sorted(keys)}
        if pair_ids is not None:
            selection["pair_ids"] = sorted(pair_ids)
        self._write_output(target, _pretty_json(selection))
        return target

    def timing(self) -> RunTiming:
        self._session.wall_time_s = round(time.monotonic() - self._session_start, 3)
        return self._timing

    def _write_timing(self) -> None:
        self._last_checkpoint = time.monotonic()
        self._write_file(self.path / TIMING_FILE, _pretty_json(self.timing().to_json_dict()))

    def _write_output(self, path: Path, text: str) -> None:
        """Write a file the session's numbers go to, noting whether it changed what was there."""
        try:
            same = path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            self._changed = True
            self._write_file(path, text)

    def _write_file(self, path: Path, text: str) -> None:
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            raise RunWriteError(path, write_failure_reason(exc), len(self._done)) from exc

    def save_inputs(self) -> None:
        """From now on, each sample's token ids go to ``inputs.jsonl.gz`` (appended on resume)."""
        if self.inputs is None:
            self._changed = True
            self.inputs = InputsLog(self.path / INPUTS_FILE)

    def close(self) -> None:
        """Write the final timing and release the run directory. A resumed session that changed nothing
        (a finished run opened again, as a campaign that goes on opens every run) leaves no record: the
        files are as the last session that did something left them."""
        try:
            self._session.ended = "closed"
            stored, timed = self._stored.sessions, self._timing.sessions
            if self.resumed and not self._changed and stored and stored[-1] is self._session_record:
                # This session's records are the last ones: pop them (not an equal earlier one), once.
                stored.pop()
                if timed and timed[-1] is self._session:
                    timed.pop()
                self._write_config()
            self._write_timing()
        finally:
            self._close_logs()

    def _close_logs(self) -> None:
        self._samples.close()
        self._errors.close()
        if self.inputs is not None:
            self.inputs.close()
            self.inputs = None
        if self._incidents is not None:
            self._incidents.close()

    def __enter__(self) -> RunDir:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _delete_run_files(path: Path) -> None:
    """Remove the run files (only those: other files in the directory are the user's)."""
    # Taking the lock first refuses to delete a run another process is still writing.
    JsonlLog(path / SAMPLES_FILE).close()
    for name in RUN_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path / name)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _read_timing(timing_path: Path) -> RunTiming:
    if not timing_path.exists():
        return RunTiming()
    try:
        return RunTiming.model_validate_json(timing_path.read_bytes())
    except ValidationError:
        logger.warning("%s: unreadable, starting the timing afresh", timing_path)
        return RunTiming()


def _json_safe(value: Any) -> Any:
    """NaN and infinities become null: they have no JSON spelling that other tools accept."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _pretty_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
