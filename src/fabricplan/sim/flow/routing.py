"""Paths of flows as each routing mechanism picks them, and the resources the solver shares.

- ``static`` and ``ecmp``: the pinned paths both levels share (:mod:`fabricplan.sim.path`).
- ``adaptive`` and ``spray``: the flow is split over all its equal-cost paths in the
  proportions that balance the load, so each *trunk* (all the uplinks of a leaf, all the links
  into a leaf, ...) acts as one pooled resource. Per-packet spraying equals that ideal split on
  a symmetric fabric; a real adaptive-routing implementation delivers only a share of a
  multi-link trunk (``adaptive_efficiency``, :func:`fabricplan.sim.mechanism.
  adaptive_routing_of`): its switches choose from their own queues and packets still meet on
  the fixed way down (see docs/models.md).

A pinned flow keeps its path for its whole life.

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
from fabricplan.topology.graph import FabricGraph
from fabricplan.topology.routing import route, trunk_route
from fabricplan.units import gbps_to_bytes_per_us

__all__ = ["ResourceSet", "bytes_per_us", "flow_keys", "flow_paths", "resources_for"]


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
    graph: FabricGraph, routing: RoutingName, payload_share: float, adaptive_efficiency: float = 1.0
) -> ResourceSet:
    """The resources of ``graph`` under ``routing``, with payload capacities.

    Under pooled routing a trunk of several links (a choice of paths) offers
    ``adaptive_efficiency`` of its capacity; a single-link trunk (a host link) offers all of it.
    """
    live = np.where(graph.link_alive, graph.link_speed_gbps, 0.0)
    if routing in ("adaptive", "spray"):
        trunk = graph.trunk_of_link.astype(np.int64)
        links_per_trunk = np.bincount(trunk, minlength=graph.trunks)
        efficiency = np.where(links_per_trunk > 1, adaptive_efficiency, 1.0)
        cap_gbps = graph.trunk_capacity_gbps()
        share = np.divide(live, cap_gbps[trunk], out=np.zeros_like(live), where=cap_gbps[trunk] > 0)
        usable = bytes_per_us(cap_gbps * efficiency) * payload_share
        return ResourceSet(True, usable, trunk, share)
    return ResourceSet(
        False,
        bytes_per_us(live) * payload_share,
        np.arange(graph.links, dtype=np.int64),
        np.ones(graph.links),
    )


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
    if routing == "static" or routing == "ecmp":
        links = pinned_paths(graph, routing, src, dst, flow_id, seed)
        return links, links
    return trunk_route(graph, src, dst), route(graph, src, dst, "dmodk")
