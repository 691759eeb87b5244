"""MuLD's exports (declared by its tasks' ``exporter``): generation tasks as ``generate_until`` items
(``generate.py``: VLSP, NarrativeQA, HotpotQA, OpenSubtitles), character archetype and style change as
multiple choice (``archetype.py``, ``style.py``)."""
