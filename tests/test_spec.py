"""The cluster spec: the minimal file is accepted, bad input gets one line naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.errors import SpecError
from fabricplan.spec import parse_spec, parse_spec_text, read_spec

MINIMAL: dict[str, Any] = {
    "cluster": {"gpus": 1024, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
    "fabric": {
        "technologies": ["infiniband", "roce_v2"],
        "topology": "rail_optimized",
        "oversubscription": 1,
    },
    "priorities": "balanced",
}


def _with(path: str, value: Any) -> dict[str, Any]:
    import copy

    spec = copy.deepcopy(MINIMAL)
    node = spec
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    return spec


def test_minimal_spec_is_accepted_with_defaults() -> None:
    valid = parse_spec(MINIMAL)
    assert valid.spec.cluster.nodes == 128
    assert set(valid.switches) == {"infiniband", "roce_v2"}
    assert valid.switches["infiniband"].family == "infiniband"
    assert valid.switches["roce_v2"].family == "ethernet"
    assert valid.assumptions, "auto choices must be said"


BAD_SPECS = [
    ("FP101", "cluster.gpus", _with("cluster.gpus", 1020)),
    ("FP102", "cluster.gpuz", _with("cluster.gpuz", 3)),
    ("FP104", "fabric.topology", _with("fabric.topology", "torus")),
    ("FP104", "fabric.technologies", _with("fabric.technologies", ["omnipath"])),
    ("FP105", "cluster.gpus", _with("cluster.gpus", "many")),
    ("FP105", "fabric.oversubscription", _with("fabric.oversubscription", 0.5)),
    ("FP109", "cluster.gpu", _with("cluster.gpu", "h10")),
    ("FP109", "fabric.switch.infiniband", _with("fabric.switch", {"infiniband": "qm9999"})),
    ("FP112", "fabric.switch.infiniband", _with("fabric.switch", {"infiniband": "sn5600"})),
    ("FP101", "fabric.switch.roce_v1", _with("fabric.switch", {"roce_v1": "auto"})),
    ("FP101", "fabric.technologies", _with("fabric.technologies", ["roce_v2", "roce_v2"])),
    (
        "FP113",
        "fabric.switch.roce_v2",
        _with("fabric.switch", {"roce_v2": {"ports": 32, "port_speed_gbps": 100}}),
    ),
    ("FP105", "cost.years", _with("cost.years", 0)),
    ("FP104", "priorities", _with("priorities", "fastest")),
    ("FP101", "priorities", _with("priorities", {"performance": 0})),
]


@pytest.mark.parametrize(("code", "field", "spec"), BAD_SPECS, ids=[b[1] + b[0] for b in BAD_SPECS])
def test_bad_spec_gets_one_line_naming_the_field(code: str, field: str, spec: Any) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(spec, origin="cluster.yaml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("cluster.yaml: ")
    assert field in message
    assert info.value.code == code


def test_a_spec_that_is_not_a_mapping_is_rejected() -> None:
    with pytest.raises(SpecError, match="FP107"):
        read_spec(["cluster"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fabric: {sharp: on}", {"infiniband": "on", "roce_v2": "on"}),
        ("fabric: {sharp: off}", {"infiniband": "off", "roce_v2": "off"}),
        ("fabric: {sharp: {infiniband: on}}", {"infiniband": "on", "roce_v2": "auto"}),
        ("fabric: {sharp: auto}", {"infiniband": "auto", "roce_v2": "auto"}),
    ],
)
def test_sharp_on_and_off_as_yaml_writes_them(text: str, expected: dict[str, str]) -> None:
    # YAML 1.1 reads a bare on/off as a boolean; the spec takes the word the user wrote.
    valid = parse_spec_text("cluster: {gpus: 64}\n" + text)
    assert {t: valid.spec.fabric.sharp_for(t) for t in expected} == expected
