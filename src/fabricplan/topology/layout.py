"""Cable runs from the physical layout: where racks stand, and how long each link is.

Racks stand in rows of ``row_length_racks`` (:func:`row_length_racks`); rack ``i`` of the hall
sequence is in row ``i // row_length`` at column ``i % row_length``. A run between two racks follows
the overhead trays: ``|rows apart| x row_pitch_m + |racks apart| x rack_width_m + tray_drop_m
+ slack_m``; a run inside one rack is ``in_rack_m``
(:class:`~fabricplan.model.scenario.LayoutSpec`).

Where the switches stand (the DGX SuperPOD RAs' practice, reference catalog B.2):

- rail-optimized leaves: one network rack per scalable unit, in the middle of that unit's node
  racks (a rail leaf takes one NIC of every node of its unit, so it cannot sit next to all of
  them);
- fat-tree leaves: in the rack of their nodes (top of rack) when those nodes share one rack,
  else in the rack of their middle node;
- a single switch: a network rack in the middle of the node racks;
- spines of a two-tier plane, cores of a three-tier plane and the management (subnet-manager)
  hosts: a central network block in a row of its own in the middle of the hall (the rows after
  it move one row back), at its middle column (:attr:`HallPlacement.center_rack`); runs to it
  are measured to that named rack; a three-tier pod's aggregation switches: the pod's middle
  leaf rack;
- management ports take the node slots after the last node (:func:`management_leaf_positions`),
  so each management link runs from the central block to its own leaf's rack.

Lengths are rounded up to orderable steps (:data:`LENGTH_STEPS_M`).

>>> [orderable_length_m(m) for m in (2.2, 17.3, 61, 142)]
[2.5, 18.0, 65.0, 150.0]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from fabricplan.model.fabric import LinkGroupName
from fabricplan.model.scenario import LayoutSpec, TopologyName
from fabricplan.topology.fat_tree import FatTree

NODES_PER_RACK_8_GPU = 4
"""Nodes of up to 8 GPUs per rack with ``nodes_per_rack: auto``: the DGX H100 SuperPOD RA
recommends four DGX H100 per rack (4 x 10.2 kW = 40.8 kW; 8 compute racks per 32-node SU), and
the DGX B300 RA places four DGX B300 in one rack."""

NODES_PER_RACK_RACK_SCALE = 1
"""A node of more than 8 GPUs fills its rack. Trays of a rack-scale NVLink domain (GB200 NVL72:
18 trays of 4 GPUs) fill their domain's rack."""

LENGTH_STEPS_M: tuple[tuple[float, float], ...] = ((5.0, 0.5), (30.0, 1.0), (100.0, 5.0))
"""Orderable length steps: up to 5 m in 0.5 m (copper cables come in 0.5 m steps, e.g. the
LinkX MCP7Y00 splitter at 1, 1.5, 2, 2.5, 3 m), up to 30 m in 1 m, up to 100 m in 5 m, beyond
in 10 m (fibre cords are cut to order; coarser steps keep the bill short). A convention of
ours, not a vendor list."""

LONG_STEP_M = 10.0

ROW_LENGTH_RACKS_MIN = 16
ROW_LENGTH_RACKS_MAX = 64
"""Bounds of ``row_length_racks: auto``: at least 16 racks (a 32-node SU's 8 compute racks and
its network racks, twice), at most 64 (about 38 m of 600 mm racks, an estimate of the longest
practical contained aisle; larger clusters add rows)."""


def row_length_racks(layout: LayoutSpec, racks: int) -> int:
    """Racks per row: the layout's, or for ``auto`` a roughly square hall.

    Square: ``rows x row_pitch = row length x rack_width`` with ``rows = racks / row length``,
    so ``row length = sqrt(racks x row_pitch / rack_width)``, kept within
    [:data:`ROW_LENGTH_RACKS_MIN`, :data:`ROW_LENGTH_RACKS_MAX`].

    >>> row_length_racks(LayoutSpec(), 64), row_length_racks(LayoutSpec(), 3_300)
    (16, 64)
    """
    if isinstance(layout.row_length_racks, int):
        return layout.row_length_racks
    square = math.ceil(math.sqrt(racks * layout.row_pitch_m / layout.rack_width_m))
    return max(ROW_LENGTH_RACKS_MIN, min(ROW_LENGTH_RACKS_MAX, square))


