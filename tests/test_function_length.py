"""No function in ``src/`` is longer than 80 lines (its ``def`` line to its last line, signature and
docstring included): a longer one is split into helpers that each do one step."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"
LIMIT = 80


def long_functions(folder: Path, limit: int = LIMIT) -> list[str]:
    """``file:line name (N lines)`` of every function or method under ``folder`` over ``limit`` lines,
    nested ones included."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for node in sorted(functions, key=lambda n: n.lineno):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > limit:
                found.append(f"{path.relative_to(folder)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_src_is_over_80_lines() -> None:
    assert long_functions(SOURCE) == []


def test_a_long_function_is_found_nested_or_async(tmp_path: Path) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(LIMIT))
    (tmp_path / "mod.py").write_text(
        f"def short():\n    return 1\n\n\ndef outer():\n    def inner():\n{body.replace('    ', '        ')}"
        f"    return inner\n\n\nasync def waits():\n{body}"
    )
    assert long_functions(tmp_path) == [
        f"mod.py:5 outer ({LIMIT + 3} lines)",
        f"mod.py:6 inner ({LIMIT + 1} lines)",
        f"mod.py:{LIMIT + 10} waits ({LIMIT + 1} lines)",
    ]
