"""A package imports only from lower layers (see docs/design.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "fabricplan"

LAYER = {
    "units": 0,
    "errors": 0,
    "model": 1,
    "catalog": 2,
    "topology": 2,
    "analytic": 2,
    "spec": 3,
    "sim": 3,
    "lint": 3,
    "measure": 3,
    "backends": 4,
    "perf_cache": 5,
    "evaluate": 5,
    "recommend": 6,
    "sweep": 6,
    "report": 7,
    "cli": 8,
    "web": 8,
}
EXEMPT = {"__init__", "__main__"}


def _unit(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imported_units(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    units: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "fabricplan" and len(parts) > 1:
                units.add(parts[1])
    return units


SOURCES = sorted(p for p in SRC.rglob("*.py") if _unit(p) not in EXEMPT)


def test_every_unit_has_a_layer() -> None:
    assert {_unit(p) for p in SOURCES} <= set(LAYER)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_only_lower_layers(path: Path) -> None:
    own = _unit(path)
    for other in _imported_units(path) - {own}:
        assert other in LAYER, f"{path.name} imports unknown unit {other}"
        assert LAYER[other] < LAYER[own], (
            f"{path.relative_to(SRC)} (layer {LAYER[own]}) imports {other} (layer {LAYER[other]})"
        )


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from fabricplan.cli.app import main\nimport fabricplan.report.table\n")
    assert _imported_units(bad) == {"cli", "report"}