Runs = dict[LinkGroupName, list[tuple[float, int]]]
"""Per link group: ``(orderable length in m, links)`` pairs, shortest first."""
LayoutRuns = Mapping[LinkGroupName, tuple[tuple[float, int], ...]]
"""The same, read-only, as :func:`layout_runs` returns (and keeps) it."""
FixedLengths = tuple[tuple[LinkGroupName, float], ...]
"""``fabric.cable_reach`` as ``(group, metres)`` pairs (hashable, for the memo)."""


def orderable_length_m(length_m: float) -> float:
    """``length_m`` rounded up to the next orderable step (:data:`LENGTH_STEPS_M`)."""
    for limit, step in LENGTH_STEPS_M:
        if length_m <= limit:
            return math.ceil(round(length_m / step, 9)) * step
    return math.ceil(round(length_m / LONG_STEP_M, 9)) * LONG_STEP_M


def nodes_per_rack(layout: LayoutSpec, gpus_per_node: int, rack_domain_gpus: int = 0) -> int:
    """The layout's nodes per rack, ``auto`` read by node size.

    ``rack_domain_gpus``: GPUs of an NVLink domain that spans a rack (72 for GB200 NVL72), whose
    trays fill that rack; 0 (or a domain no larger than the node) for a standalone server.

    >>> nodes_per_rack(LayoutSpec(), 8), nodes_per_rack(LayoutSpec(), 72), nodes_per_rack(
    ...     LayoutSpec(), 4, 72)
    (4, 1, 18)
    """
    if isinstance(layout.nodes_per_rack, int):
        return layout.nodes_per_rack
    if rack_domain_gpus > gpus_per_node:
        return max(1, rack_domain_gpus // gpus_per_node)
    return NODES_PER_RACK_8_GPU if gpus_per_node <= 8 else NODES_PER_RACK_RACK_SCALE


IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class _Hall:
    """Rack positions in the hall sequence and the distances between them."""

    def __init__(self, layout: LayoutSpec, per_row: int) -> None:
        self.layout = layout
        self.per_row = per_row

    def _run(self, d_rows: FloatArray, d_cols: FloatArray) -> FloatArray:
        lay = self.layout
        horizontal = d_rows * lay.row_pitch_m + d_cols * lay.rack_width_m
        return np.asarray(horizontal + lay.tray_drop_m + lay.slack_m, dtype=np.float64)

    def between(self, a: IntArray, b: IntArray) -> FloatArray:
        rows = np.abs(a // self.per_row - b // self.per_row).astype(np.float64)
        cols = np.abs(a % self.per_row - b % self.per_row).astype(np.float64)
        length = self._run(rows, cols)
        return np.where(a == b, self.layout.in_rack_m, length)

    def binned_between(
        self, a: IntArray, b: IntArray, weights: IntArray
    ) -> list[tuple[float, int]]:
        """``_binned(self.between(a, b), weights)`` without measuring every run: neighbouring
        runs between the same two racks (the nodes of a rack, the NICs of a node) are merged
        first, and a run's length depends only on its row and column distance, so the weights
        are summed per distance (one ``bincount``) and only the distances that occur are
        measured and rounded. Speed only: the result is the same list."""
        a, b, w = (x.ravel() for x in np.broadcast_arrays(a, b, weights))
        if a.size == 0:
            return []
        starts = np.flatnonzero(np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])])
        a, b = a[starts], b[starts]
        run_weights = np.add.reduceat(w.astype(np.float64), starts)
        a_row, a_col = np.divmod(a, self.per_row)
        b_row, b_col = np.divmod(b, self.per_row)
        key = np.abs(a_row - b_row) * self.per_row + np.abs(a_col - b_col)  # 0: same rack
        totals = np.bincount(key, weights=run_weights)
        present = np.flatnonzero(totals)
        lengths = self._run(
            (present // self.per_row).astype(np.float64),
            (present % self.per_row).astype(np.float64),
        )
        lengths = np.where(present == 0, self.layout.in_rack_m, lengths)
        return _binned(lengths, totals[present])


def orderable_lengths_m(lengths_m: FloatArray) -> FloatArray:
    """:func:`orderable_length_m` of every element (vectorised)."""
    out = np.ceil(np.round(lengths_m / LONG_STEP_M, 9)) * LONG_STEP_M
    for limit, step in reversed(LENGTH_STEPS_M):
        out = np.where(lengths_m <= limit, np.ceil(np.round(lengths_m / step, 9)) * step, out)
    return np.asarray(out, dtype=np.float64)


def _binned(lengths: FloatArray, weights: IntArray | FloatArray) -> list[tuple[float, int]]:
    if lengths.size == 0:
        return []
    bins, inverse = np.unique(orderable_lengths_m(lengths), return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=weights.ravel().astype(np.float64))
    return [
        (float(length), round(total))
        for length, total in zip(bins.tolist(), totals.tolist(), strict=True)
        if total
    ]


def _rack_nodes(nodes: int, racks: int, per_rack: int) -> IntArray:
    rack = np.arange(racks, dtype=np.int64)
    return np.clip(nodes - rack * per_rack, 0, per_rack)


def _node_positions(
    topology: TopologyName,
    leaves: int,
    hosts_per_leaf: int,
    nodes: int,
    rails: int,
    per_rack: int,
    row_length: int,
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Hall positions of node racks (or nodes), of the leaf rack their NICs reach, how many
    nodes each stands for, and the position of every leaf of a plane."""
    if leaves == 1:
        racks = math.ceil(nodes / per_rack)
        middle = racks // 2
        rack = np.arange(racks, dtype=np.int64)
        pos = rack + (rack >= middle)
        return (
            pos,
            np.full(racks, middle, dtype=np.int64),
            _rack_nodes(nodes, racks, per_rack),
            np.array([middle], dtype=np.int64),
        )
    if topology == "rail_optimized":
        slots = hosts_per_leaf  # node slots of one scalable unit
        unit_racks = math.ceil(slots / per_rack)
        middle = unit_racks // 2
        stride = unit_racks + 1  # the unit's node racks and its network rack
        units = leaves // rails

        def start(unit: IntArray) -> IntArray:
            # A unit that fits a row starts a new row rather than straddle two.
            if stride > row_length:
                return unit * stride
            per_row = row_length // stride
            return (unit // per_row) * row_length + (unit % per_row) * stride

        unit = np.repeat(np.arange(units, dtype=np.int64), unit_racks)
        local = np.tile(np.arange(unit_racks, dtype=np.int64), units)
        in_unit = np.clip(nodes - unit * slots, 0, slots)
        count = np.clip(in_unit - local * per_rack, 0, per_rack)
        pos = start(unit) + local + (local >= middle)
        unit_leaf_pos = start(np.arange(units, dtype=np.int64)) + middle
        return pos, start(unit) + middle, count, np.repeat(unit_leaf_pos, rails)
    per_leaf = hosts_per_leaf
    node = np.arange(nodes, dtype=np.int64)
    rack = node // per_rack
    leaf = (node * rails) // per_leaf
    each_leaf = np.arange(leaves, dtype=np.int64)
    middle_node = np.minimum((each_leaf * per_leaf + per_leaf // 2) // rails, nodes - 1)
    leaf_rack = middle_node // per_rack
    leaf_of_node = leaf_rack[np.minimum(leaf, leaves - 1)]
    return rack, leaf_of_node, np.ones(nodes, dtype=np.int64), leaf_rack


def fat_tree_stretches(
    node_rack: IntArray, leaf_rack: IntArray, rails: int, hosts_per_leaf: int
) -> tuple[IntArray, IntArray, IntArray]:
    """The runs of a fat tree's host ports as stretches of consecutive hosts (host ``node x
    rails + rail``) that share their node's rack and their leaf's rack: each stretch's rack, its
    leaf's rack and its host count. Hosts fill the leaves in order, ``host // hosts_per_leaf``
    (the last leaf takes any rest), as in :func:`hall_placement`; a stretch ends where the rack
    or the leaf changes, so there are about racks + leaves of them, not a row per NIC.

    >>> racks, leaves, hosts = fat_tree_stretches(np.array([0, 0, 1, 1]), np.array([5, 6]), 2, 3)
    >>> racks.tolist(), leaves.tolist(), hosts.tolist()
    ([0, 0, 1, 1], [5, 6, 6, 6], [3, 1, 2, 2])
    """
    total = node_rack.size * rails
    rack_starts = (np.flatnonzero(np.diff(node_rack)) + 1) * rails
    leaf_starts = np.arange(hosts_per_leaf, total, hosts_per_leaf, dtype=np.int64)
    starts = np.unique(np.concatenate(([0], rack_starts, leaf_starts)))
    hosts = np.diff(np.append(starts, total))
    leaf = np.minimum(starts // hosts_per_leaf, leaf_rack.size - 1)
    return node_rack[starts // rails], leaf_rack[leaf], hosts.astype(np.int64)


@dataclass(frozen=True)
class HallPlacement:
    """Where the devices of one design stand: positions in the hall sequence (rack ``i`` is in
    row ``i // per_row`` at column ``i % per_row``)."""

    hall: _Hall
    central: int
    """Position of the central network block's rack (see :attr:`center_rack`)."""
    node_rack: IntArray
    """Position of every node's rack, in node order."""
    nic_leaf_rack: IntArray
    """Position of the leaf each NIC of a plane reaches: ``[node, rail]`` (the same in every
    plane)."""
    leaf_rack: IntArray
    """Position of every leaf of one plane (rail-optimized: scalable unit by unit, rail by rail;
    fat tree: in the order hosts fill them)."""

    @property
    def per_row(self) -> int:
        return self.hall.per_row

    @property
    def center_rack(self) -> int:
        """The central network block's rack: in a row of its own in the middle of the hall (no
        node or leaf stands in that row), at the column nearest the middle; with one leaf, the
        leaf's own network rack."""
        return self.central

    def to_center(self, a: IntArray) -> FloatArray:
        """Runs from positions ``a`` to the central block's rack (:attr:`center_rack`)."""
        return self.hall.between(a, np.full_like(a, self.center_rack))


def management_leaf_positions(
    leaf_rack: IntArray,
    topology: TopologyName,
    tiers: int,
    nodes: int,
    rails: int,
    hosts_per_leaf: int,
    per_plane: int,
) -> IntArray:
    """Hall position of the leaf each management port of a plane lands on, port by port
    (``leaf_rack``: :attr:`HallPlacement.leaf_rack`).

    Management ports take the node slots after the last node (the DGX SuperPOD RA keeps the
    last slot of an SU for UFM): on a rail-optimized fabric port ``k`` is rail ``k % rails`` of
    slot ``nodes + k // rails``, so it lands on that rail's leaf of that slot's unit; on a fat
    tree (or one leaf) the ports follow the hosts, ``(nodes x rails + k) // hosts_per_leaf``.

    >>> from fabricplan.topology.fat_tree import rail_optimized
    >>> plane = rail_optimized(32, 8, 64)                  # 31 nodes + UFM in one SU
    >>> placed = hall_placement(LayoutSpec(), "rail_optimized", plane.leaves,
    ...     plane.hosts_per_leaf, 1, 31, 8, 8)
    >>> management_leaf_positions(placed.leaf_rack, "rail_optimized", 2, 31, 8, 32, 4).tolist()
    [4, 4, 4, 4]
    """
    k = np.arange(per_plane, dtype=np.int64)
    if topology == "rail_optimized" and tiers > 1:
        index = ((nodes + k // rails) // hosts_per_leaf) * rails + k % rails
    else:
        index = (nodes * rails + k) // hosts_per_leaf
    return np.asarray(leaf_rack[np.minimum(index, leaf_rack.size - 1)], dtype=np.int64)


def _rack_placement(
    layout: LayoutSpec,
    topology: TopologyName,
    leaves: int,
    hosts_per_leaf: int,
    rails: int,
    nodes: int,
    gpus_per_node: int,
    rack_domain_gpus: int,
) -> tuple[_Hall, int, IntArray, IntArray, IntArray, IntArray]:
    """The hall, the central block's rack and :func:`_node_positions` (racks, or nodes, before
    the node expansion), the rows after the central row moved one row back."""
    per_rack = nodes_per_rack(layout, gpus_per_node, rack_domain_gpus)
    node_racks = math.ceil(nodes / per_rack)
    per_row = row_length_racks(layout, node_racks + math.ceil(leaves / rails))
    node_pos, node_leaf_pos, node_count, leaf_pos = _node_positions(
        topology, leaves, hosts_per_leaf, nodes, rails, per_rack, per_row
    )
    hall = _Hall(layout, per_row)
    racks = int(max(node_pos.max(), leaf_pos.max())) + 1
    if leaves == 1:
        central = int(leaf_pos[0])
    else:
        # The central block gets a row of its own in the middle of the hall: the rows from
        # there on move one row back, so no node or leaf shares its racks.
        rows = math.ceil(racks / per_row)
        middle_row = rows // 2 if rows > 1 else 1
        node_pos = node_pos + (node_pos // per_row >= middle_row) * per_row
        node_leaf_pos = node_leaf_pos + (node_leaf_pos // per_row >= middle_row) * per_row
        leaf_pos = leaf_pos + (leaf_pos // per_row >= middle_row) * per_row
        central = middle_row * per_row + (min(racks, per_row) - 1) // 2
    return hall, central, node_pos, node_leaf_pos, node_count, leaf_pos


def hall_placement(
    layout: LayoutSpec,
    topology: TopologyName,
    leaves: int,
    hosts_per_leaf: int,
    planes: int,
    nodes: int,
    nics_per_node: int,
    gpus_per_node: int,
    rack_domain_gpus: int = 0,
) -> HallPlacement:
    """Where every node and leaf of a design stands (the rules of the module docstring).

    >>> from fabricplan.topology.fat_tree import rail_optimized
    >>> plane = rail_optimized(32, 8, 64)                  # one SU of 32 nodes, 8 rail leaves
    >>> placed = hall_placement(LayoutSpec(), "rail_optimized", plane.leaves,
    ...     plane.hosts_per_leaf, 1, 32, 8, 8)
    >>> placed.node_rack[[0, 3, 4, 16, 31]].tolist(), placed.nic_leaf_rack[31].tolist()[:2]
    ([0, 0, 1, 5, 8], [4, 4])
    """
    rails = nics_per_node // planes
    hall, central, node_pos, node_leaf_pos, node_count, leaf_pos = _rack_placement(
        layout, topology, leaves, hosts_per_leaf, rails, nodes, gpus_per_node, rack_domain_gpus
    )
    # Racks are listed in node order, each with the nodes it holds.
    node_rack = np.repeat(node_pos, node_count)
    if topology == "rail_optimized" or leaves == 1:
        nic_leaf = np.repeat(np.repeat(node_leaf_pos, node_count)[:, None], rails, axis=1)
    else:  # fat tree: hosts fill the leaves in order, NIC by NIC
        host = np.arange(nodes, dtype=np.int64)[:, None] * rails + np.arange(rails)[None, :]
        nic_leaf = leaf_pos[np.minimum(host // hosts_per_leaf, leaves - 1)]
    return HallPlacement(hall, central, node_rack, nic_leaf, leaf_pos)


def rack_name(position: int, per_row: int) -> tuple[str, str]:
    """Row and rack names of a hall position: rows ``A``, ``B``, ... ``Z``, ``AA``; racks
    ``<row><column from 01>``.

    >>> rack_name(0, 16), rack_name(17, 16), rack_name(26 * 16, 16)
    (('A', 'A01'), ('B', 'B02'), ('AA', 'AA01'))
    """
    row, column = divmod(position, per_row)
    letters = ""
    row += 1
    while row:
        row, digit = divmod(row - 1, 26)
        letters = chr(ord("A") + digit) + letters
    return letters, f"{letters}{column + 1:02d}"


LAYOUT_MEMO_SIZE = 1024
"""Designs whose runs :func:`layout_runs` keeps (a few kB each). A design search tries every
switch model of the catalog, and models of the same radix and speed give the same plane: at
100k GPUs a ``compare`` asks for the runs of 185 designs, 119 of them different."""


def forget_layout_runs() -> None:
    """Empty the memo of :func:`layout_runs` (a benchmark times a compare from cold)."""
    layout_runs.cache_clear()


@functools.lru_cache(maxsize=LAYOUT_MEMO_SIZE)
def layout_runs(
    layout: LayoutSpec,
    topology: TopologyName,
    plane: FatTree,
    planes: int,
    nodes: int,
    nics_per_node: int,
    gpus_per_node: int,
    management_links: int,
    fixed_m: FixedLengths | None = None,
    rack_domain_gpus: int = 0,
) -> LayoutRuns:
    """Links per group and orderable length for one design (every plane alike).

    A pure function of frozen values, remembered for the planes asked again
    (:data:`LAYOUT_MEMO_SIZE`); what it returns is read-only.

    Parameters
    ----------
    layout
        Racks and rows.
    topology, plane, planes
        The design: one plane's counts and how many planes.
    nodes, nics_per_node, gpus_per_node
        The cluster.
    management_links
        Subnet-manager links of all planes (from the central block to a leaf,
        :func:`management_leaf_positions`).
    fixed_m
        Per group, one length for every run (``fabric.cable_reach`` set in the spec), as
        ``(group, metres)`` pairs.
    rack_domain_gpus
        GPUs of a rack-scale NVLink domain (see :func:`nodes_per_rack`).

    Examples
    --------
    >>> from fabricplan.topology.fat_tree import rail_optimized
    >>> plane = rail_optimized(32, 8, 64)                  # one SU of 32 nodes, 8 rail leaves
    >>> runs = layout_runs(LayoutSpec(), "rail_optimized", plane, 1, 32, 8, 8, 0)
    >>> sum(n for _, n in runs["node_leaf"]), runs["node_leaf"][0]
    (256, (5.0, 64))
    """
    fixed = None if fixed_m is None else dict(fixed_m)
    counts: dict[LinkGroupName, int] = {
        "node_leaf": nodes * nics_per_node,
        "management": management_links,
        "leaf_spine": plane.leaf_spine_links * planes,
        "spine_core": plane.spine_core_links * planes,
    }
    if fixed is not None:
        return MappingProxyType(
            {
                group: ((orderable_length_m(fixed[group]), count),) if count else ()
                for group, count in counts.items()
            }
        )
    runs: Runs = {group: [] for group in counts}
    if topology == "rail_optimized" or plane.leaves == 1:
        # Every NIC of a rack's nodes reaches the same leaf rack: one run length per rack.
        rails = nics_per_node // planes
        hall, central, node_pos, node_leaf_pos, node_count, leaf_pos = _rack_placement(
            layout,
            topology,
            plane.leaves,
            plane.hosts_per_leaf,
            rails,
            nodes,
            gpus_per_node,
            rack_domain_gpus,
        )
        runs["node_leaf"] = hall.binned_between(
            node_pos, node_leaf_pos, node_count * (rails * planes)
        )
    else:
        # Fat tree: hosts fill the leaves in order, NIC by NIC (:func:`hall_placement`); the
        # runs are measured per stretch of hosts with one rack and one leaf, not per NIC.
        rails = nics_per_node // planes
        hall, central, node_pos, _, _, leaf_pos = _rack_placement(
            layout,
            topology,
            plane.leaves,
            plane.hosts_per_leaf,
            rails,
            nodes,
            gpus_per_node,
            rack_domain_gpus,
        )
        racks, leaf_racks, hosts = fat_tree_stretches(
            node_pos, leaf_pos, rails, plane.hosts_per_leaf
        )
        runs["node_leaf"] = hall.binned_between(racks, leaf_racks, hosts * planes)

    def center(a: IntArray) -> FloatArray:
        return hall.between(a, np.full_like(a, central))

    if management_links:
        at = management_leaf_positions(
            leaf_pos,
            topology,
            plane.tiers,
            nodes,
            nics_per_node // planes,
            plane.hosts_per_leaf,
            management_links // planes,
        )
        runs["management"] = _binned(center(at), np.full(at.shape, planes, dtype=np.int64))
    if plane.tiers >= 2 and plane.leaf_up_ports:
        # leaf_fill order is consecutive leaves; each leaf cables leaf_up_ports uplinks.
        ups = np.full(plane.leaves, plane.leaf_up_ports * planes, dtype=np.int64)
        if plane.tiers == 2:
            runs["leaf_spine"] = _binned(center(leaf_pos), ups)
        else:
            pod = np.arange(plane.leaves, dtype=np.int64) // plane.leaves_per_pod
            pod_first = pod * plane.leaves_per_pod
            pod_mid = np.minimum(pod_first + plane.leaves_per_pod // 2, plane.leaves - 1)
            runs["leaf_spine"] = hall.binned_between(leaf_pos, leaf_pos[pod_mid], ups)
            pods = np.arange(plane.pods, dtype=np.int64) * plane.leaves_per_pod
            mids = np.minimum(pods + plane.leaves_per_pod // 2, plane.leaves - 1)
            per_pod = counts["spine_core"] // plane.pods
            weights = np.full(plane.pods, per_pod, dtype=np.int64)
            weights[-1] += counts["spine_core"] - per_pod * plane.pods
            runs["spine_core"] = _binned(center(leaf_pos[mids]), weights)
    # Rounding of the weights above must not lose or invent links.
    for group, count in counts.items():
        have = sum(n for _, n in runs[group])
        if have != count and runs[group]:
            length, last = runs[group][-1]
            runs[group][-1] = (length, last + count - have)
    return MappingProxyType({group: tuple(lengths) for group, lengths in runs.items()})
