"""Choosing the cable or optic for a run, and what one link of it costs.

Rule: among the catalog classes that reach far enough (and serve host links, for a link to a
NIC), take the slowest speed at or above the link speed (a faster cable runs at the link's
speed), then the cheapest per link at that length (a class with an unpriced part counts as
infinitely dear, so priced ones win), then the shortest reach class, then the id.

Lanes: a class is used at an end only if that end's electrical lanes run at the device's SerDes
lane rate (:func:`port_lanes`): a switch cage takes a switch module of its lane rate; a NIC
takes ``host_module``, or the class's ``host_gearbox_module`` when only that one matches (a
ConnectX-7, 4 x 100G, on 400G DR2 optics of 2 x 200G lanes); a cable bought whole needs both
ends at one of its ``lane_gbps``. A lane rate not stated (``None`` or empty) fits anything.

Optics: the two modules of a link must match on the fibre too (lanes x rate, fibre, wavelengths,
cords: :meth:`~fabricplan.model.hardware.OpticsSpec.links_with`): a NIC module is taken only if
its optical side matches the switch module's. The catalog refuses a class whose modules differ
(FP1237), so this holds by construction for the shipped catalog and is checked again here for a
catalog built in Python.

A link's price: a copper or active optical cable is one item; a composed optical link is its
switch-side module share (``1 / links`` of a twin-port module in a cage that carries two links,
a whole single module otherwise) at each switch end, the NIC module at a host end, and its fibre
cord (``price(fibre) + length x price(fibre-per-m)``) times the cords a link takes (two for an
800G 2 x DR4 port, one per MPO-12).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

from fabricplan.model.hardware import CableSpec, Figure, ModuleSpec, PriceEntry, fibre_cord_usd

Lanes = frozenset[float] | None
"""The lane rates a device's port can run at its speed (``None``: not stated, anything fits)."""


def port_lanes(
    lane_gbps: Figure | None, speed_gbps: float, slower_lanes_gbps: tuple[float, ...] = ()
) -> Lanes:
    """The electrical lane rates of a device's port at ``speed_gbps`` (``None``: not stated).

    A port slower than one lane runs a single lane at its own speed (IEEE 802.3 SerDes also run
    the lower standard rates); every other port runs its lanes at the SerDes rate, or at one of
    the ``slower_lanes_gbps`` the catalog says it also runs.

    >>> sorted(port_lanes(Figure(value=200, basis="vendor"), 400, (100,)))
    [100, 200.0]
    >>> port_lanes(None, 400) is None, sorted(port_lanes(Figure(value=100, basis="vendor"), 50))
    (True, [50])
    """
    if lane_gbps is None:
        return None
    return frozenset((min(lane_gbps.value, speed_gbps), *slower_lanes_gbps))


def _fits(module_lane_gbps: float | None, device: Lanes) -> bool:
    return module_lane_gbps is None or device is None or module_lane_gbps in device


def optics_match(a: ModuleSpec, b: ModuleSpec) -> bool:
    """Whether modules ``a`` and ``b`` link over the fibre (optics not stated: they do).

    >>> from fabricplan.catalog import load_catalog
    >>> dr4 = load_catalog().get_typed("optic-400g-dr4", CableSpec)
    >>> optics_match(dr4.twin_module, dr4.host_module)
    True
    """
    if a.optics is None or b.optics is None:
        return True
    return a.optics.links_with(b.optics)


def host_module_for(
    cable: CableSpec, host_lanes: Lanes, switch_end: ModuleSpec | None = None
) -> ModuleSpec | None:
    """The NIC-side module of ``cable`` whose electrical lanes match the NIC's (and whose optics
    match ``switch_end``'s, the module at the link's switch end), the plain module first, then
    the gearbox variant; ``None`` when neither does (or the class has none).

    >>> from fabricplan.catalog import load_catalog
    >>> dr2 = load_catalog().get_typed("optic-400g-dr2", CableSpec)
    >>> [getattr(host_module_for(dr2, frozenset({lane})), "item", None) for lane in (200, 100, 50)]
    ['osfp-400g-dr2-nic', 'osfp-400g-dr2-gearbox-nic', None]
    """
    for module in cable.host_modules:
        if _fits(module.lane_gbps, host_lanes) and (
            switch_end is None or optics_match(module, switch_end)
        ):
            return module
    return None


def whole_cable_fits(cable: CableSpec, *ends: Lanes) -> bool:
    """Whether a cable bought whole joins ends of these lane rates: they share a rate that is
    among its ``lane_gbps`` (a passive cable converts nothing).

    >>> from fabricplan.catalog import load_catalog
    >>> dac = load_catalog().get_typed("dac-400g", CableSpec)
    >>> whole_cable_fits(dac, frozenset({100}), frozenset({100})), whole_cable_fits(
    ...     dac, frozenset({100}), frozenset({200}))
    (True, False)
    """
    common = set(cable.lane_gbps) if cable.lane_gbps else None
    for end in ends:
        if end is not None:
            common = set(end) if common is None else common & end
    return common is None or bool(common)


