"""Paths of flows as each routing mechanism picks them, and the resources the solver shares.

- ``static`` and ``ecmp``: the pinned paths both levels share (:mod:`fabricplan.sim.path`).
- ``flowlet``: ECMP re-drawn for every flowlet, a burst after an idle gap longer than the
  switch's flowlet timeout. A flow of the fluid model sends without a gap from its start to its
  end (NCCL keeps a connection's queue pair busy for the whole transfer), so each flow is one
  flowlet and takes ECMP's hashed path; a new flow after a gap is a new draw.
- ``adaptive`` and ``spray``: the flow is split over all its equal-cost paths, so each
  *trunk* (all the uplinks of a leaf, all the links into a leaf, ...) acts as one pooled
  resource. Per-packet (or per-cell) spraying splits every flow evenly over its paths, which
  on a symmetric fabric is the ideal split; a real adaptive-routing implementation wins back
  only part of what uncoordinated placement loses on a multi-link trunk (its switches choose
  from their own queues and packets still meet on the fixed way down), which the fluid model
  applies per trunk (:mod:`fabricplan.sim.flow.adaptive`, docs/models.md).

Host links carry ``payload_share`` of their line rate; switch-to-switch links carry
``fabric_payload_share`` when it differs (a scheduled fabric's cells). A pinned flow keeps its
path for its whole life.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
>>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
>>> net = resources_for(g, "spray", payload_share=1.0)
>>> net.count == g.trunks, net.pooled
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.mechanism import RoutingName
from fabricplan.sim.path import flow_keys, pinned_paths
from fabricplan.topology.graph import LINK_TIERS, FabricGraph
from fabricplan.topology.routing import route, trunk_route
from fabricplan.units import gbps_to_bytes_per_us

__all__ = [
    "POOLED_ROUTINGS",
    "ResourceSet",
    "bytes_per_us",
    "flow_keys",
    "flow_paths",
    "link_payload_share",
    "resources_for",
]


def bytes_per_us(speed_gbps: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """Line rate in bytes per microsecond.

    >>> float(bytes_per_us(400.0))
    50000.0
    """
    # The conversion is linear: scale by the bytes per microsecond of 1 Gb/s.
    return np.asarray(speed_gbps, dtype=np.float64) * gbps_to_bytes_per_us(1.0)


@dataclass(frozen=True, eq=False)
class ResourceSet:
    """What the solver shares: links (pinned routing) or trunks (pooled routing)."""

    pooled: bool
    capacity_bytes_per_us: NDArray[np.float64]
    """Payload capacity of every resource (0 for a dead one)."""
    of_link: NDArray[np.int64]
    """The resource each link belongs to."""
    link_share: NDArray[np.float64]
    """Share of its resource's bytes each link carries (1 for pinned routing)."""

    @property
    def count(self) -> int:
        return int(self.capacity_bytes_per_us.size)


def resources_for(
    graph: FabricGraph,
    routing: RoutingName,
    payload_share: float,
    adaptive_efficiency: float = 1.0,
    fabric_payload_share: float | None = None,
) -> ResourceSet:
    """The resources of ``graph`` under ``routing``, with payload capacities.

    Under pooled routing a trunk of several links (a choice of paths) offers
    ``adaptive_efficiency`` of its capacity (the flow level passes 1 and applies a real
    implementation per trunk, :mod:`fabricplan.sim.flow.adaptive`); a single-link trunk (a host
    link) offers all of it.
    Switch-to-switch links carry ``fabric_payload_share`` of their rate (default
    ``payload_share``).
    """
    live = np.where(graph.link_alive, graph.link_speed_gbps, 0.0)
    link_payload = link_payload_share(graph, payload_share, fabric_payload_share)
    if routing in POOLED_ROUTINGS:
        trunk = graph.trunk_of_link.astype(np.int64)
        links_per_trunk = np.bincount(trunk, minlength=graph.trunks)
        efficiency = np.where(links_per_trunk > 1, adaptive_efficiency, 1.0)
        cap_gbps = graph.trunk_capacity_gbps()
        share = np.divide(live, cap_gbps[trunk], out=np.zeros_like(live), where=cap_gbps[trunk] > 0)
        trunk_payload = np.ones(graph.trunks)
        trunk_payload[trunk] = link_payload  # a trunk's links are all of one tier
        usable = bytes_per_us(cap_gbps * efficiency) * trunk_payload
        return ResourceSet(True, usable, trunk, share)
    return ResourceSet(
        False,
        bytes_per_us(live) * link_payload,
        np.arange(graph.links, dtype=np.int64),
        np.ones(graph.links),
    )


POOLED_ROUTINGS: tuple[RoutingName, ...] = ("adaptive", "spray")
"""Routings that split a flow over all its equal-cost paths (a pooled trunk per resource)."""
HOST_TIERS = ("node_to_leaf", "leaf_to_node")


def link_payload_share(
    graph: FabricGraph, payload_share: float, fabric_payload_share: float | None = None
) -> NDArray[np.float64]:
    """Payload share of every link: ``payload_share`` on host links, ``fabric_payload_share``
    (default the same) between switches."""
    host = np.isin(graph.link_tier, [LINK_TIERS.index(t) for t in HOST_TIERS])
    fabric = payload_share if fabric_payload_share is None else fabric_payload_share
    return np.where(host, payload_share, fabric).astype(np.float64)


def flow_paths(
    graph: FabricGraph,
    routing: RoutingName,
    src: NDArray[np.int64],
    dst: NDArray[np.int64],
    flow_id: NDArray[np.int64],
    seed: int,
) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """(resource path, link path) of each flow; for pooled routing the link path is the
    D-mod-K one, used only for its latency (every equal-cost path is as long)."""
    if routing == "static":
        links = pinned_paths(graph, "static", src, dst, flow_id, seed)
        return links, links
    if routing == "ecmp" or routing == "flowlet":
        links = pinned_paths(graph, "ecmp", src, dst, flow_id, seed)
        return links, links
    return trunk_route(graph, src, dst), route(graph, src, dst, "dmodk")
