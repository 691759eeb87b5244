"""``config.json`` as stored, and the rule that lets a run resume: the same results or a clear refusal."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from longread.runs.config import RunConfig, config_differences
from longread.runs.errors import ConfigMismatchError, RunDirError

logger = logging.getLogger(__name__)


class StoredConfig(BaseModel):
    """The content of ``config.json``.

    ``config`` is the run as its first session made it (``config.runtime``: that session's); ``sessions``
    holds every session in order, each with its own runtime, code version and, on resume, what re-scoring
    finished rows found (``recheck``). Configs written before sessions were kept have none listed.
    """

    model_config = ConfigDict(extra="ignore")

    config_hash: str
    created_at: str
    config: RunConfig
    sessions: list[dict[str, Any]] = []


def read_stored_config(config_path: Path) -> StoredConfig:
    try:
        return StoredConfig.model_validate_json(config_path.read_bytes())
    except ValidationError as exc:
        raise RunDirError(
            config_path, f"is not a valid run config ({exc.error_count()} problems: {exc.errors()[0]['msg']})"
        ) from None


def check_same_results(path: Path, stored: StoredConfig, new: RunConfig) -> None:
    differences = config_differences(stored.config, new)
    if not differences and stored.config.config_hash != new.config_hash:
        differences = {"config_hash": (stored.config.config_hash, new.config_hash)}
    if differences:
        raise ConfigMismatchError(path, differences)
    if stored.config_hash != new.config_hash:
        # Hashed under an older rule (threads and batch sizes, or how a fingerprinted GGUF model was pointed
        # at, were part of the model): same results.
        logger.info(
            "%s: config hash %s recomputed as %s (hashed under an older rule: threads, batch sizes and how a "
            "fingerprinted GGUF model was pointed at — its cache folder, spec and name — no longer define a "
            "run)",
            path,
            stored.config_hash[:12],
            new.config_hash[:12],
        )
        stored.config_hash = new.config_hash
    if stored.config.code != new.code:
        logger.warning(
            "%s: resuming a run made by longread %s (commit %s) with %s (commit %s)",
            path,
            stored.config.code.version,
            stored.config.code.git_commit,
            new.code.version,
            new.code.git_commit,
        )
