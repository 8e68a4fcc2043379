"""The fabric as the packet simulator sees it: hosts, switches, directed links, next hops.

:func:`network_from_graph` takes the designed fabric (:class:`~fabricplan.topology.graph.
FabricGraph`, the same object the flow level simulates); small builders make the named test
fabrics: :func:`star` (one switch), :func:`dumbbell` (two switches joined by one link) and
:func:`ring` (switches in a cycle, for cyclic buffer dependency). Vertices are hosts first
(``0 .. hosts-1``), then switches.

Equal-cost next hops come from breadth-first distances to every host: from switch ``v``
towards host ``d`` every link to a vertex one hop closer to ``d`` is a choice (what a fat
tree's up-down routing or an ECMP group offers).

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
            index = {
                (int(a), int(b)): i
                for i, (a, b) in enumerate(zip(self.link_src, self.link_dst, strict=True))
            }
            rev = np.array(
                [
                    index[(int(b), int(a))]
                    for a, b in zip(self.link_src, self.link_dst, strict=True)
                ],
                dtype=np.int64,
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

    def next_hops(self) -> tuple[IntArray, IntArray]:
        """CSR (``ptr``, ``links``) of equal-cost next links per ``switch * hosts + host``."""
        cached = self._cache.get("fib")
        if cached is None:
            dist = self.distances()
            from_switch = np.flatnonzero(self.link_src >= self.hosts)
            src = self.link_src[from_switch]
            dst = self.link_dst[from_switch]
            live = self.link_speed_gbps[from_switch] > 0
            closer = (dist[:, dst] == dist[:, src] - 1) & live  # (hosts, switch links)
            host_idx, col = np.nonzero(closer)
            row = (src[col] - self.hosts) * self.hosts + host_idx
            order = np.lexsort((from_switch[col], row))
            links = from_switch[col][order].astype(np.int64)
            counts = np.bincount(row, minlength=self.switches * self.hosts)
            ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            self._cache["fib"] = (ptr, links)
            return ptr, links
        return cached  # type: ignore[return-value]

    @property
    def max_hops(self) -> int:
        """Links on the longest shortest path between two hosts."""
        if self.graph is not None:
            return self.graph.max_hops
        dist = self.distances()[:, : self.hosts]
        finite = dist[np.isfinite(dist)]
        return int(finite.max()) if finite.size else 1


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
    ptr, links = net.next_hops()
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
        row = (at[idx] - net.hosts) * net.hosts + dst[idx]
        lo, count = ptr[row], ptr[row + 1] - ptr[row]
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
        chosen = links[lo + pick]
        out[idx, hop] = chosen
        at[idx] = net.link_dst[chosen]
        done[idx] = at[idx] == dst[idx]
    return out
