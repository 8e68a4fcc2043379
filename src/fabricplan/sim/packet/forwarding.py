"""Forwarding tables per destination leaf, with shared next-hop groups (as switches keep them).

A switch forwards by destination, and every path to a host ends at the switch the host hangs
from (its leaf; a host has one link each way). So the equal-cost next links from switch ``v``
towards host ``d`` are those towards ``d``'s leaf, unless ``v`` is that leaf, which delivers
on ``d``'s own link. The table therefore has one row per (switch, leaf), not per (switch,
host), and a row names a *next-hop group*: a set of links stored once however many rows share
it (every leaf's uplinks serve every remote leaf; switch ASICs likewise keep routes per prefix
pointing at shared ECMP groups). State grows as switches x leaves (rows of one number) plus
the distinct groups (about switches x ports), against switches x hosts x options before.

Rows are computed from breadth-first distances between switches towards each leaf, in chunks
of leaves (bounded scratch memory), over live links only. A link is a next hop when it leads
to a switch one hop closer to the leaf (never from a switch that cannot reach the leaf: the
per-host table this replaced offered links between two such switches). A row's next hops are
a bit mask over its switch's out-links, so equal rows are found exactly by sorting (switch,
mask) keys. Group ``0`` is empty (no route); a row of ``DELIVER`` means "the destination hangs
from this switch". :func:`next_hop_range` is the lookup the
compiled switch calls; :meth:`ForwardingTable.options` the same lookup over arrays.

>>> from fabricplan.sim.packet.network import dumbbell
>>> table = forwarding_table(dumbbell(hosts_per_side=2))
>>> table.group.tolist()   # switch x leaf: deliver at home, else the trunk; last: no route
[[-1, 1, 0], [2, -1, 0]]
>>> table.options(np.array([0]), np.array([3]))   # left switch towards host 3
[[8]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fabricplan.sim.packet.compiled import jit

if TYPE_CHECKING:
    from fabricplan.sim.packet.network import PacketNetwork
    from fabricplan.sim.packet.state import SimState

IntArray = NDArray[np.int64]
U64Array = NDArray[np.uint64]

DELIVER = -1
"""Row value: the destination hangs from this switch (its own down link is the next hop)."""
NO_ROUTE_GROUP = 0
"""The empty next-hop group (the destination cannot be reached from this switch)."""
UNREACHABLE_HOPS = np.iinfo(np.int32).max
"""Hop count standing for "cannot reach the leaf"."""
SCRATCH_CELLS = 1 << 23
"""(leaves x switches x widest switch) cells of the scratch matrices per chunk."""


@dataclass(frozen=True, eq=False)
class ForwardingTable:
    """Rows per (switch, destination leaf) pointing at shared next-hop groups."""

    dest_row: IntArray
    """(hosts,) the column of each host's leaf (an extra all-empty column for a host whose
    down link is dead)."""
    group: IntArray
    """(switches, columns) next-hop group of each row, or :data:`DELIVER`."""
    ptr: IntArray
    """(groups + 1,) CSR offsets of each group's links in :attr:`links`."""
    links: IntArray
    """Group links (sorted within a group), then each host's down link at ``ptr[-1] + host``."""

    @property
    def groups(self) -> int:
        return int(self.ptr.size - 1)

    @property
    def nbytes(self) -> int:
        """Bytes the table holds."""
        return int(self.dest_row.nbytes + self.group.nbytes + self.ptr.nbytes + self.links.nbytes)

    def ranges(self, switch: IntArray, dest: IntArray) -> tuple[IntArray, IntArray]:
        """First index into :attr:`links` and count of the next links of each (switch, host).

        ``switch`` counts switches from 0 (vertex minus hosts).
        """
        g = self.group[switch, self.dest_row[dest]]
        deliver = g == DELIVER
        g = np.where(deliver, NO_ROUTE_GROUP, g)
        lo = np.where(deliver, self.ptr[-1] + dest, self.ptr[g])
        count = np.where(deliver, 1, self.ptr[g + 1] - self.ptr[g])
        return lo.astype(np.int64), count.astype(np.int64)

    def options(self, switch: IntArray, dest: IntArray) -> list[list[int]]:
        """The next links of each (switch, host) pair, as lists (for tests and tools)."""
        lo, count = self.ranges(np.asarray(switch), np.asarray(dest))
        return [
            [int(x) for x in self.links[a : a + n]]
            for a, n in zip(lo.tolist(), count.tolist(), strict=True)
        ]


def _row_ids(keys: U64Array) -> tuple[IntArray, IntArray]:
    """Equal rows of ``keys`` found column by column: the first row of each distinct row (in
    lexicographic order of the rows) and each row's rank among them."""
    ids = np.zeros(keys.shape[0], dtype=np.int64)
    for column in range(keys.shape[1]):
        values, rank = np.unique(keys[:, column], return_inverse=True)
        _, ids = np.unique(ids * values.size + rank.ravel(), return_inverse=True)
        ids = ids.ravel()
    first = np.full(int(ids.max()) + 1 if ids.size else 0, keys.shape[0], dtype=np.int64)
    np.minimum.at(first, ids, np.arange(keys.shape[0]))
    return first, ids


