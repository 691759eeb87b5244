"""Seeded percentile-bootstrap intervals for statistics that are not binomial proportions."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def bootstrap_interval(
    values: Sequence[float] | FloatArray,
    statistic: Callable[[FloatArray], float],
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """A percentile bootstrap interval of ``statistic(values)``; the same seed gives the same interval.

    Resamples are drawn one at a time so memory stays at one copy of ``values``.
    Empty ``values`` give (nan, nan), as :func:`wilson_interval` does for n = 0.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1; got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence}")
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    estimates = np.fromiter(
        (statistic(data[rng.integers(0, data.size, size=data.size)]) for _ in range(n_resamples)),
        dtype=np.float64,
        count=n_resamples,
    )
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return (float(low), float(high))
