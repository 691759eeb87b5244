"""Probes of a model on raw books, beside the benchmarks: which tokens need the long context
(:mod:`~longread.probes.tokens`, after LongPPL)."""
