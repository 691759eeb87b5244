"""The HTML report's browser fixtures: Debian's headless Chromium driven by Playwright (one browser for
the whole session; each test opens its own page), and a folder for the screenshots each test leaves."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HEADLESS_SHELL = Path("/usr/lib/chromium/chromium-headless-shell")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is not installed — make test installs them (pip install playwright)")
    if not HEADLESS_SHELL.is_file():
        pytest.fail(
            f"headless Chromium is not at {HEADLESS_SHELL} — make test installs them "
            "(apt-get install chromium chromium-headless-shell)"
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(HEADLESS_SHELL), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture()
def artifacts(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = os.environ.get("LONGREAD_TEST_ARTIFACTS")
    folder = (Path(root) if root else tmp_path) / "report_html" / str(request.node.name)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {folder}")
    return folder
