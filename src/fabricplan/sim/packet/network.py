"""The fabric as the packet simulator sees it: hosts, switches, directed links, next hops.

:func:`network_from_graph` takes the designed fabric (:class:`~fabricplan.topology.graph.
FabricGraph`, the same object the flow level simulates); small builders make the named test
fabrics: :func:`star` (one switch), :func:`dumbbell` (two switches joined by one link) and
:func:`ring` (switches in a cycle, for cyclic buffer dependency). Vertices are hosts first
(``0 .. hosts-1``), then switches.

Equal-cost next hops come from breadth-first distances towards every leaf: from switch ``v``
towards host ``d`` every link to a switch one hop closer to ``d``'s leaf is a choice (what a
fat tree's up-down routing or an ECMP group offers), kept per (switch, leaf) in shared groups
(:mod:`fabricplan.sim.packet.forwarding`).

>>> net = dumbbell(hosts_per_side=2)
>>> net.hosts, net.switches, net.links
(4, 2, 10)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fabricplan.errors import ModelError
from fabricplan.sim.packet.forwarding import ForwardingTable, forwarding_table
from fabricplan.sim.path import flow_keys, round_trip_paths
from fabricplan.topology.graph import FabricGraph
from fabricplan.topology.routing import mix64

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

DEFAULT_SPEED_GBPS = 100.0
DEFAULT_DELAY_NS = 1000.0
DEFAULT_BUFFER_BYTES = 16_000_000
"""Defaults of the small named fabrics (a 100 Gb/s, 1 µs per link, 16 MB switch)."""


@dataclass(frozen=True, eq=False)
class PacketNetwork:
    """Hosts, switches and directed links with speed and delay (see the module docstring)."""

    hosts: int
    switches: int
    link_src: IntArray
    link_dst: IntArray
    link_speed_gbps: FloatArray
    link_delay_ns: FloatArray
    """Propagation plus the forwarding latency of the switch the link leaves (plus the NIC's
    latency on host links)."""
    switch_buffer_bytes: IntArray
    graph: FabricGraph | None = None
    """The designed fabric it came from (its router gives static and ECMP paths)."""
    name: str = ""
    _cache: dict[str, object] = field(default_factory=dict, repr=False)

    @property
    def links(self) -> int:
        return int(self.link_src.size)

    @property
    def vertices(self) -> int:
        return self.hosts + self.switches

    @property
    def link_rev(self) -> IntArray:
        """The opposite direction of each link (links come in pairs)."""
        cached = self._cache.get("rev")
        if cached is None:
            rev = (
                self.graph.link_reverse.astype(np.int64)
                if self.graph is not None and self.graph.links == self.links
                else _reverse_links(self.link_src, self.link_dst, self.vertices)
            )
            self._cache["rev"] = rev
            return rev
        return cached  # type: ignore[return-value]

    @property
    def host_up_link(self) -> IntArray:
        return self._host_links()[0]

    @property
    def host_down_link(self) -> IntArray:
        return self._host_links()[1]

    def _host_links(self) -> tuple[IntArray, IntArray]:
        cached = self._cache.get("host_links")
        if cached is None:
            up = np.full(self.hosts, -1, dtype=np.int64)
            down = np.full(self.hosts, -1, dtype=np.int64)
            from_host = np.flatnonzero(self.link_src < self.hosts)
            to_host = np.flatnonzero(self.link_dst < self.hosts)
            up[self.link_src[from_host]] = from_host
            down[self.link_dst[to_host]] = to_host
            self._cache["host_links"] = (up, down)
            return up, down
        return cached  # type: ignore[return-value]

    def distances(self) -> NDArray[np.float64]:
        """(hosts, vertices) hops from each vertex to each host (inf if none)."""
        cached = self._cache.get("dist")
        if cached is None:
            n = self.vertices
            up = self.link_speed_gbps > 0
            adj = csr_matrix(
                (np.ones(int(up.sum())), (self.link_dst[up], self.link_src[up])), shape=(n, n)
            )
            dist = shortest_path(adj, method="D", unweighted=True, indices=np.arange(self.hosts))
            self._cache["dist"] = dist
            return np.asarray(dist)
        return cached  # type: ignore[return-value]

    def forwarding(self) -> ForwardingTable:
        """Next-hop groups per (switch, destination leaf)
        (:func:`~fabricplan.sim.packet.forwarding.forwarding_table`)."""
        cached = self._cache.get("fib")
        if cached is None:
            table = forwarding_table(self)
            self._cache["fib"] = table
            return table
        return cached  # type: ignore[return-value]

    @property
    def max_hops(self) -> int:
        """Links on the longest shortest path between two hosts."""
        if self.graph is not None:
            return self.graph.max_hops
        dist = self.distances()[:, : self.hosts]
        finite = dist[np.isfinite(dist)]
        return int(finite.max()) if finite.size else 1


def _reverse_links(src: IntArray, dst: IntArray, vertices: int) -> IntArray:
    """Index of the twin ``dst -> src`` of every link ``src -> dst``: the k-th of parallel
    links ``a -> b`` pairs with the k-th ``b -> a`` (a sorted search, no per-link Python).

    >>> _reverse_links(np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), 2).tolist()
    [1, 0, 3, 2]

    Raises
    ------
    ModelError
        FP540 when a link has no opposite direction.
    """
    n = int(src.size)
    pair = src.astype(np.int64) * vertices + dst
    order = np.argsort(pair, kind="stable")
    ranked = pair[order]
    first = np.searchsorted(ranked, ranked, side="left")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - first
    wanted = dst.astype(np.int64) * vertices + src
    at = np.searchsorted(ranked, wanted, side="left") + rank
    ok = at < n
    ok[ok] = ranked[at[ok]] == wanted[ok]
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        raise ModelError(
            "FP540",
            "packet network",
            "a link has no opposite direction",
            (int(src[bad]), int(dst[bad])),
            "give every link its twin (links come in pairs)",
        )
    rev: IntArray = order[at].astype(np.int64)
    return rev


def network_from_graph(graph: FabricGraph, switch_buffer_bytes: float) -> PacketNetwork:
    """The packet view of a designed fabric: its live links, NIC latency on host links.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> net = network_from_graph(g, 64e6)
    >>> net.hosts == g.hosts, net.links == g.links
    (True, True)
    """
    delay = graph.link_latency_ns.copy()
    host_link = (graph.link_src < graph.hosts) | (graph.link_dst < graph.hosts)
    delay[host_link] += graph.nic_latency_ns
    switches = graph.leaves + graph.spines + graph.cores
    return PacketNetwork(
        hosts=graph.hosts,
        switches=switches,
        link_src=graph.link_src.astype(np.int64),
        link_dst=graph.link_dst.astype(np.int64),
        link_speed_gbps=np.where(graph.link_alive, graph.link_speed_gbps, 0.0),
        link_delay_ns=delay,
        switch_buffer_bytes=np.full(switches, int(switch_buffer_bytes), dtype=np.int64),
        graph=graph,
        name=f"{graph.technology} {graph.topology} ({graph.hosts} host ports)",
    )


def _from_edges(
    hosts: int,
    switches: int,
    edges: list[tuple[int, int, float]],
    delay_ns: float,
    buffer_bytes: float,
    name: str,
) -> PacketNetwork:
    src: list[int] = []
    dst: list[int] = []
    speed: list[float] = []
    for a, b, gbps in edges:
        src += [a, b]
        dst += [b, a]
        speed += [gbps, gbps]
    return PacketNetwork(
        hosts=hosts,
        switches=switches,
        link_src=np.array(src, dtype=np.int64),
        link_dst=np.array(dst, dtype=np.int64),
        link_speed_gbps=np.array(speed, dtype=np.float64),
        link_delay_ns=np.full(len(src), float(delay_ns)),
        switch_buffer_bytes=np.full(switches, int(buffer_bytes), dtype=np.int64),
        name=name,
    )


def star(
    hosts: int,
    speed_gbps: float = DEFAULT_SPEED_GBPS,
    delay_ns: float = DEFAULT_DELAY_NS,
    buffer_bytes: float = DEFAULT_BUFFER_BYTES,
) -> PacketNetwork:
    """``hosts`` hosts on one switch.

    >>> star(3).links
    6
    """
    edges = [(h, hosts, speed_gbps) for h in range(hosts)]
    return _from_edges(hosts, 1, edges, delay_ns, buffer_bytes, f"star of {hosts}")


def dumbbell(
    hosts_per_side: int,
    speed_gbps: float = DEFAULT_SPEED_GBPS,
    bottleneck_gbps: float | None = None,
    delay_ns: float = DEFAULT_DELAY_NS,
    buffer_bytes: float = DEFAULT_BUFFER_BYTES,
) -> PacketNetwork:
    """Two switches joined by one link; hosts ``0 .. n-1`` on the left, ``n .. 2n-1`` right.

    >>> net = dumbbell(2, bottleneck_gbps=50.0)
    >>> float(net.link_speed_gbps.min())
    50.0
    """
    n = hosts_per_side
    left, right = 2 * n, 2 * n + 1
    edges = [(h, left, speed_gbps) for h in range(n)]
    edges += [(h, right, speed_gbps) for h in range(n, 2 * n)]
    edges.append((left, right, bottleneck_gbps or speed_gbps))
    return _from_edges(2 * n, 2, edges, delay_ns, buffer_bytes, f"dumbbell {n}+{n}")


def ring(
    switches: int,
    hosts_per_switch: int = 1,
    speed_gbps: float = DEFAULT_SPEED_GBPS,
    delay_ns: float = DEFAULT_DELAY_NS,
    buffer_bytes: float = DEFAULT_BUFFER_BYTES,
) -> PacketNetwork:
    """Switches in a cycle, ``hosts_per_switch`` hosts on each (host ``h`` on switch
    ``h // hosts_per_switch``).

    >>> ring(4).links
    16
    """
    hosts = switches * hosts_per_switch
    edges = [(h, hosts + h // hosts_per_switch, speed_gbps) for h in range(hosts)]
    edges += [(hosts + i, hosts + (i + 1) % switches, speed_gbps) for i in range(switches)]
    return _from_edges(hosts, switches, edges, delay_ns, buffer_bytes, f"ring of {switches}")


def walk_paths(
    net: PacketNetwork, src: IntArray, dst: IntArray, keys: NDArray[np.uint64] | None, salt: int = 0
) -> IntArray:
    """One path per flow along the equal-cost next hops: the first (static) or a hash of the
    flow key and the switch (ECMP). ``(flows, max_hops)`` link ids, -1 padded.

    >>> net = dumbbell(2)
    >>> walk_paths(net, np.array([0]), np.array([3]), None).tolist()
    [[0, 8, 7]]
    """
    table = net.forwarding()
    width = net.max_hops
    n = src.size
    out = np.full((n, width), -1, dtype=np.int64)
    if n == 0:
        return out
    up = net.host_up_link
    out[:, 0] = up[src]
    at = net.link_dst[up[src]]
    done = np.zeros(n, dtype=bool)
    for hop in range(1, width):
        live = ~done & (at >= net.hosts)
        if not live.any():
            break
        idx = np.flatnonzero(live)
        lo, count = table.ranges(at[idx] - net.hosts, dst[idx])
        if (count == 0).any():
            bad = int(idx[np.flatnonzero(count == 0)[0]])
            raise ModelError(
                "FP540",
                "packet routing",
                "no path between two hosts",
                (int(src[bad]), int(dst[bad])),
                "connect the hosts (the network has no route between them)",
            )
        if keys is None:
            pick = np.zeros(idx.size, dtype=np.int64)
        else:
            h = mix64(keys[idx] ^ mix64(at[idx].astype(np.uint64) + np.uint64(salt)))
            pick = (h % count.astype(np.uint64)).astype(np.int64)
        chosen = table.links[lo + pick]
        out[idx, hop] = chosen
        at[idx] = net.link_dst[chosen]
        done[idx] = at[idx] == dst[idx]
    return out


def flow_paths(
    net: PacketNetwork, routing: str, src: IntArray, dst: IntArray, seed: int
) -> tuple[IntArray, IntArray]:
    """Forward and reverse link paths of every flow, padded to ``net.max_hops`` (-1 after the
    last hop): the designed fabric's router (:func:`~fabricplan.sim.path.round_trip_paths`,
    the flow level's paths) or, on a small named fabric, a walk of its forwarding table (the
    first next hop, or the ECMP hash of the flow's 5-tuple).

    >>> net = dumbbell(2)
    >>> fwd, rev = flow_paths(net, "static", np.array([0]), np.array([3]), seed=0)
    >>> fwd.tolist(), rev.tolist()
    ([[0, 8, 7]], [[6, 9, 1]])
    """
    if net.graph is not None:
        fwd, rev = round_trip_paths(net.graph, routing, src, dst, seed)
    else:
        ids = np.arange(src.size, dtype=np.int64)
        hashed = routing == "ecmp"
        fwd = walk_paths(net, src, dst, flow_keys(src, dst, ids, seed) if hashed else None, seed)
        rev = walk_paths(net, dst, src, flow_keys(dst, src, ids, seed) if hashed else None, seed)
    width = max(net.max_hops, fwd.shape[1])
    if fwd.shape[1] < width:
        pad = np.full((src.size, width - fwd.shape[1]), -1, dtype=np.int64)
        fwd, rev = np.hstack([fwd, pad]), np.hstack([rev, pad])
    return fwd, rev
