"""Criterion weights: the priority presets (data) and explicit weights, normalised to sum 1.

A preset says what the buyer values, never which technology wins: the ranking comes from the
numbers of each candidate under these weights.

>>> round(sum(criterion_weights("balanced").values()), 12)
1.0
>>> criterion_weights(PriorityWeights(performance=3, tco=1))["performance"]
0.75
"""

from __future__ import annotations

from fabricplan.model.scenario import Criterion, PriorityPreset, PriorityWeights

CRITERIA: tuple[Criterion, ...] = (
    "performance",
    "capex",
    "tco",
    "scalability",
    "operations",
    "ecosystem",
)
"""Every criterion, in the order outputs list them."""

PRESET_WEIGHTS: dict[PriorityPreset, dict[Criterion, float]] = {
    # The classic selection guidance names the question each buyer asks first; these presets
    # weight that question most and keep every other criterion in the total:
    # "the fastest training at scale" -> step time dominates, then room to grow.
    "max_performance": {
        "performance": 0.60,
        "capex": 0.05,
        "tco": 0.10,
        "scalability": 0.15,
        "operations": 0.05,
        "ecosystem": 0.05,
    },
    # "the least money for a given cluster" -> purchase price and lifetime cost dominate.
    "cost_sensitive": {
        "performance": 0.15,
        "capex": 0.35,
        "tco": 0.35,
        "scalability": 0.05,
        "operations": 0.05,
        "ecosystem": 0.05,
    },
    # "the same fabric on premises and in the cloud" -> availability across clouds and vendors
    # (the ecosystem criterion already folds in the technology's cloud availability).
    "cloud_hybrid": {
        "performance": 0.20,
        "capex": 0.05,
        "tco": 0.15,
        "scalability": 0.10,
        "operations": 0.10,
        "ecosystem": 0.40,
    },
    # "what our network team can run" -> the operations burden, which is already weighted by
    # the team's stated experience (``team:`` in the spec), dominates.
    "ethernet_team": {
        "performance": 0.20,
        "capex": 0.05,
        "tco": 0.15,
        "scalability": 0.10,
        "operations": 0.40,
        "ecosystem": 0.10,
    },
    # No single question dominates: step time and lifetime cost lead, the rest share the remainder.
    "balanced": {
        "performance": 0.25,
        "capex": 0.10,
        "tco": 0.25,
        "scalability": 0.15,
        "operations": 0.15,
        "ecosystem": 0.10,
    },
}
"""Weights of each priority preset (each sums to 1)."""


def criterion_weights(priorities: PriorityPreset | PriorityWeights) -> dict[Criterion, float]:
    """Weights per criterion, summing to 1, from a preset name or explicit weights.

    Parameters
    ----------
    priorities
        A preset name or :class:`~fabricplan.model.scenario.PriorityWeights` (any non-negative
        numbers, not all zero).

    Returns
    -------
    dict
        Criterion -> weight, in :data:`CRITERIA` order.

    Examples
    --------
    >>> criterion_weights("cost_sensitive")["tco"]
    0.35
    """
    given: dict[Criterion, float]
    if isinstance(priorities, PriorityWeights):
        given = {c: float(getattr(priorities, c)) for c in CRITERIA}
    else:
        given = PRESET_WEIGHTS[priorities]
    total = sum(given.values())
    return {c: given[c] / total for c in CRITERIA}


def priorities_label(priorities: PriorityPreset | PriorityWeights) -> str:
    """How the weights were chosen, in words (``preset 'balanced'`` or ``explicit weights``).

    Examples
    --------
    >>> priorities_label("balanced")
    "preset 'balanced'"
    """
    if isinstance(priorities, PriorityWeights):
        return "explicit weights"
    return f"preset {priorities!r}"
