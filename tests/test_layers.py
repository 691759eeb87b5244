"""The layers of ``pyproject.toml``'s import-linter contract, checked from the source alone.

The order is written once, in ``[tool.importlinter]``; this test reads it and walks
every import of ``src/longread`` with ``ast`` (imports inside functions and under
``TYPE_CHECKING`` too), so ``pytest`` holds the rule even where import-linter is
not installed. An import of the root package counts as the imports its face makes.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "longread"


@dataclass(frozen=True)
class Layers:
    """Top-level module → (layer index, 0 = top; whether its layer's siblings must not import each other)."""

    place: dict[str, tuple[int, bool]]

    @classmethod
    def from_contract(cls, layers: list[str]) -> Layers:
        place: dict[str, tuple[int, bool]] = {}
        for index, layer in enumerate(layers):
            independent = "|" in layer
            for name in layer.replace("|", ":").split(":"):
                place[name.strip()] = (index, independent)
        return cls(place)

    def refuses(self, importer: str, imported: str) -> bool:
        if importer == imported or importer not in self.place or imported not in self.place:
            return False
        (importer_layer, independent), (imported_layer, _) = self.place[importer], self.place[imported]
        return imported_layer < importer_layer or (imported_layer == importer_layer and independent)


def layers_contract() -> tuple[str, list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["type"] == "layers")
    (container,) = contract["containers"]
    return container, list(contract["layers"])


def module_name(path: Path, package: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, package: Path) -> Iterator[tuple[str, int]]:
    """(module named, line) of every import in the file, wherever it stands; ``from P import x`` also
    names ``P.x`` (it may be a module)."""
    name = module_name(path, package)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], node.module or ""]).strip(".")
            else:
                base = node.module or ""
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def top_level(module: str, root: str) -> str | None:
    """The part of ``root`` a module belongs to (``longread.models.hf.backend`` → ``models``); ``""``
    for the root package itself; None outside it."""
    if module == root:
        return ""
    if not module.startswith(root + "."):
        return None
    return module.split(".")[1]


def upward_imports(package: Path, layers: Layers) -> list[str]:
    """Every import from a lower layer to a higher one (or between siblings that must not), as
    ``file:line: importer -> imported``."""
    root = package.name
    face = package / "__init__.py"
    through_face = {
        part for module, _ in imported_modules(face, package) if (part := top_level(module, root))
    }
    found = []
    for path in sorted(package.rglob("*.py")):
        importer = top_level(module_name(path, package), root)
        if not importer:
            continue
        for module, line in imported_modules(path, package):
            imported = top_level(module, root)
            targets = through_face if imported == "" else {imported} if imported else set()
            for target in sorted(targets):
                if layers.refuses(importer, target):
                    where = path.relative_to(package.parent)
                    found.append(f"{where}:{line}: {importer} -> {target} ({module})")
    return sorted(set(found))


def test_no_module_imports_from_a_higher_layer() -> None:
    container, layers = layers_contract()
    assert container == PACKAGE.name
    assert upward_imports(PACKAGE, Layers.from_contract(layers)) == []


def test_every_top_level_module_has_a_layer() -> None:
    _, layers = layers_contract()
    named = set(Layers.from_contract(layers).place)
    present = {
        path.stem if path.is_file() else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").is_file()
    }
    assert present - named == set(), "give each a place in [tool.importlinter]'s layers"
    assert named - present == set(), "a layer names a module that is gone"


def test_an_upward_import_is_found_even_inside_a_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for folder in ("top", "low"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "side.py").write_text("")
    (package / "top" / "work.py").write_text("from pkg.low import thing\n")
    (package / "low" / "thing.py").write_text("def f():\n    from ..top import work\n    import pkg.side\n")
    layers = Layers.from_contract(["top", "low | side"])
    assert upward_imports(package, layers) == [
        "pkg/low/thing.py:2: low -> top (pkg.top)",
        "pkg/low/thing.py:2: low -> top (pkg.top.work)",
        "pkg/low/thing.py:3: low -> side (pkg.side)",
    ]


def test_an_import_of_the_root_face_counts_as_what_the_face_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "top").mkdir(parents=True)
    (package / "top" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from pkg.top import x\n")
    (package / "low.py").write_text("import pkg\n")
    assert upward_imports(package, Layers.from_contract(["top", "low"])) == ["pkg/low.py:1: low -> top (pkg)"]
