"""A scheduled (DDC / VOQ) fabric as counts: leaves with host and fabric ports, fabric elements.

A scheduled fabric is one logical switch spread over boxes (OCP Distributed Disaggregated
Chassis): the leaves (Jericho3-AI) carry the host ports and queue every packet in a virtual output
queue until the egress grants credit; they cut it into cells and spray the cells over **all**
their fabric links; the fabric elements (Ramon) switch cells only. Two stages, built from port
arithmetic:

- a leaf has ``d`` host ports and ``u`` fabric ports (fixed by the hardware, e.g. 18 and 20 at
  800G: the fabric ports carry the cell overhead with speed-up ``u/d``);
- ``leaves = ceil(host ports / d)`` (rail-optimized: one leaf per rail per scalable unit of ``d``
  node slots, as :func:`~.fat_tree.rail_optimized`);
- every leaf reaches every fabric element with ``u/F`` links, so that cells of any flow can take
  any element: ``F`` divides ``u`` and has ports for every leaf, ``F`` the smallest divisor of
  ``u`` with ``F >= leaves x u / k`` for fabric elements of ``k`` ports;
- so two stages hold at most ``k`` leaves (``F = u``, one link from every leaf to every element),
  ``k x d`` host ports: 128 x 18 = 2,304 at 800G on 128-port elements. Larger fabrics need a
  third (FE2) stage, which is not built here (FP626).

>>> plane = scheduled_fabric(nodes=256, rails=8, host_ports=18, fabric_ports=20,
...     element_ports=128, topology="fat_tree")
>>> plane.leaves, plane.spines, plane.leaf_up_ports, plane.spine_down_ports
(114, 20, 20, 114)

References
----------
.. [1] Broadcom Jericho3-AI / Ramon3 (TechInsights, J. Byrne, 2023): end-to-end credit-based
   scheduling, cell spraying, up to 32,768 x 800G ports in a multi-stage fabric.
.. [2] OCP Distributed Disaggregated Chassis (DDC) Specification, AT&T, 2019-09.
"""

from __future__ import annotations

import math

from fabricplan.errors import DesignError
from fabricplan.model.scenario import TopologyName
from fabricplan.topology.fat_tree import FatTree, smallest_divisor_at_least

SCHEDULED_STAGES = 2
"""Stages the designer builds for a scheduled fabric: leaf and one fabric-element stage."""


def _fill(
    nodes: int, rails: int, per_leaf: int, topology: TopologyName
) -> tuple[int, tuple[tuple[int, int], ...]]:
    """Leaves and their ``(count, node ports)`` fill, as the fat-tree builders fill them."""
    if topology == "rail_optimized":
        units = math.ceil(nodes / per_leaf)
        full, partial = divmod(nodes, per_leaf)
        pairs = [(full * rails, per_leaf), (rails if partial else 0, partial)]
        return units * rails, tuple((c, p) for c, p in pairs if c)
    ports = nodes * rails
    leaves = math.ceil(ports / per_leaf)
    full, rest = divmod(ports, per_leaf)
    pairs = [(full, per_leaf), (1 if rest else 0, rest)]
    return leaves, tuple((c, p) for c, p in pairs if c)


def scheduled_fabric(
    nodes: int,
    rails: int,
    host_ports: int,
    fabric_ports: int,
    element_ports: int,
    topology: TopologyName,
) -> FatTree:
    """One plane of a two-stage scheduled fabric.

    Parameters
    ----------
    nodes, rails
        Nodes and the NIC ports each has in this plane.
    host_ports, fabric_ports
        A leaf's host ports and fabric ports at the plane's port speed.
    element_ports
        A fabric element's ports at the fabric port speed.
    topology
        ``rail_optimized`` (a leaf per rail per scalable unit) or ``fat_tree`` (consecutive).

    Returns
    -------
    FatTree
        Tier ``leaf`` (radix ``host_ports + fabric_ports``) and tier ``spine`` of fabric elements
        (``spine_radix`` their ports); one leaf alone needs no fabric element.

    Raises
    ------
    DesignError
        FP626 when the leaves exceed what one fabric-element stage reaches.

    Examples
    --------
    >>> one = scheduled_fabric(2, 8, 18, 20, 128, "rail_optimized")
    >>> one.leaves, one.spines, one.tiers          # 16 NICs on 8 rail leaves
    (8, 2, 2)
    >>> scheduled_fabric(2, 4, 18, 20, 128, "fat_tree").tiers   # 8 NICs: one leaf
    1
    """
    leaves, fill = _fill(nodes, rails, host_ports, topology)
    endpoints = nodes * rails
    if leaves == 1:
        return FatTree(
            radix=host_ports + fabric_ports,
            tiers=1,
            host_ports=endpoints,
            hosts_per_leaf=host_ports,
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
            max_host_ports=host_ports,
            rail_aligned=topology == "rail_optimized",
            leaf_fill=fill,
        )
    if leaves > element_ports:
        raise DesignError(
            "FP626",
            "cluster.gpus",
            f"{endpoints:,} host ports per plane need {leaves} scheduled-fabric leaves of"
            f" {host_ports} host ports, above the {element_ports} one stage of"
            f" {element_ports}-port fabric elements reaches ({element_ports * host_ports:,} host"
            f" ports); a third fabric stage is not modelled",
            leaves,
            "add fabric.planes (each plane is its own fabric) or use a smaller cluster",
        )
    elements = smallest_divisor_at_least(
        fabric_ports, math.ceil(leaves * fabric_ports / element_ports)
    )
    per_element = leaves * fabric_ports // elements
    unit = rails if topology == "rail_optimized" else 1
    return FatTree(
        radix=host_ports + fabric_ports,
        tiers=SCHEDULED_STAGES,
        host_ports=endpoints,
        hosts_per_leaf=host_ports,
        leaf_up_ports=fabric_ports,
        leaves=leaves,
        spine_groups=1,
        leaves_per_pod=leaves,
        pods=1,
        spines=elements,
        spine_down_ports=per_element,
        spine_up_ports=0,
        spine_down_links=elements * per_element,
        cores=0,
        core_down_ports=0,
        max_host_ports=(element_ports // unit * unit) * host_ports,
        rail_aligned=topology == "rail_optimized",
        leaf_fill=fill,
        spine_radix=element_ports,
    )
