"""What the HTML report's browser tests share: a page that refuses every non-file request, a run's rows,
and a run copy whose tokenizer cannot be loaded (the browser itself is a fixture of ``conftest.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")


def open_page(browser: Any, page_path: Path) -> tuple[Any, list[str]]:
    """A page on ``page_path`` that aborts and records every request not for a file:// address."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    refused: list[str] = []

    def gate(route: Any) -> None:
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    page.route("**/*", gate)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_path.as_uri())
    assert not errors, f"script errors on the page: {errors}"
    return page, refused


def run_rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def copy_as_served(run: Path, dest: Path) -> Path:
    """A copy of ``run`` whose config says a served model on a tokenizer no machine has."""
    shutil.copytree(run, dest)
    config = json.loads((dest / "config.json").read_text(encoding="utf-8"))
    config["config"]["model"] = {"backend": "openai", "name": "far", "tokenizer": "hf:/nowhere/tokenizer"}
    (dest / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return dest