def _out_links(src: IntArray, switches: int) -> tuple[IntArray, NDArray[np.bool_]]:
    """(switches, widest) matrix of each switch's out-links by link id (0-padded) and which
    cells are links: a switch's options towards a leaf are a bit mask over its row."""
    order = np.argsort(src, kind="stable")
    degree = np.bincount(src, minlength=switches)
    width = max(int(degree.max()) if degree.size else 0, 1)
    first = np.concatenate([[0], np.cumsum(degree)[:-1]])
    position = np.arange(src.size) - np.repeat(first, degree)
    slots = np.zeros((switches, width), dtype=np.int64)
    valid = np.zeros((switches, width), dtype=np.bool_)
    slots[src[order], position] = order
    valid[src[order], position] = True
    return slots, valid


def forwarding_table(net: PacketNetwork) -> ForwardingTable:
    """The forwarding table of ``net`` (see the module docstring).

    Parameters
    ----------
    net
        Hosts, switches and directed links; a link of speed 0 is down.

    Returns
    -------
    ForwardingTable

    Examples
    --------
    >>> from fabricplan.sim.packet.network import ring
    >>> table = forwarding_table(ring(4))      # 4 switches in a cycle, one host each
    >>> table.options(np.array([0, 0]), np.array([1, 2]))   # next door; opposite: both ways
    [[8], [8, 15]]
    """
    hosts, switches = net.hosts, net.switches
    down = net.host_down_link
    live = net.link_speed_gbps > 0
    leaf_vertex, column = np.unique(net.link_src[down], return_inverse=True)
    n_leaves = int(leaf_vertex.size)
    dead_host = ~live[down]
    dest_row = np.where(dead_host, n_leaves, column).astype(np.int64)
    columns = n_leaves + 1
    between = np.flatnonzero((net.link_src >= hosts) & (net.link_dst >= hosts) & live)
    a = net.link_src[between] - hosts
    b = net.link_dst[between] - hosts
    towards = csr_matrix((np.ones(between.size), (b, a)), shape=(switches, switches))
    slots, valid = _out_links(a, switches)  # indices into ``between``
    to_switch = b[slots] if b.size else np.zeros_like(slots)  # (switches, widest)
    width = slots.shape[1]
    words = (width + 63) // 64
    chunk_keys: list[U64Array] = [np.zeros((1, 1 + words), dtype=np.uint64)]  # no route: id 0
    chunk_ids: list[tuple[IntArray, IntArray]] = []
    chunk = max(1, SCRATCH_CELLS // max(switches * width, 1))
    offset = 1
    for first in range(0, n_leaves, chunk):
        leaves = np.arange(first, min(first + chunk, n_leaves))
        dist = np.atleast_2d(
            shortest_path(towards, method="D", unweighted=True, indices=leaf_vertex[leaves] - hosts)
        )  # (chunk, switches): hops from each switch to each leaf
        hops = np.where(np.isfinite(dist), dist, UNREACHABLE_HOPS).astype(np.int32)
        here = hops[:, :, None]
        closer = (here < UNREACHABLE_HOPS) & (hops[:, to_switch] == here - 1) & valid
        keys = np.zeros((leaves.size * switches, 1 + words), dtype=np.uint64)
        packed = np.packbits(closer, axis=2, bitorder="little")  # (chunk, switches, bytes)
        padded = np.zeros((leaves.size, switches, 8 * words), dtype=np.uint8)
        padded[:, :, : packed.shape[2]] = packed
        keys[:, 1:] = padded.reshape(-1, 8 * words).view(np.uint64)
        routed = closer.any(axis=2).ravel()
        keys[:, 0] = np.where(routed, np.tile(np.arange(1, switches + 1), leaves.size), 0)
        unique_at, inverse = _row_ids(keys)
        chunk_keys.append(keys[unique_at])
        chunk_ids.append((leaves, inverse + offset))
        offset += unique_at.size
    every_keys = np.concatenate(chunk_keys)
    every_at, remap = _row_ids(every_keys)
    every = every_keys[every_at]
    group = np.full((switches, columns), NO_ROUTE_GROUP, dtype=np.int64)
    for leaves, ids in chunk_ids:
        group[:, leaves] = remap[ids].reshape(leaves.size, switches).T
    group[leaf_vertex - hosts, np.arange(n_leaves)] = DELIVER
    owner = every[:, 0].astype(np.int64) - 1
    bits = np.unpackbits(
        np.ascontiguousarray(every[:, 1:]).view(np.uint8), axis=1, bitorder="little"
    )[:, :width].astype(np.bool_)
    bits[owner < 0] = False
    g, pos = np.nonzero(bits)
    links = between[slots[owner[g], pos]].astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum(np.bincount(g, minlength=every.shape[0]))])
    ptr = ptr.astype(np.int64)
    links = np.concatenate([links, down.astype(np.int64)]).astype(np.int64)
    return ForwardingTable(dest_row=dest_row, group=group, ptr=ptr, links=links)


@jit
def next_hop_range(s: SimState, sw: int, dest: int) -> tuple[int, int]:
    """First index into ``s.fib_links`` and count of the next links from switch ``sw``
    (counted from 0) towards host ``dest``."""
    g = s.fib_group[sw, s.fib_dest[dest]]
    if g == DELIVER:
        return s.fib_ptr[s.fib_ptr.size - 1] + dest, 1
    lo = s.fib_ptr[g]
    return lo, s.fib_ptr[g + 1] - lo
