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
of leaves (bounded scratch memory), over live links only; a link is a next hop when it leads to
a switch one hop closer to the leaf. Group ``0`` is empty (no route); a row of ``DELIVER``
means "the destination hangs from this switch". :func:`next_hop_range` is the lookup the
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
from fabricplan.topology.routing import mix64

if TYPE_CHECKING:
    from fabricplan.sim.packet.network import PacketNetwork
    from fabricplan.sim.packet.state import SimState

IntArray = NDArray[np.int64]

DELIVER = -1
"""Row value: the destination hangs from this switch (its own down link is the next hop)."""
NO_ROUTE_GROUP = 0
"""The empty next-hop group (the destination cannot be reached from this switch)."""
SCRATCH_CELLS = 1 << 24
"""(leaves x switch links) cells of the boolean scratch matrix per chunk (16 MiB)."""


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


def _row_keys(rows: IntArray, links: IntArray, n_rows: int) -> tuple[IntArray, ...]:
    """Two order-free 64-bit hashes and the size of each row's link set."""
    h1 = np.zeros(n_rows, dtype=np.uint64)
    h2 = np.zeros(n_rows, dtype=np.uint64)
    mixed = mix64(links.astype(np.uint64))
    np.add.at(h1, rows, mixed)
    np.bitwise_xor.at(h2, rows, mix64(mixed ^ np.uint64(0x5BD1E995)))
    count = np.bincount(rows, minlength=n_rows).astype(np.int64)
    return h1.view(np.int64), h2.view(np.int64), count


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
    group = np.full((switches, columns), NO_ROUTE_GROUP, dtype=np.int64)
    keys: dict[tuple[int, int, int], int] = {(0, 0, 0): NO_ROUTE_GROUP}
    group_links: list[IntArray] = [np.zeros(0, dtype=np.int64)]
    chunk = max(1, SCRATCH_CELLS // max(between.size, 1))
    for first in range(0, n_leaves, chunk):
        leaves = np.arange(first, min(first + chunk, n_leaves))
        dist = shortest_path(
            towards, method="D", unweighted=True, indices=leaf_vertex[leaves] - hosts
        )
        dist = np.atleast_2d(dist)
        leaf_i, link_i = np.nonzero(dist[:, b] == dist[:, a] - 1)
        rows = a[link_i] * leaves.size + leaf_i  # row = switch * chunk + leaf in chunk
        chosen = between[link_i]
        order = np.lexsort((chosen, rows))
        rows, chosen = rows[order], chosen[order]
        n_rows = switches * leaves.size
        h1, h2, count = _row_keys(rows, chosen, n_rows)
        start = np.concatenate([[0], np.cumsum(count)])
        row_group = np.zeros(n_rows, dtype=np.int64)
        triples = np.stack([h1, h2, count], axis=1)
        unique, first_row, inverse = np.unique(
            triples, axis=0, return_index=True, return_inverse=True
        )
        ids = np.empty(unique.shape[0], dtype=np.int64)
        for u, (k1, k2, k3) in enumerate(unique.tolist()):
            key = (int(k1), int(k2), int(k3))
            if key not in keys:
                r = int(first_row[u])
                keys[key] = len(group_links)
                group_links.append(chosen[start[r] : start[r + 1]])
            ids[u] = keys[key]
        row_group = ids[inverse.ravel()]
        reference = np.concatenate([np.zeros(0, dtype=np.int64), *group_links])
        ref_ptr = np.concatenate([[0], np.cumsum([g.size for g in group_links])])
        pos = np.arange(rows.size) - start[rows]
        if not np.array_equal(reference[ref_ptr[row_group[rows]] + pos], chosen):
            raise RuntimeError("forwarding: two next-hop sets share a hash; widen the key")
        group[:, leaves] = row_group.reshape(switches, leaves.size)
    group[leaf_vertex - hosts, np.arange(n_leaves)] = DELIVER
    sizes = np.array([g.size for g in group_links], dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    links = np.concatenate([*group_links, down.astype(np.int64)]).astype(np.int64)
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
