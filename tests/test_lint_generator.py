"""``roce_baseline``: per vendor, per speed and cable length, the generated fabric lints clean, and
its numbers are the published formulas'."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from fabricplan.errors import InputFileError
from fabricplan.lint.baselines.generator import (
    VENDORS,
    BaselineSpec,
    PortGroupSpec,
    SwitchRoleSpec,
    baseline_spec,
    ecn_thresholds_bytes,
    roce_baseline,
)
from fabricplan.lint.checking.linter import lint_files
from fabricplan.lint.headroom import dynamic_threshold_trigger_bytes, sonic_mellanox_headroom
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric


def two_tier(
    speed_gbps: float = 400, host_m: float = 3, uplink_m: float = 30, **extra: object
) -> BaselineSpec:
    leaf = SwitchRoleSpec(
        "leaf",
        8,
        (
            PortGroupSpec("host", 16, speed_gbps, host_m, "hosts"),
            PortGroupSpec("fabric", 16, speed_gbps, uplink_m, "spine"),
        ),
    )
    spine = SwitchRoleSpec("spine", 4, (PortGroupSpec("fabric", 32, speed_gbps, uplink_m, "leaf"),))
    spec = BaselineSpec(
        switch_roles=(leaf, spine), host_speed_gbps=speed_gbps, host_cable_length_m=host_m
    )
    return dataclasses.replace(spec, **extra)  # type: ignore[arg-type]


def lint_generated(tmp_path: Path, files: dict[str, str]) -> list[str]:
    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text)
        if not name.endswith((".md", ".sh")):
            paths.append(path)
    return [f.message for f in lint_files(paths).findings]


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize(
    ("speed", "host_m", "uplink_m", "cnp_priority"),
    [(400, 3, 30, 6), (100, 5, 100, 6), (800, 2, 300, 6), (200, 3, 40, 7)],
)
def test_generated_fabric_lints_clean(
    tmp_path: Path, vendor: str, speed: float, host_m: float, uplink_m: float, cnp_priority: int
) -> None:
    spec = two_tier(speed, host_m, uplink_m, cnp_priority=cnp_priority)
    assert lint_generated(tmp_path, roce_baseline(spec, vendor)) == []


def test_sonic_headroom_is_the_formula_per_class() -> None:
    spec = two_tier(400, 3, 30)
    leaf = json.loads(roce_baseline(spec, "sonic")["sonic-leaf.json"])
    profiles = leaf["BUFFER_PROFILE"]
    for length in (3, 30):
        expected = sonic_mellanox_headroom(400, length, 9100)
        profile = profiles[f"pg_lossless_400000_{length}m_profile"]
        assert int(profile["xoff"]) == expected.xoff_bytes
        assert int(profile["size"]) == expected.xon_bytes + expected.xoff_bytes
    # Each port's PG points at its own class: host ports 3 m, uplinks 30 m.
    assert leaf["BUFFER_PG"]["Ethernet0|3"]["profile"] == "pg_lossless_400000_3m_profile"
    assert leaf["CABLE_LENGTH"]["AZURE"]["Ethernet64"] == "30m"


def test_sonic_pool_is_buffer_minus_reserved_headroom() -> None:
    buffer = 100_000_000
    spec = two_tier(400, 3, 30, buffer_bytes=buffer)
    leaf = json.loads(roce_baseline(spec, "sonic")["sonic-leaf.json"])
    reserved = 16 * sonic_mellanox_headroom(400, 3, 9100).size_bytes + 16 * (
        sonic_mellanox_headroom(400, 30, 9100).size_bytes
    )
    assert int(leaf["BUFFER_POOL"]["ingress_lossless_pool"]["size"]) == buffer - reserved
    assert int(leaf["BUFFER_POOL"]["egress_lossless_pool"]["size"]) == buffer


def test_ecn_scales_with_speed_and_stays_below_pfc() -> None:
    low_400, high_400 = ecn_thresholds_bytes(400)
    assert (low_400, high_400) == (150_000, 1_500_000)
    assert ecn_thresholds_bytes(100) == (low_400 // 4, high_400 // 4)
    assert ecn_thresholds_bytes(800) == (2 * low_400, 2 * high_400)
    # A small buffer pulls the thresholds under half the PFC trigger, keeping min/max = 1/10.
    spec = two_tier(400, 3, 30, buffer_bytes=10_000_000)
    leaf = json.loads(roce_baseline(spec, "sonic")["sonic-leaf.json"])
    pool = int(leaf["BUFFER_POOL"]["ingress_lossless_pool"]["size"])
    wred = leaf["WRED_PROFILE"]["ROCE_LOSSLESS_400G"]
    trigger = dynamic_threshold_trigger_bytes(pool, 0)
    assert int(wred["green_max_threshold"]) <= trigger / 2
    assert int(wred["green_min_threshold"]) * 10 == pytest.approx(
        int(wred["green_max_threshold"]), abs=10
    )


def test_other_vendor_cnp_priority_is_followed_by_the_switches() -> None:
    spec = two_tier(cnp_priority=7)
    eos = roce_baseline(spec, "eos")["eos-leaf.cfg"]
    assert "qos map dscp 48 to traffic-class 7" in eos
    assert "   uc-tx-queue 7\n      priority strict" in eos


def test_headroom_that_does_not_fit_is_an_input_error() -> None:
    with pytest.raises(InputFileError) as info:
        roce_baseline(two_tier(buffer_bytes=1_000_000), "sonic")
    assert info.value.code == "FP423"
    with pytest.raises(InputFileError) as unknown:
        roce_baseline(two_tier(), "junos")
    assert unknown.value.code == "FP421"


def test_baseline_spec_follows_the_design() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 2048},
            "fabric": {
                "technologies": ["roce_v2"],
                "cable_reach": {"node_leaf_m": 3, "leaf_spine_m": 50},
            },
        }
    )
    design = design_fabric(valid, "roce_v2")
    spec = baseline_spec(valid, design)
    by_name = {role.name: role for role in spec.switch_roles}
    for tier in design.tier_designs:
        role = by_name[tier.name]
        assert role.count == tier.switches
        assert sum(g.count for g in role.port_groups) == tier.down_ports + tier.up_ports
    leaf_host = by_name["leaf"].port_groups[0]
    node_leaf = next(g for g in design.link_groups if g.name == "node_leaf")
    assert (leaf_host.facing, leaf_host.speed_gbps, leaf_host.cable_length_m) == (
        "host",
        node_leaf.speed_gbps,
        node_leaf.reach_m,
    )
    nic = valid.nics["roce_v2"]
    assert (spec.cnp_dscp, spec.cnp_priority) == (nic.cnp_dscp, nic.cnp_priority)
