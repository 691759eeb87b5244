"""The Software section of a report of several runs, as facts both report.md and the HTML page render.

The versions that differ between the runs (:mod:`longread.report.versions`) and the agreement of the same
rows of runs that should agree (:mod:`longread.report.agreement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from longread.report.agreement import Agreement, agreement_lines, agreements
from longread.report.load import RunReport
from longread.report.versions import VersionDifference, run_versions, version_differences

SAME_SOFTWARE = "The runs were made with the same software versions."
DIFFERING_SOFTWARE = "Software that differs between the runs:"


@dataclass(frozen=True)
class SoftwareFacts:
    labels: tuple[str, ...]
    recorded: tuple[dict[str, str], ...]
    """Each run's ``{name: version}``, in the report's order."""
    differing: tuple[VersionDifference, ...]
    agreed: tuple[Agreement, ...]
    lines: tuple[str, ...]
    """One sentence per entry of ``agreed`` that has something to say."""

    @property
    def worth_saying(self) -> bool:
        return bool(self.differing or self.lines)

    def summary(self) -> dict[str, Any]:
        """report.json's ``software``."""
        return {
            "versions": dict(zip(self.labels, self.recorded, strict=True)),
            "differing": [d.name for d in self.differing],
            "agreement": [a.as_dict() for a in self.agreed],
        }


def software_facts(runs: Sequence[RunReport]) -> SoftwareFacts:
    recorded = tuple(run_versions(run.path) for run in runs)
    differing = tuple(version_differences(recorded)) if len(runs) > 1 else ()
    agreed = tuple(agreements(runs))
    return SoftwareFacts(
        tuple(run.label for run in runs), recorded, differing, agreed, tuple(agreement_lines(agreed))
    )
