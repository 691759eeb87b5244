"""What a backend tells the runner about its machinery: a replica died, its requests were asked again.

A backend with ``take_incidents()`` returns the incidents since the last call to it; the runner
stores each with the keys of the samples whose requests it touched (the run's ``incidents.jsonl``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Incident:
    message: str
    requests: tuple[int, ...]
    """Which requests of the call it touched: indices into the request list the backend was given
    (request groups flattened into their parts, as the backend receives them)."""
