"""Tiny named fabrics for the graph and flow-simulator tests, built by hand from the shared
FabricDesign semantics (not by the designer), and checks that they expand as drawn."""

from __future__ import annotations

from typing import Any

import numpy as np

from fabricplan.model.fabric import FabricDesign, LinkGroup, TierDesign
from fabricplan.model.scenario import TechnologyName, TopologyName, ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.graph import FabricGraph, fabric_graph

SPEED_GBPS = 100.0


def scenario(
    hosts: int,
    radix: int,
    tech: TechnologyName = "infiniband",
    gpus_per_node: int = 1,
    nics_per_node: int = 1,
    topology: TopologyName = "fat_tree",
) -> ValidScenario:
    """A spec of ``hosts`` NIC ports on generic ``radix``-port 100G switches."""
    spec: dict[str, Any] = {
        "cluster": {
            "gpus": hosts // nics_per_node * gpus_per_node,
            "gpus_per_node": gpus_per_node,
            "nics_per_node": nics_per_node,
            "nic_speed_gbps": SPEED_GBPS,
            "nic": {"speed_gbps": SPEED_GBPS, "latency_ns": 600},
        },
        "fabric": {
            "technologies": [tech],
            "topology": topology,
            "switch": {tech: {"ports": radix, "port_speed_gbps": SPEED_GBPS, "latency_ns": 300}},
        },
    }
    return parse_spec(spec)


def _tier(name: Any, switches: int, radix: int, down: int, up: int) -> TierDesign:
    used = switches * (down + up)
    return TierDesign(
        name=name,
        switches=switches,
        radix=radix,
        down_ports=down,
        up_ports=up,
        ports_used=used,
        ports_free=switches * radix - used,
    )


def _design(valid: ValidScenario, tiers: tuple[TierDesign, ...], **fields: Any) -> FabricDesign:
    tech = valid.spec.fabric.technologies[0]
    hosts = valid.spec.cluster.endpoints
    groups = [
        LinkGroup(
            name="node_leaf", count=hosts, speed_gbps=SPEED_GBPS, reach_m=3.0, cable_id="none"
        )
    ]
    base: dict[str, Any] = {
        "technology": tech,
        "topology": valid.spec.fabric.topology,
        "switch_id": valid.switches[tech].id,
        "port_speed_gbps": SPEED_GBPS,
        "radix": tiers[0].radix,
        "tiers": len(tiers),
        "planes": 1,
        "spine_groups": 1,
        "nodes": valid.spec.cluster.nodes,
        "gpus": valid.spec.cluster.gpus,
        "endpoints": hosts,
        "rail_aligned": False,
        "tier_designs": tiers,
        "link_groups": tuple(groups),
        "bisection_tbps": 0.0,
        "worst_case_switch_hops": 2 * len(tiers) - 1,
        "max_endpoints": hosts,
        "headroom_gpus": 0,
    }
    base.update(fields)
    return FabricDesign(**base)


def leaf_spine(
    leaves: int = 2,
    spines: int = 2,
    hosts_per_leaf: int = 2,
    up_ports: int | None = None,
    tech: TechnologyName = "infiniband",
) -> tuple[FabricGraph, ValidScenario]:
    """``leaves`` leaves of ``hosts_per_leaf`` hosts, each with ``up_ports`` uplinks (default:
    as many as hosts) spread over ``spines`` spines; one GPU and one NIC per node."""
    up = hosts_per_leaf if up_ports is None else up_ports
    radix = max(hosts_per_leaf + up, leaves * up // spines)
    valid = scenario(leaves * hosts_per_leaf, radix, tech)
    tiers = (
        _tier("leaf", leaves, radix, hosts_per_leaf, up),
        _tier("spine", spines, radix, leaves * up // spines, 0),
    )
    design = _design(valid, tiers, hosts_per_leaf=hosts_per_leaf, leaves_per_pod=leaves)
    return fabric_graph(design, valid), valid


def k_ary_fat_tree(
    k: int = 4, tech: TechnologyName = "infiniband"
) -> tuple[FabricGraph, ValidScenario]:
    """The k-ary fat tree of Al-Fares et al. (SIGCOMM 2008): k pods of k/2 edge and k/2
    aggregation switches, (k/2)^2 cores, k^3/4 hosts."""
    half = k // 2
    valid = scenario(k**3 // 4, k, tech)
    tiers = (
        _tier("leaf", k * half, k, half, half),
        _tier("spine", k * half, k, half, half),
        _tier("core", half * half, k, k, 0),
    )
    design = _design(valid, tiers, hosts_per_leaf=half, leaves_per_pod=half)
    return fabric_graph(design, valid), valid


def test_leaf_spine_has_every_cable_twice() -> None:
    graph, _ = leaf_spine(leaves=2, spines=2, hosts_per_leaf=2)
    # 4 host cables + 2 leaves x 2 uplinks, each in both directions.
    assert graph.links == 2 * (4 + 4)
    assert (graph.link_reverse[graph.link_reverse] == np.arange(graph.links)).all()
    assert (graph.link_src[graph.link_reverse] == graph.link_dst).all()


def test_k4_fat_tree_counts_match_al_fares() -> None:
    graph, _ = k_ary_fat_tree(4)
    assert (graph.hosts, graph.leaves, graph.spines, graph.cores) == (16, 8, 8, 4)
    assert (graph.pods, graph.spines_per_pod, graph.cores_per_group) == (4, 2, 2)
    # Every switch uses all k=4 ports: count directed links leaving each switch.
    out_degree = np.bincount(graph.link_src, minlength=graph.vertices)[graph.hosts :]
    assert (out_degree == 4).all()
