"""Every numeric field of the spec, given values out of any cluster's range (true, negative,
zero, huge, infinite, NaN, a 30-digit integer), ends in an answer with valid JSON or in one
clean line — never a traceback or an internal model's name (FP1399)."""

from __future__ import annotations

import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from fabricplan.errors import FabricPlanError
from fabricplan.model.scenario import GenericSwitchSpec, ScenarioSpec
from fabricplan.spec import SPEC_NUMBER_LIMIT, read_spec, resolve
from hostile_run import run

HOSTILE = [True, -1, 0, 1e308, float("inf"), float("nan"), 10**30, -SPEC_NUMBER_LIMIT]
LARGEST_ACCEPTED = [SPEC_NUMBER_LIMIT, -1]
"""The values that pass the edge's scale check and must still not break a model."""


def _numeric_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    for name, field in model.model_fields.items():
        kinds = [field.annotation, *typing.get_args(field.annotation)]
        nested = [k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)]
        if nested:
            paths += _numeric_paths(nested[0], (*prefix, name))
        elif "int" in str(field.annotation) or "float" in str(field.annotation):
            paths.append((*prefix, name))
    return paths


PATHS = [
    *_numeric_paths(ScenarioSpec),
    *(("fabric", "switch", "infiniband", name) for name in GenericSwitchSpec.model_fields),
    ("cost", "prices", "qm9700"),
    ("cost", "operations_engineer_years", "infiniband"),
]


def _spec(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"cluster": {"gpus": 64}}
    if path[:2] == ("fabric", "switch"):
        spec["fabric"] = {"switch": {"infiniband": {"ports": 64, "port_speed_gbps": 400}}}
    if path[0] == "workload" and path[1] in {"params_b", "layers", "hidden"}:
        spec["workload"] = {"model": "custom", "params_b": 7, "layers": 32, "hidden": 4096}
    node = spec
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return spec


def test_the_walk_sees_the_fields() -> None:
    names = {".".join(p) for p in PATHS}
    assert {"cluster.gpus", "fabric.management_ports", "cost.prices.qm9700"} <= names
    assert len(PATHS) > 40


@pytest.mark.parametrize("path", PATHS, ids=".".join)
def test_hostile_values_are_refused_at_the_edge_or_resolve(
    path: tuple[str, ...], fuzz_counts: Counter[str]
) -> None:
    for value in HOSTILE:
        try:
            resolve(read_spec(_spec(path, value)))
        except FabricPlanError as exc:
            assert exc.code.startswith("FP") and "\n" not in str(exc)
            fuzz_counts["clean errors"] += 1
        else:
            assert value is not True, f"{'.'.join(path)} took true as a number"
            assert value == value and abs(value) <= SPEC_NUMBER_LIMIT, (path, value)
            fuzz_counts["answers"] += 1


@pytest.mark.parametrize("path", PATHS, ids=".".join)
def test_the_largest_accepted_values_reach_an_answer_or_one_line(
    path: tuple[str, ...], tmp_path: Path, fuzz_counts: Counter[str]
) -> None:
    for value in LARGEST_ACCEPTED:
        file = tmp_path / "spec.yaml"
        file.write_text(yaml.safe_dump(_spec(path, value)))
        result = run(["compare", str(file), "-f", "json"], fuzz_counts)
        assert "FP1399" not in result.stderr, (path, value, result.stderr)
