"""Folded-Clos (fat-tree) fabrics as counts: one plane's leaves, spines, cores and links.

A plane is built from three rules, each checked against published designs:

- **Leaf split.** A leaf of radix ``k`` at oversubscription ``o = p/q`` (1 = non-blocking) has
  ``d`` host ports and ``u`` uplinks with ``d:u = o`` to the port: ``d = p*m``, ``u = q*m``,
  ``d + u <= k`` (:func:`leaf_splits`); the densest split ``d = floor(k*o/(o+1))``,
  ``u = ceil(d/o)`` (:func:`leaf_split`, ``d:u <= o``) is always a candidate. At ``o = 1`` the
  split is ``k/2 : k/2``. The builders try every candidate and keep the plane with the fewest
  switches, then the fewest uplinks (64-port leaves at 2:1 for 1,024 host ports: 32:16, not
  42:21, whose 21 uplinks would need 21 spines to spread evenly).
- **Even spread.** A leaf's ``u`` uplinks go evenly to the ``S`` switches above it, ``u/S`` links
  each, so ``S`` divides ``u``; ``S`` is the smallest such divisor with enough ports for every
  leaf below it (:func:`smallest_divisor_at_least`). This reproduces the DGX SuperPOD tables
  (H100: 8/16/24/32 leaves -> 4/8/16/16 spines at ``k=64``; B300-XDR: 32 leaves -> 18 spines at
  ``k=144``).
- **No oversubscription above the leaf.** An aggregation switch of a 3-tier fabric has as many
  uplinks as downlinks (``floor(k/2)`` each at most), so the leaf sets the fabric's ratio.

Limits per plane (``d = k/2`` at ``o = 1``): one switch takes ``k`` host ports; two tiers
``k*d`` (``k**2/2``, with ``3k/2`` switches); three tiers ``k*(k//2)*d`` (``k**3/4``, with
``5k**2/4`` switches) -- Al-Fares et al. 2008.

>>> plane = fat_tree(1024, radix=16)
>>> plane.tiers, plane.leaves, plane.spines, plane.cores, plane.switches
(3, 128, 128, 64, 320)

References
----------
.. [1] M. Al-Fares, A. Loukissas, A. Vahdat, "A Scalable, Commodity Data Center Network
   Architecture", SIGCOMM 2008, pp. 63-74.
.. [2] NVIDIA DGX SuperPOD reference architectures: H100 (RA-11333-001 V11, 2023-09), B200,
   B300 and B300-XDR, compute-fabric component tables (reference catalog B.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from fabricplan.errors import DesignError
from fabricplan.model.fabric import TierDesign, TierName

MAX_TIERS = 3
"""The designer builds at most three switch tiers (leaf, spine, core)."""

RATIO_MAX_DENOMINATOR = 1000
"""Oversubscription ratios are read as fractions with at most this denominator, so that 1.1 is
11/10 and not the binary expansion of the float (which would round ``ceil(d/o)`` up by one)."""


@dataclass(frozen=True)
class FatTree:
    """One plane of a folded-Clos fabric, as counts (every figure is per plane).

    Leaves carry ``hosts_per_leaf`` host ports and ``leaf_up_ports`` uplinks. At 2 tiers the
    leaves are split into ``spine_groups`` groups of ``leaves_per_pod``, each with its own
    spines. At 3 tiers the leaves fill ``pods`` pods of up to ``leaves_per_pod``; every pod has
    the same aggregation switches (tier ``spine``) and aggregation switch ``i`` of every pod
    connects to core group ``i``.
    """

    radix: int
    tiers: int
    host_ports: int
    """Host ports attached (node NIC ports plus management ports)."""
    hosts_per_leaf: int
    """Host ports a leaf is designed for (``d``; the radix for a single switch)."""
    leaf_up_ports: int
    leaves: int
    spine_groups: int
    leaves_per_pod: int
    """Leaves under one spine set: a spine group at 2 tiers, a pod at 3, 1 at 1 tier."""
    pods: int
    spines: int
    """Spine switches (aggregation switches at 3 tiers), all groups and pods."""
    spine_down_ports: int
    """Downlinks per spine (per aggregation switch of a full pod)."""
    spine_up_ports: int
    """Uplinks per aggregation switch to the core (0 at 2 tiers)."""
    spine_down_links: int
    """Leaf-spine links counted from the spine side (equals ``leaves * leaf_up_ports``)."""
    cores: int
    core_down_ports: int
    max_host_ports: int
    """Host ports this structure takes with the same tiers, radix, ratio and grouping."""
    rail_aligned: bool
    leaf_fill: tuple[tuple[int, int], ...]
    """``(leaves, node ports on each)`` pairs covering every leaf (management ports excluded)."""
    spine_radix: int | None = None
    """Ports of a spine-tier switch when it is another model than the leaf (a scheduled
    fabric's fabric elements); ``None``: ``radix``."""

    @property
    def leaf_spine_links(self) -> int:
        return self.leaves * self.leaf_up_ports

    @property
    def spine_core_links(self) -> int:
        return self.spines * self.spine_up_ports

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    @property
    def worst_case_switch_hops(self) -> int:
        """Switches on the longest shortest path between two host ports of the plane."""
        if self.leaves == 1:
            return 1
        if self.tiers == 2 or self.pods == 1:
            return 3
        return 5

    def tier_designs(self) -> tuple[TierDesign, ...]:
        """The plane's tiers; ``ports_used`` and ``ports_free`` are totals over the tier."""
        rows: list[tuple[TierName, int, int, int, int]] = [
            (
                "leaf",
                self.leaves,
                self.hosts_per_leaf,
                self.leaf_up_ports,
                self.host_ports + self.leaf_spine_links,
            ),
        ]
        if self.tiers >= 2:
            rows.append(
                (
                    "spine",
                    self.spines,
                    self.spine_down_ports,
                    self.spine_up_ports,
                    self.spine_down_links + self.spine_core_links,
                )
            )
        if self.tiers == 3:
            rows.append(("core", self.cores, self.core_down_ports, 0, self.spine_core_links))

        def radix(name: TierName) -> int:
            return self.spine_radix or self.radix if name == "spine" else self.radix

        return tuple(
            TierDesign(
                name=name,
                switches=count,
                radix=radix(name),
                down_ports=down,
                up_ports=up,
                ports_used=used,
                ports_free=count * radix(name) - used,
            )
            for name, count, down, up, used in rows
        )


def leaf_split(radix: int, oversubscription: float = 1.0) -> tuple[int, int]:
    """Host ports and uplinks of one leaf: ``d = floor(k*o/(o+1))``, ``u = ceil(d/o)``.

    ``d:u`` never exceeds ``o``; ports left over (odd radix, ratios that do not divide the
    radix) stay free.

    Parameters
    ----------
    radix
        Ports per switch at the fabric's port speed.
    oversubscription
        Host ports : uplinks asked for (1 = non-blocking).

    Examples
    --------
    >>> leaf_split(64), leaf_split(64, 3), leaf_split(64, 2)
    ((32, 32), (48, 16), (42, 21))
    """
    ratio = Fraction(oversubscription).limit_denominator(RATIO_MAX_DENOMINATOR)
    down = math.floor(radix * ratio / (ratio + 1))
    up = math.ceil(down / ratio)
    return down, up


SPLIT_SEARCH_SHARE = 2
"""Exact-ratio leaf splits are tried from the densest down to ``1/SPLIT_SEARCH_SHARE`` of its host
ports: sparser leaves only add leaves (a search bound of ours, not a hardware figure)."""


def leaf_splits(radix: int, oversubscription: float = 1.0) -> tuple[tuple[int, int], ...]:
    """Candidate ``(host ports, uplinks)`` of one leaf at ``oversubscription``, densest first.

    At 1:1 only ``k/2 : k/2``. Otherwise every split with exactly ``d:u = o`` (``o`` read as the
    fraction ``p/q``: ``d = p*m``, ``u = q*m``) from the densest down to half its host ports, and
    the densest split of :func:`leaf_split` (``d:u <= o``) when it is not one of them.

    Examples
    --------
    >>> leaf_splits(64)
    ((32, 32),)
    >>> leaf_splits(64, 2)[:3], leaf_splits(64, 2)[-1]
    (((42, 21), (40, 20), (38, 19)), (22, 11))
    >>> leaf_splits(64, 1.5)[:2]  # 38:26 is below 1.5; 36:24 is 3:2 exactly
    ((38, 26), (36, 24))
    """
    densest = leaf_split(radix, oversubscription)
    ratio = Fraction(oversubscription).limit_denominator(RATIO_MAX_DENOMINATOR)
    if ratio == 1:
        return (densest,)
    p, q = ratio.numerator, ratio.denominator
    top = radix // (p + q)
    exact = [(p * m, q * m) for m in range(top, 0, -1) if p * m * SPLIT_SEARCH_SHARE >= densest[0]]
    if densest not in exact:
        exact.insert(0, densest)
    return tuple(exact)


def smallest_divisor_at_least(number: int, least: int) -> int:
    """The smallest divisor of ``number`` that is at least ``least`` (``least <= number``).

    Examples
    --------
    >>> smallest_divisor_at_least(32, 12), smallest_divisor_at_least(72, 16)
    (16, 18)
    """
    for divisor in range(max(least, 1), number + 1):
        if number % divisor == 0:
            return divisor
    raise ValueError(f"no divisor of {number} is at least {least}")


def _consecutive_fill(node_ports: int, leaves: int, per_leaf: int) -> tuple[tuple[int, int], ...]:
    full, rest = divmod(node_ports, per_leaf)
    fill = [(full, per_leaf)] if full else []
    if rest:
        fill.append((1, rest))
    if leaves > full + (1 if rest else 0):
        fill.append((leaves - full - (1 if rest else 0), 0))
    return tuple(fill)


def _single_switch(host_ports: int, node_ports: int, radix: int, rail_aligned: bool) -> FatTree:
    return FatTree(
        radix=radix,
        tiers=1,
        host_ports=host_ports,
        hosts_per_leaf=radix,
        leaf_up_ports=0,
        leaves=1,
        spine_groups=1,
        leaves_per_pod=1,
        pods=1,
        spines=0,
        spine_down_ports=0,
        spine_up_ports=0,
        spine_down_links=0,
        cores=0,
        core_down_ports=0,
        max_host_ports=radix,
        rail_aligned=rail_aligned,
        leaf_fill=((1, node_ports),),
    )


def _two_tier(
    host_ports: int,
    leaves: int,
    groups: int,
    down: int,
    up: int,
    radix: int,
    unit_leaves: int,
    rail_aligned: bool,
    fill: tuple[tuple[int, int], ...],
    down_capacity: int | None = None,
) -> FatTree:
    """Two tiers; ``down``/``up`` are the ports cabled per leaf, ``down_capacity`` the host ports a
    leaf could take (for the growth limit; default ``down``)."""
    group_leaves = leaves // groups
    group_unit = unit_leaves // groups  # leaves a group gains per scalable unit
    spines_per_group = smallest_divisor_at_least(up, math.ceil(group_leaves * up / radix))
    links_per_spine = group_leaves * up // spines_per_group
    return FatTree(
        radix=radix,
        tiers=2,
        host_ports=host_ports,
        hosts_per_leaf=down,
        leaf_up_ports=up,
        leaves=leaves,
        spine_groups=groups,
        leaves_per_pod=group_leaves,
        pods=groups,
        spines=groups * spines_per_group,
        spine_down_ports=links_per_spine,
        spine_up_ports=0,
        spine_down_links=groups * spines_per_group * links_per_spine,
        cores=0,
        core_down_ports=0,
        max_host_ports=groups * (radix // group_unit * group_unit) * (down_capacity or down),
        rail_aligned=rail_aligned,
        leaf_fill=fill,
    )


def _three_tier(
    host_ports: int,
    leaves: int,
    down: int,
    up: int,
    radix: int,
    pod_leaves_max: int,
    unit_leaves: int,
    rail_aligned: bool,
    fill: tuple[tuple[int, int], ...],
) -> FatTree:
    pod_leaves = min(leaves, pod_leaves_max)
    pods = math.ceil(leaves / pod_leaves)
    agg_ports_max = radix // 2
    aggs_per_pod = smallest_divisor_at_least(up, math.ceil(pod_leaves * up / agg_ports_max))
    agg_down = pod_leaves * up // aggs_per_pod
    agg_up = agg_down
    cores_per_group = smallest_divisor_at_least(agg_up, math.ceil(pods * agg_up / radix))
    last_pod_leaves = leaves - (pods - 1) * pod_leaves
    spine_down_links = (pods - 1) * aggs_per_pod * agg_down + last_pod_leaves * up
    return FatTree(
        radix=radix,
        tiers=3,
        host_ports=host_ports,
        hosts_per_leaf=down,
        leaf_up_ports=up,
        leaves=leaves,
        spine_groups=1,
        leaves_per_pod=pod_leaves,
        pods=pods,
        spines=pods * aggs_per_pod,
        spine_down_ports=agg_down,
        spine_up_ports=agg_up,
        spine_down_links=spine_down_links,
        cores=aggs_per_pod * cores_per_group,
        core_down_ports=pods * agg_up // cores_per_group,
        max_host_ports=(radix * pod_leaves_max) // unit_leaves * unit_leaves * down,
        rail_aligned=rail_aligned,
        leaf_fill=fill,
    )


def _too_big(host_ports: int, radix: int, oversubscription: float, most: int) -> DesignError:
    return DesignError(
        "FP302",
        "cluster.gpus",
        f"{host_ports} host ports per plane exceed a {MAX_TIERS}-tier fat tree of {radix}-port"
        f" switches at {oversubscription:g}:1 (at most {most})",
        None,
        "choose a switch with more ports, add fabric.planes, or raise fabric.oversubscription",
    )


def _forced_misfit(
    host_ports: int, radix: int, oversubscription: float, tiers: int, fitting: int
) -> DesignError:
    sizing = (
        f"{host_ports} host ports per plane with {radix}-port switches at {oversubscription:g}:1"
    )
    if fitting > tiers:
        what = f"needs {fitting} tiers for {sizing}"
    else:
        what = f"{sizing} do not fit in {tiers} tiers"
    return DesignError("FP301", "fabric.tiers", what, tiers, f"set tiers: {fitting} or auto")


def _best(planes: list[FatTree]) -> FatTree:
    """The plane with the fewest switches, then the fewest uplinks (optics), then most growth."""
    return min(
        planes,
        key=lambda p: (p.switches, p.leaf_spine_links + p.spine_core_links, -p.max_host_ports),
    )


def fat_tree(
    endpoints: int,
    radix: int,
    oversubscription: float = 1.0,
    tiers: int | None = None,
    management_ports: int = 0,
) -> FatTree:
    """One plane of a fat tree whose host ports fill leaves consecutively.

    Every leaf split of :func:`leaf_splits` is tried; the plane with the fewest switches (then
    uplinks) is kept.

    Parameters
    ----------
    endpoints
        Node NIC ports in this plane.
    radix
        Switch ports at the fabric's port speed.
    oversubscription
        Leaf host ports : uplinks (1 = non-blocking).
    tiers
        ``None`` for the fewest tiers that fit (1, 2 or 3), or the tier count to build.
    management_ports
        Extra host ports (subnet-manager appliances) placed after the node ports.

    Raises
    ------
    DesignError
        FP301 when the forced tier count is too small, FP302 when three tiers are not enough.

    Examples
    --------
    >>> [fat_tree(n, 64).switches for n in (64, 2048, 65536)]
    [1, 96, 5120]
    >>> two = fat_tree(1024, 64, 2.0)  # 2:1 to the port; 42:21 would need 21 spines
    >>> two.hosts_per_leaf, two.leaf_up_ports, two.leaves, two.spines
    (40, 20, 26, 10)
    """
    host_ports = endpoints + management_ports
    built: list[FatTree] = []
    first_error: DesignError | None = None
    for down, up in leaf_splits(radix, oversubscription):
        try:
            built.append(
                _fat_tree_split(endpoints, host_ports, radix, down, up, oversubscription, tiers)
            )
        except DesignError as exc:
            first_error = first_error or exc.detached()  # its traceback would hold this frame
    if first_error is not None and not built:
        raise first_error.detached()
    return _best(built)


def _fat_tree_split(
    endpoints: int,
    host_ports: int,
    radix: int,
    down: int,
    up: int,
    oversubscription: float,
    tiers: int | None,
) -> FatTree:
    leaves = math.ceil(host_ports / down)
    fill = _consecutive_fill(endpoints, leaves, down)
    pod_leaves_max = radix // 2
    fits = {1: host_ports <= radix, 2: leaves <= radix, 3: leaves <= radix * pod_leaves_max}
    needed = next((t for t in (1, 2, 3) if fits[t]), None)
    if needed is None:
        raise _too_big(host_ports, radix, oversubscription, radix * pod_leaves_max * down)
    chosen = needed if tiers is None else tiers
    if chosen < needed:
        raise _forced_misfit(host_ports, radix, oversubscription, chosen, needed)
    if chosen == 1:
        return _single_switch(host_ports, endpoints, radix, rail_aligned=False)
    if chosen == 2:
        return _two_tier(host_ports, leaves, 1, down, up, radix, 1, False, fill)
    return _three_tier(host_ports, leaves, down, up, radix, pod_leaves_max, 1, False, fill)


def rail_optimized(
    nodes: int,
    rails: int,
    radix: int,
    oversubscription: float = 1.0,
    tiers: int | None = None,
    management_ports: int = 0,
) -> FatTree:
    """One plane of a rail-optimized fat tree: one leaf per rail per scalable unit.

    A scalable unit (SU) is ``d`` node slots (the leaf's host ports); leaf ``(su, rail)`` takes
    NIC port ``rail`` of every node of the SU, so same-rail NICs of an SU are one switch apart.
    SUs are built whole (the DGX SuperPOD RAs design the full SU even when fewer nodes are
    installed), except a cluster of one partly filled SU: its leaves get the uplinks its nodes
    need and keep the rest free. Management ports take node slots after the last node, ``rails``
    ports a slot. Every leaf split of :func:`leaf_splits` is tried; the plane with the fewest
    switches (then uplinks) is kept.

    Choice with ``tiers=None``: one switch when every port fits (all rails on one switch are
    one hop apart, which is what rail alignment buys); else two tiers with one spine set for all
    leaves; else two tiers with a spine set per rail (cross-rail traffic then crosses NVLink
    first, as NCCL's PXN does); else three tiers with SU-aligned pods.

    Parameters
    ----------
    nodes
        Nodes (each has ``rails`` NIC ports in this plane).
    rails
        NIC ports per node in this plane.
    radix, oversubscription, tiers, management_ports
        As in :func:`fat_tree`.

    Raises
    ------
    DesignError
        FP301 when the forced tier count is too small, FP302 when three tiers are not enough.

    Examples
    --------
    >>> su4 = rail_optimized(127, 8, 64, management_ports=4)  # DGX H100 SuperPOD, 4 SU
    >>> su4.leaves, su4.spines, su4.leaf_spine_links
    (32, 16, 1024)
    >>> rail_optimized(4, 8, 64).switches  # 32 GPUs x 1 NIC each: one 64-port switch
    1
    """
    built: list[FatTree] = []
    first_error: DesignError | None = None
    for down, up in leaf_splits(radix, oversubscription):
        try:
            plane = _rail_split(
                nodes, rails, radix, down, up, oversubscription, tiers, management_ports
            )
            built.append(plane)
        except DesignError as exc:
            first_error = first_error or exc.detached()  # its traceback would hold this frame
    if first_error is not None and not built:
        raise first_error.detached()
    return _best(built)


def _rail_split(
    nodes: int,
    rails: int,
    radix: int,
    down: int,
    up: int,
    oversubscription: float,
    tiers: int | None,
    management_ports: int,
) -> FatTree:
    host_ports = nodes * rails + management_ports
    slots = nodes + math.ceil(management_ports / rails)
    units = math.ceil(slots / down)
    leaves = units * rails
    full_units, partial = divmod(nodes, down)
    fill_pairs = [(full_units * rails, down), (rails if partial else 0, partial)]
    counted = sum(count for count, _ in fill_pairs)
    fill_pairs.append((leaves - counted, 0))
    fill = tuple((count, ports) for count, ports in fill_pairs if count)
    half = radix // 2
    pod_leaves_max = rails * (half // rails) if half >= rails else half
    options: list[tuple[int, int]] = []  # (tiers, spine groups) in order of preference
    if host_ports <= radix:
        options.append((1, 1))
    if leaves <= radix:
        options.append((2, 1))
    if rails > 1 and units <= radix:
        options.append((2, rails))
    if leaves <= radix * pod_leaves_max:
        options.append((3, 1))
    if not options:
        raise _too_big(host_ports, radix, oversubscription, radix * pod_leaves_max * down)
    fitting = [o for o in options if tiers is None or o[0] == tiers]
    if not fitting:
        raise _forced_misfit(host_ports, radix, oversubscription, tiers or 0, options[0][0])
    chosen, groups = fitting[0]
    if chosen == 1:
        return _single_switch(host_ports, nodes * rails, radix, rail_aligned=True)
    if chosen == 2:
        if units == 1 and slots < down:
            # A single, partly filled SU: cable the uplinks its nodes need (at the asked ratio)
            # and leave the rest of each leaf free for growth, rather than buy the spines and
            # optics of node slots that do not exist.
            ratio = Fraction(oversubscription).limit_denominator(RATIO_MAX_DENOMINATOR)
            cabled_up = math.ceil(slots / ratio)
            return _two_tier(
                host_ports, leaves, groups, slots, cabled_up, radix, rails, True, fill, down
            )
        return _two_tier(host_ports, leaves, groups, down, up, radix, rails, True, fill)
    return _three_tier(host_ports, leaves, down, up, radix, pod_leaves_max, rails, True, fill)
