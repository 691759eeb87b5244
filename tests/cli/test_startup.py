"""A command starts without the heavy libraries it may not need: torch and transformers load with a model,
nltk (with scipy, scikit-learn and pandas, ~1.3 s) only when METEOR or ROUGE is scored."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("nltk", "rouge_score", "sklearn", "pandas", "torch", "transformers")


def _imported_after(code: str) -> list[str]:
    names = "sorted({m.split('.')[0] for m in sys.modules})"
    script = f"import json, sys\n{code}\nprint(json.dumps({names}))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [name for name in json.loads(done.stdout.splitlines()[-1]) if name in HEAVY]


def test_the_command_line_and_every_task_load_no_heavy_library() -> None:
    code = "from longread.cli.app import app\nfrom longread.evaluation.registry import describe_tasks\n"
    assert _imported_after(code + "assert len(describe_tasks()) >= 3") == []


def test_scoring_meteor_and_rouge_loads_nltk_then() -> None:
    code = (
        "from longread.metrics.text_overlap import rouge_l\n"
        "assert rouge_l('the cat sat', ['the cat sat']) == 100.0"
    )
    assert {"nltk", "rouge_score"} <= set(_imported_after(code))
