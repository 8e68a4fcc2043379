"""Tiny named fabrics every test builds on, by hand from the FabricDesign semantics (not by
the designer), so that a model is tested on a design whose every number is known here.

Two families:

- designed fabrics of H100 nodes with 8 x 400G NICs for the analytic models:
  :func:`cluster_scenario`, :func:`designed_leaf_spine`, :func:`designed_three_tier`;
- small graphs of single-NIC hosts on generic 100G switches for the graph and the simulators:
  :func:`port_scenario`, :func:`leaf_spine_graph`, :func:`k_ary_fat_tree`, with the traffic
  cases both simulation levels' tests share (:func:`one_gpu_per_node`,
  :func:`victim_beside_incast`).

And the golden designs the exports are checked on, made by the designer itself
(:data:`GOLDEN`, :func:`golden`, :func:`plan_of`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from fabricplan.model.fabric import FabricDesign, LinkGroup, TierDesign
from fabricplan.model.scenario import TechnologyName, TopologyName, ValidScenario
from fabricplan.sim.packet.network import PacketNetwork, network_from_graph
from fabricplan.sim.packet.spec import PacketSpec, packet_spec
from fabricplan.sim.traffic import GpuLayout, StepSpec, Traffic, combine, gpu_flows
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import FabricGraph, fabric_graph

if TYPE_CHECKING:
    from fabricplan.export.cabling import CablingPlan

# --- designed fabrics for the analytic models ---------------------------------------------

RADIX = 64


def cluster_scenario(gpus: int = 1024, **sections: dict[str, Any]) -> ValidScenario:
    """A resolved spec of H100 nodes with 8 x 400G NICs; ``sections`` add spec sections."""
    return parse_spec({"cluster": {"gpus": gpus}, **sections})


def designed_leaf_spine(
    valid: ValidScenario,
    technology: TechnologyName = "infiniband",
    *,
    hosts_per_leaf: int = 32,
    leaf_up: int = 32,
    rail_aligned: bool = True,
    planes: int = 1,
) -> FabricDesign:
    """A two-tier leaf-spine plane: ``hosts_per_leaf`` down, ``leaf_up`` up per leaf."""
    cluster = valid.spec.cluster
    ports = cluster.nodes * cluster.nics_per_node
    leaves = -(-ports // hosts_per_leaf)
    spines = max(1, leaves * leaf_up // RADIX)
    return FabricDesign(
        technology=technology,
        topology="rail_optimized" if rail_aligned else "fat_tree",
        switch_id=valid.switches[technology].id,
        port_speed_gbps=cluster.nic_speed_gbps,
        radix=RADIX,
        tiers=2,
        planes=planes,
        spine_groups=1,
        nodes=cluster.nodes,
        gpus=cluster.gpus,
        endpoints=ports,
        hosts_per_leaf=hosts_per_leaf,
        leaves_per_pod=leaves,
        rail_aligned=rail_aligned,
        tier_designs=(
            TierDesign(
                name="leaf",
                switches=leaves,
                radix=RADIX,
                down_ports=hosts_per_leaf,
                up_ports=leaf_up,
                ports_used=hosts_per_leaf + leaf_up,
                ports_free=RADIX - hosts_per_leaf - leaf_up,
            ),
            TierDesign(
                name="spine",
                switches=spines,
                radix=RADIX,
                down_ports=RADIX,
                up_ports=0,
                ports_used=RADIX,
                ports_free=0,
            ),
        ),
        link_groups=(
            LinkGroup(
                name="node_leaf", count=ports, speed_gbps=400, reach_m=3, cable_id="acc-400g"
            ),
            LinkGroup(
                name="leaf_spine",
                count=leaves * leaf_up,
                speed_gbps=400,
                reach_m=30,
                cable_id="aoc-400g",
            ),
        ),
        bisection_tbps=1.0,
        worst_case_switch_hops=3,
        max_endpoints=RADIX**2 // 2,
        headroom_gpus=0,
    )


def designed_three_tier(
    valid: ValidScenario, technology: TechnologyName = "infiniband"
) -> FabricDesign:
    """A non-blocking three-tier rail-optimized fabric: 32 hosts and 32 uplinks per leaf,
    32 leaves per pod (4 scalable units of 8 rails)."""
    base = designed_leaf_spine(valid, technology)
    cluster = valid.spec.cluster
    leaves = base.tier_designs[0].switches
    return base.model_copy(
        update={
            "tiers": 3,
            "leaves_per_pod": 32,
            "worst_case_switch_hops": 5,
            "tier_designs": (
                base.tier_designs[0],
                TierDesign(
                    name="spine",
                    switches=leaves,
                    radix=RADIX,
                    down_ports=32,
                    up_ports=32,
                    ports_used=RADIX,
                    ports_free=0,
                ),
                TierDesign(
                    name="core",
                    switches=leaves // 2,
                    radix=RADIX,
                    down_ports=RADIX,
                    up_ports=0,
                    ports_used=RADIX,
                    ports_free=0,
                ),
            ),
            "link_groups": (
                *base.link_groups,
                LinkGroup(
                    name="spine_core",
                    count=leaves * 32,
                    speed_gbps=400,
                    reach_m=100,
                    cable_id="optic-400g-dr4",
                ),
            ),
            "nodes": cluster.nodes,
        }
    )


# --- small graphs for the graph and the simulators -------------------------------------------

SPEED_GBPS = 100.0


def port_scenario(
    hosts: int,
    radix: int,
    tech: TechnologyName = "infiniband",
    gpus_per_node: int = 1,
    nics_per_node: int = 1,
    topology: TopologyName = "fat_tree",
    fabric: dict[str, Any] | None = None,
) -> ValidScenario:
    """A spec of ``hosts`` NIC ports on generic ``radix``-port 100G switches (``fabric``: more
    keys of the spec's ``fabric:``)."""
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
            **(fabric or {}),
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


def leaf_spine_graph(
    leaves: int = 2,
    spines: int = 2,
    hosts_per_leaf: int = 2,
    up_ports: int | None = None,
    tech: TechnologyName = "infiniband",
    fabric: dict[str, Any] | None = None,
) -> tuple[FabricGraph, ValidScenario]:
    """``leaves`` leaves of ``hosts_per_leaf`` hosts, each with ``up_ports`` uplinks (default:
    as many as hosts) spread over ``spines`` spines; one GPU and one NIC per node (``fabric``:
    more keys of the spec's ``fabric:``)."""
    up = hosts_per_leaf if up_ports is None else up_ports
    radix = max(hosts_per_leaf + up, leaves * up // spines)
    valid = port_scenario(leaves * hosts_per_leaf, radix, tech, fabric=fabric)
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
    valid = port_scenario(k**3 // 4, k, tech)
    tiers = (
        _tier("leaf", k * half, k, half, half),
        _tier("spine", k * half, k, half, half),
        _tier("core", half * half, k, k, 0),
    )
    design = _design(valid, tiers, hosts_per_leaf=half, leaves_per_pod=half)
    return fabric_graph(design, valid), valid


# --- traffic cases on the small graphs -----------------------------------------------------

FLOW_BYTES = 1e6
"""One flow's bytes in the shared cases (1 MB: 80 µs at 100 Gb/s)."""


def one_gpu_per_node(hosts: int) -> GpuLayout:
    """GPU ``i`` is host port ``i``: the small graphs' single-NIC hosts."""
    return GpuLayout(gpus=hosts, gpus_per_node=1, nics_per_node=1)


def victim_beside_incast() -> tuple[FabricGraph, Traffic, int]:
    """Four leaves of four hosts, two spines: seven hosts of leaves 1 and 2 send
    :data:`FLOW_BYTES` each to host 0, and host 7 (leaf 1, beside three culprits) sends to
    host 13 (leaf 3, away from the incast); returns the graph, the traffic and the victim's
    flow index (7)."""
    graph, _ = leaf_spine_graph(leaves=4, spines=2, hosts_per_leaf=4)
    layout = one_gpu_per_node(16)
    senders = np.array([4, 5, 6, 8, 9, 10, 11])
    culprits = gpu_flows(
        layout, senders, np.zeros(7, dtype=np.int64), FLOW_BYTES, StepSpec("incast", "incast")
    )
    victim = gpu_flows(
        layout, np.array([7]), np.array([13]), FLOW_BYTES, StepSpec("victim", "victim")
    )
    return graph, combine([culprits, victim]), 7


# --- golden designs the exports are checked on --------------------------------------------

# (name, cluster, fabric): the golden designs of tests/test_golden_designs.py and their kin.
GOLDEN: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "h100-superpod-4su",
        {"gpus": 1016},
        {"technologies": ["infiniband"], "switch": {"infiniband": "qm9700"}},
    ),
    (
        "b200-16su-3tier",
        {"gpus": 4096},
        {"technologies": ["infiniband"], "tiers": 3, "switch": {"infiniband": "qm9700"}},
    ),
    (
        "b300-xdr",
        {"gpus": 576, "nic_speed_gbps": 800},
        {"technologies": ["infiniband"], "switch": {"infiniband": "q3400"}},
    ),
    (
        "deepseek-8-plane",
        {"gpus": 2048},
        {
            "technologies": ["infiniband"],
            "planes": 8,
            "topology": "fat_tree",
            "management_ports": 0,
            "switch": {"infiniband": "qm9700"},
        },
    ),
    (
        "roce-th5-400g",
        {"gpus": 2048},
        {"technologies": ["roce_v2"], "switch": {"roce_v2": "ufispace-s9321-64e"}},
    ),
    ("roce-sn5600-fat-tree", {"gpus": 512}, {"technologies": ["roce_v2"], "topology": "fat_tree"}),
    (
        "roce-fat-tree-free-spine-ports",
        {"gpus": 384},
        {"technologies": ["roce_v2"], "topology": "fat_tree"},
    ),
    ("roce-single-switch", {"gpus": 64}, {"technologies": ["roce_v2"]}),
    (
        "ib-fat-tree-free-spine-ports",
        {"gpus": 384},
        {
            "technologies": ["infiniband"],
            "topology": "fat_tree",
            "switch": {"infiniband": "qm9700"},
        },
    ),
    (
        "roce-per-rail-spines",
        {"gpus": 8192},
        {"technologies": ["roce_v2"], "tiers": 2, "switch": {"roce_v2": "ufispace-s9321-64e"}},
    ),
    # Scheduled fabrics: Jericho3-AI leaves (host and fabric cages) and Ramon3 fabric elements.
    ("ddc-400g-fat-tree", {"gpus": 4096, "nic_speed_gbps": 400}, {"technologies": ["ddc"]}),
    ("ddc-800g", {"gpus": 1024, "nic_speed_gbps": 800}, {"technologies": ["ddc"]}),
]


def golden(name: str) -> tuple[ValidScenario, FabricDesign]:
    """The scenario and the designed fabric of the :data:`GOLDEN` case ``name``."""
    _, cluster, fabric = next(g for g in GOLDEN if g[0] == name)
    valid = parse_spec({"cluster": cluster, "fabric": fabric})
    return valid, design_fabric(valid, fabric["technologies"][0])


def plan_of(name: str) -> tuple[ValidScenario, CablingPlan]:
    """The scenario and the cabling plan of the :data:`GOLDEN` case ``name``."""
    from fabricplan.export.cabling import cabling_plan

    valid, design = golden(name)
    return valid, cabling_plan(design, valid)


def custom_flows(src: list[int], dst: list[int], size: float) -> Traffic:
    """One flow of ``size`` bytes from each ``src`` host to its ``dst``, all at time 0."""
    n = len(src)
    return Traffic(
        src=np.array(src, dtype=np.int64),
        dst=np.array(dst, dtype=np.int64),
        size_bytes=np.full(n, float(size)),
        step=np.zeros(n, dtype=np.int64),
        offset_us=np.zeros(n),
        steps=(StepSpec("flows", "custom"),),
    )


PACKET_MTU = 4096
"""Payload bytes per packet of the packet-level test specs."""
PACKET_HEADER = 82
"""Header bytes per packet of the packet-level test specs (RoCEv2 over Ethernet)."""


def lossless_packet_spec(
    fc: str, cc: str, routing: str, delivery: str | None = None, **changes: Any
) -> PacketSpec:
    """:func:`packet_spec` at :data:`PACKET_MTU` with priority 1 lossless, then ``changes``."""
    spec = packet_spec(fc, cc, routing, PACKET_MTU, PACKET_HEADER, delivery)  # type: ignore[arg-type]
    return dataclasses.replace(spec, lossless_classes=(1,), **changes)


def slow_spine_dumbbell() -> PacketNetwork:
    """Two leaves joined through two spines, the way over spine 0 2 µs longer each way."""
    graph, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=2, tech="roce_v2")
    net = network_from_graph(graph, 16e6)
    spine0 = graph.hosts + graph.leaves
    delay = net.link_delay_ns.copy()
    delay[(net.link_src == spine0) | (net.link_dst == spine0)] += 2000.0
    return dataclasses.replace(net, link_delay_ns=delay, _cache={})
