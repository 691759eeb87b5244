"""How far back a model reads: the used context (the fewest last tokens that keep its answers, searched
by control × K) and the copy horizon that calibrates it, per model and prefix length, on the instances
every model fitted (``longread horizon``)."""
