"""Failed cables and switches for the flow-level simulator.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
...     "switch": {"roce_v2": "sn5600"}}})  # a two-tier leaf-spine
>>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
>>> int((~fail_random_cables(g, 3, seed=0).link_alive).sum())   # 3 cables, both directions
6
>>> int(switch_vertex(g, "spine1")) == g.hosts + g.leaves + 1
True
"""

from __future__ import annotations

import numpy as np

from fabricplan.errors import ModelError
from fabricplan.topology.graph import (
    LINK_TIERS,
    FabricGraph,
    reverse_links,
    with_failures,
)


def fail_random_cables(
    graph: FabricGraph, count: int, seed: int, tier: str = "leaf_to_spine"
) -> FabricGraph:
    """``graph`` with ``count`` random cables of ``tier`` down (both directions).

    Raises
    ------
    ModelError
        FP537 when the tier has fewer cables than ``count`` or is unknown.
    """
    if tier not in LINK_TIERS:
        raise ModelError(
            "FP537",
            "failure tier",
            "unknown link tier",
            tier,
            f"use one of {', '.join(LINK_TIERS)}",
        )
    candidates = np.flatnonzero((graph.link_tier == LINK_TIERS.index(tier)) & graph.link_alive)
    if count < 0 or count > candidates.size:
        raise ModelError(
            "FP537",
            "--fail-links",
            f"must be between 0 and the {tier} cables",
            count,
            f"use 0..{candidates.size}",
        )
    chosen = np.random.default_rng(seed).choice(candidates, size=count, replace=False)
    both = np.concatenate([chosen, reverse_links(graph, chosen)])
    return with_failures(graph, links=both)


def switch_vertex(graph: FabricGraph, name: str) -> int:
    """The vertex of a switch named ``leafN``, ``spineN`` or ``coreN``.

    Raises
    ------
    ModelError
        FP537 for a name that is not a switch of this fabric.
    """
    bases = {
        "leaf": (graph.hosts, graph.leaves),
        "spine": (graph.hosts + graph.leaves, graph.spines),
        "core": (graph.hosts + graph.leaves + graph.spines, graph.cores),
    }
    for prefix, (base, count) in bases.items():
        digits = name.removeprefix(prefix)
        if name.startswith(prefix) and digits.isdigit() and int(digits) < count:
            return base + int(digits)
    raise ModelError(
        "FP537",
        "--fail-switch",
        "not a switch of this fabric",
        name,
        f"use {_switch_names(graph)}",
    )


def _switch_names(graph: FabricGraph) -> str:
    """The switch names this fabric has, tier by tier (a one-switch fabric has only ``leaf0``)."""
    tiers = (("leaf", graph.leaves), ("spine", graph.spines), ("core", graph.cores))
    names = [
        f"{prefix}0" if count == 1 else f"{prefix}0..{prefix}{count - 1}"
        for prefix, count in tiers
        if count > 0
    ]
    return ", ".join(names)
