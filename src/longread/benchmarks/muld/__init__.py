"""MuLD: six tasks over documents of 10,000+ tokens (Hudson & Al Moubayed, LREC 2022).

Layout (``records``): one JSON-lines file per task and split, plain or ``.bz2``,
each line ``{"input": str, "output": [str, ...] | str, "metadata": str}``.
Builders (``build_*``) write it from the raw sources; tasks (``tasks``) run the
paper's chunking baselines through the generic runner.
"""
