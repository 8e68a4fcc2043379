"""A package imports only from lower layers (see docs/design.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "fabricplan"

LAYER = {
    "units": 0,
    "input_file": 1,
    "output_file": 1,
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
    "search_cache": 4,
    "perf_cache": 5,
    "evaluate": 5,
    "recommend": 6,
    "export": 6,
    "sweep": 7,
    "report": 7,
    "web": 8,
    "cli": 9,
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


SIM = SRC / "sim"
SIM_FLOOR = sorted(p.stem for p in SIM.glob("*.py") if p.stem not in {"__init__", "run"})
"""The shared floor both levels stand on."""
SIM_LEVEL = {"floor": 0, "flow": 1, "packet": 1, "run": 2}
"""Inside sim/: the floor, the two sibling levels over it, and the run seam over both."""


def _sim_part(path: Path) -> str:
    rel = path.relative_to(SIM).parts
    if len(rel) > 1:
        return rel[0]
    return "run" if rel[0] == "run.py" else "floor"


def _imported_sim_parts(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            bits = name.split(".")
            if bits[:2] == ["fabricplan", "sim"] and len(bits) > 2:
                parts.add(bits[2] if bits[2] in SIM_LEVEL else "floor")
    return parts


SIM_SOURCES = sorted(p for p in SIM.rglob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("path", SIM_SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_sim_levels_stand_on_the_floor_and_not_on_each_other(path: Path) -> None:
    own = _sim_part(path)
    for other in _imported_sim_parts(path) - {own}:
        assert SIM_LEVEL[other] < SIM_LEVEL[own], f"{path.relative_to(SRC)} ({own}) imports {other}"


def test_the_floor_holds_the_shared_pieces() -> None:
    assert {"traffic", "pattern", "mechanism", "path", "summary", "performance", "seed"} <= set(
        SIM_FLOOR
    )


def test_the_sim_checker_sees_packet_importing_flow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from fabricplan.sim.flow.routing import flow_keys\nimport fabricplan.sim.traffic\n"
    )
    assert _imported_sim_parts(bad) == {"flow", "floor"}
    assert not SIM_LEVEL["flow"] < SIM_LEVEL["packet"]


LINT = SRC / "lint"
LINT_LEVEL = {"floor": 0, "reading": 1, "baselines": 1, "checking": 2, "operations": 3}
"""Inside lint/: the shared floor (model, value, headroom, vendor_default), the readers and the
baseline writer over it (neither reaches into the other), the checks over the readers, and the
operations assessment over all."""


def _lint_part_of_module(module: str) -> str:
    bits = module.split(".")
    if bits[:2] != ["fabricplan", "lint"] or len(bits) < 3:
        return ""
    return bits[2] if bits[2] in LINT_LEVEL else "floor"


def _lint_part(path: Path) -> str:
    rel = path.relative_to(LINT).parts
    if len(rel) > 1:
        return rel[0]
    return "operations" if rel[0] == "operations.py" else "floor"


def _imported_lint_parts(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            parts |= {_lint_part_of_module(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts.add(_lint_part_of_module(node.module))
    return parts - {""}


LINT_SOURCES = sorted(p for p in LINT.rglob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("path", LINT_SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_lint_wings_import_only_lower_wings(path: Path) -> None:
    own = _lint_part(path)
    for other in _imported_lint_parts(path) - {own}:
        assert LINT_LEVEL[other] < LINT_LEVEL[own], (
            f"{path.relative_to(SRC)} ({own}) imports {other}"
        )


def test_the_lint_checker_sees_the_writer_reaching_into_a_reader(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from fabricplan.lint.reading.eos import parse_eos\n")
    assert _imported_lint_parts(bad) == {"reading"}
    assert not LINT_LEVEL["reading"] < LINT_LEVEL["baselines"]


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from fabricplan.cli.app import main\nimport fabricplan.report.table\n")
    assert _imported_units(bad) == {"cli", "report"}


def test_the_design_documents_layer_table_is_this_one() -> None:
    """docs/design.md's *Layers* table names every unit at the layer :data:`LAYER` gives it."""
    import re

    text = (SRC.parent.parent / "docs" / "design.md").read_text(encoding="utf-8")
    table = {
        name: int(layer)
        for layer, cell in re.findall(r"^\| (\d+) \| (.*) \|$", text, re.MULTILINE)
        for name in re.findall(r"`([a-z_]+)`", cell)
        if name in LAYER
    }
    assert table == LAYER
