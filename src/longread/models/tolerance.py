"""How far two computations of the same summed log-probability may differ, and why.

A continuation's log-probability is a sum over its tokens of log-softmax values. Two exact computations
of it (one forward against a prefix KV cache and chunked prefill, a batch of one against a padded batch,
one thread count against another, this engine against vLLM, this CPU against another) differ only by
float32 rounding, whose order depends on the kernels: the SIMD width and the blocking a CPU's BLAS picks.
Seen so far, per token: at most 7.0e-5 nats between the engine's modes on one CPU
(``bench/shared_prefix.py``, 4K-token contexts), 3e-5 between vLLM and transformers, and 4.0e-5 on
average over 51 Gemma tokens between two CPUs (2.06e-3 in all, issue 18). The rounding of each token adds
to the sum, so the bound grows with the tokens summed: ``PER_TOKEN`` is 1e-4 nats (1.4x the worst
single-token difference seen, 2.5x the cross-CPU mean), with a floor of ``FLOOR`` for short sums. A real
defect (a lost start token, a cut one token off, a wrong position) moves a sum by 0.1 nats a token or
more: three orders of magnitude above the bound.

The tests hold two computations to this bound (``tests/tolerances.py``), and a resumed run holds the
rows it re-scores (``--recheck``) to it: threads, batch sizes and the prefill chunk are runtime, not part
of a run's identity, because they move a log-prob by no more than this.
"""

from __future__ import annotations

PER_TOKEN = 1e-4
FLOOR = 1e-3


def summed_logprob_tolerance(n_tokens: int) -> float:
    """The largest |difference| allowed between two computations of a log-prob summed over ``n_tokens``."""
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be >= 0, not {n_tokens}")
    return max(FLOOR, PER_TOKEN * n_tokens)


def tolerance_rule() -> str:
    """The rule in words, as a run records it."""
    return f"|Δ| ≤ max({FLOOR:g}, {PER_TOKEN:g} × tokens summed) nats"
