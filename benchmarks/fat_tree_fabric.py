"""The small fat trees the scale benchmarks run on, built once here.

A fat tree of ``ports``-port switches at ``speed_gbps`` for ``hosts`` single-NIC hosts, RoCEv2,
no management ports: two tiers while ``ports² / 2`` hosts fit, three beyond (the k-ary fat
tree's ``k³ / 4``). The benchmarks that use it (packet_scale, forwarding_scale, flow_growth,
htsim_pair, packet_yardstick) differ only in the ports, the switch buffer and whether every
link is set to one delay (the htsim and ns-3 scenarios' 1 µs links).

    from fat_tree_fabric import fat_tree_graph, fat_tree_network
"""

from __future__ import annotations

import dataclasses

import numpy as np

from fabricplan.model.scenario import ValidScenario
from fabricplan.sim.packet.network import PacketNetwork, network_from_graph
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import FabricGraph, fabric_graph

SPEED_GBPS = 100.0
"""Link speed of the benchmarks' scenarios (htsim's and the HPCC paper's 100 Gb/s)."""


def fat_tree_scenario(
    hosts: int, ports: int, speed_gbps: float = SPEED_GBPS, tiers: int | None = None
) -> ValidScenario:
    """The validated scenario: ``hosts`` GPUs with one NIC each, a RoCEv2 fat tree of generic
    ``ports``-port switches (``tiers``: 2 while ``ports² / 2`` hosts fit, else 3)."""
    if tiers is None:
        tiers = 2 if hosts <= ports * ports // 2 else 3
    return parse_spec(
        {
            "cluster": {
                "gpus": hosts,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": speed_gbps,
                "nic": {"speed_gbps": speed_gbps},
            },
            "fabric": {
                "technologies": ["roce_v2"],
                "topology": "fat_tree",
                "tiers": tiers,
                "management_ports": 0,
                "switch": {"roce_v2": {"ports": ports, "port_speed_gbps": speed_gbps}},
            },
        }
    )


def fat_tree_graph(
    hosts: int, ports: int, speed_gbps: float = SPEED_GBPS, tiers: int | None = None
) -> tuple[FabricGraph, ValidScenario]:
    """The designed fat tree's graph and its scenario (:func:`fat_tree_scenario`)."""
    valid = fat_tree_scenario(hosts, ports, speed_gbps, tiers)
    return fabric_graph(design_fabric(valid, "roce_v2"), valid), valid


def fat_tree_network(
    hosts: int,
    ports: int,
    buffer_bytes: float,
    link_delay_ns: float | None = None,
    speed_gbps: float = SPEED_GBPS,
    tiers: int | None = None,
) -> PacketNetwork:
    """The packet level's network of :func:`fat_tree_graph` with ``buffer_bytes`` per switch;
    ``link_delay_ns`` on every link when given (else the designed cables' delays)."""
    graph, _ = fat_tree_graph(hosts, ports, speed_gbps, tiers)
    net = network_from_graph(graph, buffer_bytes)
    if link_delay_ns is None:
        return net
    return dataclasses.replace(net, link_delay_ns=np.full(net.links, link_delay_ns), _cache={})
