"""Priced lines are built without validation (``CostLine.model_construct``): each must equal,
type for type, the line validation would build from the same values."""

from __future__ import annotations

import pytest

from fabricplan.analytic.cost import fabric_cost
from fabricplan.model.results import CostLine
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric


@pytest.mark.parametrize(
    "spec",
    [
        {"cluster": {"gpus": 256}},
        {"cluster": {"gpus": 4096}, "fabric": {"technologies": ["infiniband", "roce_v2", "uec"]}},
        {"cluster": {"gpus": 64}, "cost": {"prices": {"qm9700": 1}}},  # an int price
    ],
)
def test_every_priced_line_is_the_validated_one(spec: dict[str, object]) -> None:
    valid = parse_spec(spec)
    for tech in valid.spec.fabric.technologies:
        lines = fabric_cost(valid, design_fabric(valid, tech)).lines
        assert lines
        for line in lines:
            checked = CostLine.model_validate(line.model_dump())
            assert checked == line
            assert line.model_dump_json() == checked.model_dump_json()
            assert line.model_fields_set == checked.model_fields_set
