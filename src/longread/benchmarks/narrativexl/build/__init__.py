"""``longread build narrativexl``: books → scenes → summaries → names substituted → read-along questions.

:func:`build_narrativexl` runs the authors' pipeline with a seeded RNG and a cache that lets a killed
build resume; the steps and the files it writes are described in :mod:`.pipeline`, its report in
:mod:`.report`.
"""

from __future__ import annotations

from longread.benchmarks.narrativexl.build.pipeline import (
    BUILD_SETTINGS_FILE,
    CACHE_DIR,
    NarrativeXLBuildSettings,
    build_narrativexl,
)
from longread.benchmarks.narrativexl.build.report import (
    BUILD_REPORT_FILE,
    BookOutcome,
    NarrativeXLBuildReport,
)

__all__ = [
    "BUILD_REPORT_FILE",
    "BUILD_SETTINGS_FILE",
    "CACHE_DIR",
    "BookOutcome",
    "NarrativeXLBuildReport",
    "NarrativeXLBuildSettings",
    "build_narrativexl",
]
