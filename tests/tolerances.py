"""How far two computations of the same summed log-probability may differ: the rule and its reasons are in
:mod:`longread.models.tolerance` (the runner's ``--recheck`` holds resumed rows to the same bound)."""

from __future__ import annotations

from longread.models.tolerance import FLOOR, PER_TOKEN, summed_logprob_tolerance

__all__ = ["FLOOR", "PER_TOKEN", "summed_logprob_tolerance"]
