"""Adaptive routing on a flowlet ASIC (Tomahawk's DLB) at the three levels.

A Tomahawk switch routes adaptively per flowlet: a flow moves to another path only after an idle
gap longer than the DLB inactivity timer (256 µs, :mod:`fabricplan.model.load_balancing`). An
NCCL flow streams without such a gap, so it is one flowlet, placed once, and collides like an
ECMP flow. The analytic level hashes it (``analytic/traffic.per_packet_routing`` is false), the
packet level switches flowlets on the timer, and the flow level pins it on ECMP's path
(:func:`fabricplan.sim.mechanism.placed_routing`). The catalog's Tomahawk 5 box is
``ufispace-s9321-64e``, which a spec picks with ``fabric.switch: {roce_v2: ufispace-s9321-64e}``;
the tiny fabrics here keep their generic 100G switches and name that ASIC on them.
"""

from __future__ import annotations

import dataclasses

import pytest

from fabricplan.backends import get_backend
from fabricplan.catalog.loader import load_catalog
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.model.results import PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.transport import transport_for, with_go_back_n
from fabricplan.sim.mechanism import adaptive_routing_of
from fabricplan.sim.packet.spec import packet_spec_for
from fabricplan.sim.traffic import GpuLayout, permutation
from fabricplan.topology.designer import design_fabric
from fabrics import leaf_spine_graph, port_scenario

TOMAHAWK = "ufispace-s9321-64e"


def _with_tomahawk_asic(valid: ValidScenario) -> ValidScenario:
    """``valid`` with its RoCE switch's ASIC named Tomahawk 5 (its figures kept)."""
    switch = valid.switches["roce_v2"].model_copy(update={"asic": "Tomahawk 5"})
    return valid.model_copy(update={"switches": {**valid.switches, "roce_v2": switch}})


def test_the_catalog_tomahawk_routes_adaptively_per_flowlet_at_both_simulators() -> None:
    catalog = load_catalog()
    tech = catalog.get_typed("roce_v2", TechnologySpec)
    tomahawk = catalog.get_typed(TOMAHAWK, SwitchSpec)
    assert tomahawk.adaptive_routing and adaptive_routing_of(tomahawk).granularity == "flowlet"
    flow = transport_for(tech, tomahawk, routing="adaptive")
    packet = packet_spec_for(tech, tomahawk, routing="adaptive")
    assert flow.routing == packet.routing == "flowlet"
    # Nothing of per-packet adaptive routing is left at the flow level: no partial win-back
    # of a pooled trunk and no go-back-N (the flows keep their order).
    assert flow.adaptive_recovery == 1.0
    assert with_go_back_n(flow, *_tiny_graph_and_frame()) == flow


def _tiny_graph_and_frame() -> tuple[object, float]:
    graph, valid = leaf_spine_graph(leaves=4, spines=2, hosts_per_leaf=4, tech="roce_v2")
    tech = valid.technologies["roce_v2"]
    return graph, tech.mtu_bytes + tech.header_bytes.value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_permutation_on_a_flowlet_asic_takes_the_ecmp_time_at_the_flow_level(seed: int) -> None:
    # 4 leaves x 4 hosts, 2 spines, 100G: a permutation's flows stream for 4 MiB / 100 Gb/s =
    # 340 µs without a gap, longer than the 256 µs timer but never idle: one flowlet each, so
    # the flow level gives ECMP's hashed paths and ECMP's time to the last microsecond, and not
    # the pooled split of per-packet adaptive routing (with a reordering NIC, so that only the
    # placement differs).
    graph, valid = leaf_spine_graph(leaves=4, spines=2, hosts_per_leaf=4, tech="roce_v2")
    tech, generic = valid.technologies["roce_v2"], valid.switches["roce_v2"]
    tomahawk = _with_tomahawk_asic(valid).switches["roce_v2"]
    traffic = permutation(GpuLayout(graph.hosts, 1, 1), 2**22, seed)

    def run(switch: SwitchSpec, routing: str) -> float:
        t = transport_for(tech, switch, routing=routing, congestion_control="none")  # type: ignore[arg-type]
        return simulate(graph, traffic, t, seed).completion_us

    flowlet, ecmp = run(tomahawk, "adaptive"), run(generic, "ecmp")
    assert flowlet == ecmp
    per_packet = transport_for(tech, generic, routing="adaptive", congestion_control="none")
    split = simulate(graph, traffic, dataclasses.replace(per_packet, delivery="nic_reorder"), seed)
    # Hashing stacks two of a leaf's four flows on one of its two uplinks: ECMP is slower than
    # the split by far more than the packet level's 5 % granularity.
    assert ecmp > split.completion_us * 1.2


FLOWLET_SEEDS = 6
"""Hash draws per level in the three-level comparison."""
SAME_PHYSICS = 0.05
"""Flow against packet on one and the same set of paths (documented agreement within 2 %,
tests/test_levels_agree.py)."""
ANALYTIC_VS_SIMULATED = 0.10
"""The analytic all_to_all against the simulated levels (tests/test_levels_agree.py)."""


def test_the_three_levels_agree_on_an_all_to_all_through_a_flowlet_asic() -> None:
    # 16 single-NIC hosts on generic 8-port 100G switches named Tomahawk 5, asked for adaptive
    # routing: every level hashes each flow onto one path (one flowlet per flow). The flow and
    # the packet level hash with different functions, so a seed's draw is not the same set of
    # paths at both: the packet level's time must lie within the range of the flow level's
    # draws, widened by the levels' agreement on one set of paths (SAME_PHYSICS); the analytic
    # level's expected collisions within that range widened by its own agreement
    # (ANALYTIC_VS_SIMULATED). Per-packet adaptive routing with this in-order RoCE receiver
    # would pay go-back-N at all three levels, far outside both.
    valid = _with_tomahawk_asic(
        port_scenario(16, 8, "roce_v2", fabric={"routing": {"roce_v2": "adaptive"}})
    )
    design = design_fabric(valid, "roce_v2")
    assert design.tiers == 2
    request = PerfRequest(
        collectives=("all_to_all",),
        sizes_bytes=(2**24,),
        p2p=False,
        step=False,
        seeds=FLOWLET_SEEDS,
    )
    results = {
        name: get_backend(name).perform(valid, design, request).collectives[0]
        for name in ("analytic", "flow", "packet")
    }
    flow, packet, analytic = results["flow"], results["packet"], results["analytic"]

    def draws(r: object) -> tuple[float, float]:
        low, high = r.time_us_seed_low, r.time_us_seed_high  # type: ignore[attr-defined]
        assert low is not None and high is not None and low < high  # the draws differ
        return low, high

    flow_low, flow_high = draws(flow)
    packet_low, packet_high = draws(packet)
    assert flow_low * (1 - SAME_PHYSICS) <= packet.time_us <= flow_high * (1 + SAME_PHYSICS)
    assert packet_low * (1 - SAME_PHYSICS) <= flow.time_us <= packet_high * (1 + SAME_PHYSICS)
    low, high = max(flow_low, packet_low), min(flow_high, packet_high)
    assert low * (1 - ANALYTIC_VS_SIMULATED) <= analytic.time_us
    assert analytic.time_us <= high * (1 + ANALYTIC_VS_SIMULATED)
