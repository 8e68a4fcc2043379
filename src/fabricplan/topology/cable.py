"""Choosing the cable or optic for a run, and what one link of it costs.

Rule: among the catalog classes that reach far enough (and serve host links, for a link to a
NIC), take the slowest speed at or above the link speed (a faster cable runs at the link's
speed), then the cheapest per link at that length (a class with an unpriced part counts as
infinitely dear, so priced ones win), then the shortest reach class, then the id.

A link's price: a copper or active optical cable is one item; a composed optical link is its
switch-side module share (``1 / links`` of a twin-port module in a cage that carries two links,
a whole single module otherwise) at each switch end, the NIC module at a host end, and its fibre
cord (``price(fibre) + length x price(fibre-per-m)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

from fabricplan.model.hardware import CableSpec, ModuleSpec, PriceEntry, fibre_cord_usd


def switch_module(cable: CableSpec, links_per_cage: int) -> ModuleSpec | None:
    """The one module a switch cage carrying ``links_per_cage`` links of this class takes, or
    ``None`` when the class has no module of that many links (a cage holds one module: a
    64-cage switch at 256 x 400G takes 64 four-link modules, never 128 twin-ports).

    >>> from fabricplan.catalog import load_catalog
    >>> dr2 = load_catalog().get_typed("optic-400g-dr2", CableSpec)
    >>> switch_module(dr2, 4).item, switch_module(dr2, 2)
    ('osfp-1.6t-2xdr4', None)
    """
    for module in cable.switch_modules:
        if module.links == links_per_cage:
            return module
    return None


def _price(prices: Mapping[str, PriceEntry], item: str) -> float:
    entry = prices.get(item)
    return entry.price_usd if entry is not None else math.inf


def link_price_usd(
    cable: CableSpec,
    prices: Mapping[str, PriceEntry],
    host_end: bool,
    links_per_cage: int,
    length_m: float,
) -> float:
    """What one link of ``cable`` costs (``inf`` when a part is unpriced or missing).

    ``host_end``: one end is a NIC (a node-leaf or management link), else both ends are switch
    cages carrying ``links_per_cage`` links each.
    """
    if not cable.composed:
        return _price(prices, cable.id)
    module = switch_module(cable, links_per_cage)
    if module is None:
        return math.inf
    switch_share = _price(prices, module.item) / module.links
    if host_end:
        if cable.host_module is None or not cable.host_links:
            return math.inf
        ends = switch_share + _price(prices, cable.host_module.item)
    else:
        ends = 2 * switch_share
    fibre = fibre_cord_usd(prices, cable.fibre, length_m) if cable.fibre else 0.0
    return ends + fibre


CHOOSER_MEMO_SIZE = 64
"""How many choosers :func:`cable_chooser` keeps (a 100k-GPU compare asks 288 times for 6)."""

_choosers: dict[tuple[int, int, float, bool, int], tuple[object, object, _Chooser]] = {}


def cable_chooser(
    cables: Iterable[CableSpec],
    prices: Mapping[str, PriceEntry],
    speed_gbps: float,
    host_end: bool = False,
    links_per_cage: int = 1,
) -> Callable[[float], CableSpec | None]:
    """:func:`cable_for` with everything but the length fixed, for many runs of one group (a
    link's price is ``fixed + per_metre x length``, so the parts are priced once).

    For the catalog's cables as a tuple (``ValidScenario.cables``, frozen) the chooser, and each
    length's answer, are made once while the same tuple and price book are asked again: the
    memo holds both, so a later object of the same ``id`` is never taken for them.
    """
    if not isinstance(cables, tuple):
        return _chooser(cables, prices, speed_gbps, host_end, links_per_cage)
    key = (id(cables), id(prices), speed_gbps, host_end, links_per_cage)
    kept = _choosers.get(key)
    if kept is not None and kept[0] is cables and kept[1] is prices:
        return kept[2]
    made = _chooser(cables, prices, speed_gbps, host_end, links_per_cage)
    if len(_choosers) >= CHOOSER_MEMO_SIZE:
        del _choosers[next(iter(_choosers))]  # the oldest
    _choosers[key] = (cables, prices, made)
    return made


def forget_cable_choosers() -> None:
    """Empty the memo of :func:`cable_chooser` (a benchmark times a compare from cold)."""
    _choosers.clear()


def _chooser(
    cables: Iterable[CableSpec],
    prices: Mapping[str, PriceEntry],
    speed_gbps: float,
    host_end: bool,
    links_per_cage: int,
) -> _Chooser:
    options: list[tuple[float, float, float, float, str, CableSpec]] = []
    for c in cables:
        if c.speed_gbps < speed_gbps or (host_end and not c.host_links):
            continue
        if c.composed and switch_module(c, links_per_cage) is None:
            continue
        if host_end and c.composed and c.host_module is None:
            continue
        fixed = link_price_usd(c, prices, host_end, links_per_cage, 0.0)
        per_m = 0.0
        if c.composed and c.fibre:
            per_m = link_price_usd(c, prices, host_end, links_per_cage, 1.0) - fixed
        options.append((c.speed_gbps, fixed, per_m, c.max_reach_m, c.id, c))

    return _Chooser(options)


class _Chooser:
    """The cable for a run's length among fixed options, each length's answer kept."""

    def __init__(self, options: list[tuple[float, float, float, float, str, CableSpec]]) -> None:
        self.options = options
        self.answers: dict[float, CableSpec | None] = {}

    def __call__(self, reach_m: float) -> CableSpec | None:
        found = self.answers.get(reach_m, _UNSEEN)
        if found is _UNSEEN:
            found = self.answers[reach_m] = self._choose(reach_m)
        return found  # type: ignore[return-value]

    def _choose(self, reach_m: float) -> CableSpec | None:
        options = self.options
        best: tuple[float, float, float, str] | None = None
        found: CableSpec | None = None
        for speed, fixed, per_m, reach, cable_id, cable in options:
            if reach < reach_m:
                continue
            key = (speed, fixed + per_m * reach_m, reach, cable_id)
            if best is None or key < best:
                best, found = key, cable
        return found


_UNSEEN = object()


def cable_for(
    cables: Iterable[CableSpec],
    prices: Mapping[str, PriceEntry],
    speed_gbps: float,
    reach_m: float,
    host_end: bool = False,
    links_per_cage: int = 1,
) -> CableSpec | None:
    """The cable for links of ``speed_gbps`` over ``reach_m`` metres, or ``None`` if none reaches.

    Parameters
    ----------
    cables
        Candidates (``ValidScenario.cables``).
    prices
        Price book (``ValidScenario.prices``) keyed by item id.
    speed_gbps
        Link speed.
    reach_m
        Length of the run.
    host_end
        One end of the link is a NIC (classes with ``host_links: false`` do not serve it).
    links_per_cage
        Links one switch cage carries (2 for a twin-port OSFP switch at 400G).

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
    return cable_chooser(cables, prices, speed_gbps, host_end, links_per_cage)(reach_m)
