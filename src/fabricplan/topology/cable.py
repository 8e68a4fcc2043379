"""Choosing the cable or optic for a group of links.

Rule: among the catalog cables that reach far enough, take the slowest speed at or above the
link speed (a faster cable runs at the link's speed), then the cheapest (a cable with no price
counts as infinitely dear, so priced ones win), then the shortest reach class, then the id.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from fabricplan.model.hardware import CableSpec, PriceEntry


def cable_for(
    cables: Iterable[CableSpec],
    prices: Mapping[str, PriceEntry],
    speed_gbps: float,
    reach_m: float,
) -> CableSpec | None:
    """The cable for links of ``speed_gbps`` over ``reach_m`` metres, or ``None`` if none reaches.

    Parameters
    ----------
    cables
        Candidates (``ValidScenario.cables``).
    prices
        Price book (``ValidScenario.prices``) keyed by catalog id.
    speed_gbps
        Link speed.
    reach_m
        Longest cable run of the group.

    Examples
    --------
    >>> from fabricplan.model.hardware import Figure
    >>> def cable(id, kind, reach):
    ...     return CableSpec(id=id, name=id, source="test", date="2024", cable_kind=kind,
    ...                      speed_gbps=400, max_reach_m=reach,
    ...                      power_w=Figure(value=0, basis="estimate"),
    ...                      ns_per_m=Figure(value=5, basis="estimate"))
    >>> catalog = [cable("dac", "dac", 2), cable("optic", "optic", 100)]
    >>> cable_for(catalog, {}, 400, 1.5).id, cable_for(catalog, {}, 400, 30).id
    ('dac', 'optic')
    >>> cable_for(catalog, {}, 800, 1.5) is None
    True
    """
    fitting = [c for c in cables if c.speed_gbps >= speed_gbps and c.max_reach_m >= reach_m]
    if not fitting:
        return None

    def key(cable: CableSpec) -> tuple[float, float, float, str]:
        entry = prices.get(cable.id)
        price_usd = entry.price_usd if entry is not None else math.inf
        return (cable.speed_gbps, price_usd, cable.max_reach_m, cable.id)

    return min(fitting, key=key)
