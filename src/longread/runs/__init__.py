"""Run directories: config + hash, an append-only per-sample log, resume, results and timing."""

from longread.runs.config import CodeVersion, DataRef, RunConfig, canonical_json, file_sha256, make_run_config
from longread.runs.errors import ConfigMismatchError, RunDirError, RunExistsError, RunWriteError
from longread.runs.jsonl_log import TornTail
from longread.runs.run_dir import ItemError, RunDir
from longread.runs.timing import RunTiming, SessionTiming, Throughput

__all__ = [
    "CodeVersion",
    "ConfigMismatchError",
    "DataRef",
    "ItemError",
    "RunConfig",
    "RunDir",
    "RunDirError",
    "RunExistsError",
    "RunTiming",
    "RunWriteError",
    "SessionTiming",
    "Throughput",
    "TornTail",
    "canonical_json",
    "file_sha256",
    "make_run_config",
]
