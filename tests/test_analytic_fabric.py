"""Fabric profile, link goodput, path latency and where traffic crosses tiers (on the tiny
hand-built fabrics of ``tests/fabrics.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.analytic.profile import (
    FabricProfile,
    fabric_profile,
    goodput_gbps,
    path_latency_ns,
    wire_bytes,
)
from fabricplan.analytic.traffic import (
    CommGroup,
    all_to_all_pattern,
    group_for,
    pair_pattern,
    pattern_throughput,
    ring_pattern,
    span_switch_hops,
)
from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabrics import cluster_scenario, designed_leaf_spine, designed_three_tier


def profile_of(valid: ValidScenario, design: FabricDesign, **request: Any) -> FabricProfile:
    return fabric_profile(valid, design, PerfRequest(**request))


# --- link goodput and latency ---------------------------------------------------------------


def test_goodput_is_payload_share_of_each_packet() -> None:
    # A 4096 B payload carrying 26 B of IB headers: 4096 of every 4122 bytes are data.
    assert goodput_gbps(400, 4096, 26) == pytest.approx(400 * 4096 / 4122)
    # RoCEv2's 82 B (preamble, Ethernet, IP, UDP, BTH, ICRC, FCS, gap) cost more per packet.
    assert goodput_gbps(400, 4096, 82) < goodput_gbps(400, 4096, 26)
    # The measured 100GbE RoCE ib_write_bw at MTU 1024 (92.4 Gb/s) is this bound.
    assert goodput_gbps(100, 1024, 82) == pytest.approx(92.59, abs=0.01)


def test_wire_bytes_count_one_header_per_packet() -> None:
    assert wire_bytes(1, 4096, 26) == 27
    assert wire_bytes(4096, 4096, 26) == 4096 + 26
    assert wire_bytes(4097, 4096, 26) == 4097 + 2 * 26


@pytest.mark.parametrize("hops", [1, 3, 5])
def test_path_latency_is_the_sum_of_its_parts(hops: int) -> None:
    valid = cluster_scenario()
    design = designed_three_tier(valid, "roce_v2")
    profile = fabric_profile(valid, design)
    nic_ns = valid.nics["roce_v2"].latency_ns.value
    switch_ns = valid.switches["roce_v2"].latency_ns.value
    ns_per_m = {c.id: c.ns_per_m.value for c in valid.cables}
    reach = valid.spec.fabric.cable_reach
    cables = 2 * reach.node_leaf_m * ns_per_m["acc-400g"]
    if hops >= 3:
        cables += 2 * reach.leaf_spine_m * ns_per_m["aoc-400g"]
    if hops >= 5:
        cables += 2 * reach.spine_core_m * ns_per_m["optic-400g-dr4"]
    size = 2
    header = valid.technologies["roce_v2"].header_bytes.value
    serialization = (size + header) * 8 / 400  # one packet, cut-through: serialised once
    expected = 2 * nic_ns + hops * switch_ns + cables + serialization
    assert path_latency_ns(profile, hops, size) == pytest.approx(expected)


def test_calibrated_latencies_replace_the_catalog() -> None:
    valid = cluster_scenario()
    design = designed_leaf_spine(valid)
    base = fabric_profile(valid, design)
    calibrated = profile_of(
        valid, design, calibration={"nic_latency_ns": 1000.0, "switch_latency_ns": 500.0}
    )
    delta = path_latency_ns(calibrated, 3, 2) - path_latency_ns(base, 3, 2)
    expected = 2 * (1000 - base.nic_latency_ns) + 3 * (500 - base.switch_latency_ns)
    assert delta == pytest.approx(expected)


def test_nic_efficiency_scales_goodput() -> None:
    valid = cluster_scenario()
    design = designed_leaf_spine(valid)
    base = fabric_profile(valid, design)
    slower = profile_of(valid, design, calibration={"nic_bw_efficiency": 0.8})
    assert slower.nic_goodput_GBps == pytest.approx(0.8 * base.nic_goodput_GBps)


# --- geometry ----------------------------------------------------------------------------------


def test_rail_aligned_leaf_holds_one_rail_of_a_whole_unit() -> None:
    valid = cluster_scenario()
    rail = fabric_profile(valid, designed_leaf_spine(valid, hosts_per_leaf=32, rail_aligned=True))
    fat = fabric_profile(valid, designed_leaf_spine(valid, hosts_per_leaf=32, rail_aligned=False))
    assert rail.nodes_per_leaf == 32 and rail.ports_per_leaf_per_node == 1
    assert fat.nodes_per_leaf == 32 / 8 and fat.ports_per_leaf_per_node == 8


def test_pod_size_of_a_three_tier_rail_optimized_fabric() -> None:
    valid = cluster_scenario(gpus=16384)
    profile = fabric_profile(valid, designed_three_tier(valid))
    # 32 leaves per pod over 8 rails = 4 scalable units of 32 nodes.
    assert profile.nodes_per_pod == 4 * 32


def test_switch_hops_by_span() -> None:
    valid = cluster_scenario(gpus=16384)
    profile = fabric_profile(valid, designed_three_tier(valid))
    assert span_switch_hops(profile, 2) == 1
    assert span_switch_hops(profile, 64) == 3
    assert span_switch_hops(profile, 1024) == 5


# --- where traffic goes ------------------------------------------------------------------------


def test_ring_leaves_a_leaf_once_per_leaf() -> None:
    pattern = ring_pattern(128, 1, nodes_per_leaf=32, nodes_per_pod=128)
    assert pattern.leaf_share == 4 / 128  # 4 leaves: 4 of 128 ring hops cross a spine
    assert pattern.pod_share == 0


def test_all_to_all_share_leaving_the_leaf() -> None:
    group = CommGroup(ranks=64 * 8, local_ranks=8, gpus_per_node=8)
    pattern = all_to_all_pattern(group, 8, nodes_per_leaf=32, nodes_per_pod=64)
    # Every node sends to 63 others; 31 share its leaf, 32 do not.
    assert pattern.leaf_share == pytest.approx(32 / 63)
    assert pattern.flows_per_nic == 8 * (512 - 8) / 8


def test_two_to_one_oversubscription_halves_cross_leaf_bandwidth() -> None:
    valid = cluster_scenario()
    flat = fabric_profile(valid, designed_leaf_spine(valid, "infiniband", leaf_up=32))
    over = fabric_profile(valid, designed_leaf_spine(valid, "infiniband", leaf_up=16))
    assert over.routing == "adaptive"  # no collisions: only capacity limits
    # Every NIC sends to a node under another leaf: all traffic crosses the spines.
    crossing = pair_pattern(64, flat.nodes_per_leaf, flat.nodes_per_pod)
    assert crossing.leaf_share == 1
    assert pattern_throughput(flat, crossing, 128) == 1.0
    assert pattern_throughput(over, crossing, 128) == pytest.approx(0.5)


def test_ecmp_collisions_come_on_top_of_oversubscription() -> None:
    valid = cluster_scenario()
    flat = fabric_profile(valid, designed_leaf_spine(valid, "roce_v2", leaf_up=32))
    over = fabric_profile(valid, designed_leaf_spine(valid, "roce_v2", leaf_up=16))
    assert over.routing == "ecmp"
    crossing = pair_pattern(64, flat.nodes_per_leaf, flat.nodes_per_pod)
    assert pattern_throughput(flat, crossing, 128) < 1.0
    assert pattern_throughput(over, crossing, 128) < 0.5


def test_traffic_that_stays_under_the_leaf_ignores_oversubscription() -> None:
    valid = cluster_scenario()
    over = fabric_profile(valid, designed_leaf_spine(valid, leaf_up=16))
    same_leaf = ring_pattern(16, 1, nodes_per_leaf=32, nodes_per_pod=128)
    assert pattern_throughput(over, same_leaf, 16) == 1.0


def test_group_for_checks_the_sub_group() -> None:
    valid = cluster_scenario()
    profile = fabric_profile(valid, designed_leaf_spine(valid))
    assert group_for(profile, 8).domains == 1
    assert group_for(profile, 16).domains == 2
    assert group_for(profile, None).ranks == 1024
    with pytest.raises(ModelError) as too_many:
        group_for(profile, 2048)
    assert too_many.value.code == "FP504"
    with pytest.raises(ModelError) as uneven:
        group_for(profile, 12)
    assert uneven.value.code == "FP505"