def switch_module(
    cable: CableSpec, links_per_cage: int, switch_lanes: Lanes = None
) -> ModuleSpec | None:
    """The one module a switch cage carrying ``links_per_cage`` links of this class takes, or
    ``None`` when the class has no module of that many links (a cage holds one module: a
    64-cage switch at 256 x 400G takes 64 four-link modules, never 128 twin-ports) or none of
    the switch's lane rate ``switch_lanes`` (``None``: any).

    >>> from fabricplan.catalog import load_catalog
    >>> dr2 = load_catalog().get_typed("optic-400g-dr2", CableSpec)
    >>> switch_module(dr2, 4).item, switch_module(dr2, 2)
    ('osfp-1.6t-2xdr4', None)
    """
    for module in cable.switch_modules:
        if module.links == links_per_cage and _fits(module.lane_gbps, switch_lanes):
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
    switch_lanes: Lanes = None,
    host_lanes: Lanes = None,
) -> float:
    """What one link of ``cable`` costs (``inf`` when a part is unpriced or missing, or no part
    matches the ends' lane rates).

    ``host_end``: one end is a NIC (a node-leaf or management link), else both ends are switch
    cages carrying ``links_per_cage`` links each. ``switch_lanes`` / ``host_lanes``:
    the electrical lane rates of the switch and NIC ports (:func:`port_lanes`).
    """
    if not cable.composed:
        lanes = (switch_lanes, host_lanes if host_end else None)
        return _price(prices, cable.id) if whole_cable_fits(cable, *lanes) else math.inf
    module = switch_module(cable, links_per_cage, switch_lanes)
    if module is None:
        return math.inf
    switch_share = _price(prices, module.item) / module.links
    if host_end:
        host = host_module_for(cable, host_lanes, module)
        if host is None or not cable.host_links:
            return math.inf
        ends = switch_share + _price(prices, host.item)
    else:
        ends = 2 * switch_share
    fibre = 0.0
    if cable.fibre:
        fibre = cable.cords_per_link * fibre_cord_usd(prices, cable.fibre, length_m)
    return ends + fibre


CHOOSER_MEMO_SIZE = 64
"""How many choosers :func:`cable_chooser` keeps (a 100k-GPU compare asks 288 times for 6)."""

_ChooserKey = tuple[int, int, float, bool, int, Lanes, Lanes]
_choosers: dict[_ChooserKey, tuple[object, object, _Chooser]] = {}


def cable_chooser(
    cables: Iterable[CableSpec],
    prices: Mapping[str, PriceEntry],
    speed_gbps: float,
    host_end: bool = False,
    links_per_cage: int = 1,
    switch_lanes: Lanes = None,
    host_lanes: Lanes = None,
) -> Callable[[float], CableSpec | None]:
    """:func:`cable_for` with everything but the length fixed, for many runs of one group (a
    link's price is ``fixed + per_metre x length``, so the parts are priced once).

    For the catalog's cables as a tuple (``ValidScenario.cables``, frozen) the chooser, and each
    length's answer, are made once while the same tuple and price book are asked again: the
    memo holds both, so a later object of the same ``id`` is never taken for them.
    """
    lanes = (switch_lanes, host_lanes if host_end else None)
    if not isinstance(cables, tuple):
        return _chooser(cables, prices, speed_gbps, host_end, links_per_cage, *lanes)
    key = (id(cables), id(prices), speed_gbps, host_end, links_per_cage, *lanes)
    kept = _choosers.get(key)
    if kept is not None and kept[0] is cables and kept[1] is prices:
        return kept[2]
    made = _chooser(cables, prices, speed_gbps, host_end, links_per_cage, *lanes)
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
    switch_lanes: Lanes,
    host_lanes: Lanes,
) -> _Chooser:
    options: list[tuple[float, float, float, float, str, CableSpec]] = []
    lanes = (switch_lanes, host_lanes)
    for c in cables:
        if c.speed_gbps < speed_gbps or (host_end and not c.host_links):
            continue
        if not lanes_match(c, host_end, links_per_cage, *lanes):
            continue
        fixed = link_price_usd(c, prices, host_end, links_per_cage, 0.0, *lanes)
        per_m = 0.0
        if c.composed and c.fibre:
            per_m = link_price_usd(c, prices, host_end, links_per_cage, 1.0, *lanes) - fixed
        options.append((c.speed_gbps, fixed, per_m, c.max_reach_m, c.id, c))

    return _Chooser(options)


def lanes_match(
    cable: CableSpec,
    host_end: bool,
    links_per_cage: int,
    switch_lanes: Lanes,
    host_lanes: Lanes,
) -> bool:
    """Whether ``cable`` has, at each end of a link, a part of the device's lane rate (and of
    the cage's width at a switch).

    >>> from fabricplan.catalog import load_catalog
    >>> dr2 = load_catalog().get_typed("optic-400g-dr2", CableSpec)
    >>> lanes_match(dr2, True, 4, frozenset({200}), frozenset({100}))
    True
    >>> lanes_match(dr2, True, 4, frozenset({100}), frozenset({100}))
    False
    """
    if not cable.composed:
        return whole_cable_fits(cable, switch_lanes, host_lanes if host_end else None)
    module = switch_module(cable, links_per_cage, switch_lanes)
    if module is None:
        return False
    return not host_end or host_module_for(cable, host_lanes, module) is not None


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
    switch_lanes: Lanes = None,
    host_lanes: Lanes = None,
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
    switch_lanes, host_lanes
        Electrical lane rates of the switch and NIC ports (:func:`port_lanes`); ``None``:
        not stated, any class fits that end.

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
    return cable_chooser(
        cables, prices, speed_gbps, host_end, links_per_cage, switch_lanes, host_lanes
    )(reach_m)
