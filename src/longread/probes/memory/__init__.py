"""Reading or remembering? Memorisation probes for the books behind the benchmarks.

Probes from the literature, per book: name cloze and a ranked cloze (Chang et al. 2023, *Speak,
Memory*), extraction (Carlini et al. 2023, *Quantifying Memorization Across Neural Language Models*) and
min-k% probability (Shi et al. 2024, *Detecting Pretraining Data from Large Language Models*).
:mod:`.passages` and :mod:`.places` choose the text, :mod:`.probes` asks the model, :mod:`.run` scores
each book (:mod:`.book`) and :mod:`.rule` gives its verdict, :mod:`.plot` draws.
"""

from longread.probes.memory.book import BookMemory
from longread.probes.memory.run import MemoryProbeSettings, probe_memory, write_memory

__all__ = ["BookMemory", "MemoryProbeSettings", "probe_memory", "write_memory"]
