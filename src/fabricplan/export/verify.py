"""Compare a built fabric's cables with the cut sheet: missing, extra, miswired, swapped.

Ends are ``(device, port)``; a port given only by number (ibnetdiscover) is named through the
plan's port numbers. Only planned cables with an end on a device that reported are compared, so
the LLDP table of one switch checks that switch's cables. Differences, in the order they are
looked for, each consuming the cables it explains:

1. **swapped**: two planned cables ``A1-Z1`` and ``A2-Z2`` are found as ``A1-Z2`` and ``A2-Z1``;
2. **miswired**: a planned cable ``A-Z`` is found at ``A`` going to ``Y``;
3. **missing**: a planned cable that is not there;
4. **extra**: a cable that is not in the plan.

>>> from fabricplan.export.cutsheet import SheetLink
>>> plan = [SheetLink("n1", "nic0", "leaf1", "p1"), SheetLink("n2", "nic0", "leaf1", "p2")]
>>> built = [SheetLink("n1", "nic0", "leaf1", "p2"), SheetLink("n2", "nic0", "leaf1", "p1")]
>>> [d.kind for d in compare_cabling(plan, built, {"leaf1"}).differences]
['swapped']
>>> compare_cabling(plan, plan, {"leaf1"}).equal
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fabricplan.export.cutsheet import SheetLink

__all__ = ["CablingComparison", "CablingDifference", "compare_cabling"]

HOST_LINK_GROUPS = frozenset({"node_leaf", "management"})
"""Link groups whose A end is a host (left out of the summary by switch)."""

End = tuple[str, str]
Link = frozenset[End]
DifferenceKind = Literal["swapped", "miswired", "missing", "extra"]


@dataclass(frozen=True, slots=True)
class CablingDifference:
    """One difference between plan and fabric, with the cables involved and the fix."""

    kind: DifferenceKind
    planned: tuple[tuple[End, End], ...]
    observed: tuple[tuple[End, End], ...]
    fix: str

    def describe(self) -> str:
        def show(pairs: tuple[tuple[End, End], ...]) -> str:
            return "; ".join(f"{a[0]}:{a[1]} <-> {b[0]}:{b[1]}" for a, b in pairs) or "-"

        return f"{self.kind}: planned {show(self.planned)}; found {show(self.observed)}; {self.fix}"


@dataclass(frozen=True, slots=True)
class CablingComparison:
    """The result of :func:`compare_cabling`."""

    planned: int
    """Planned cables in scope (an end on a reporting device)."""
    observed: int
    matched: int
    differences: tuple[CablingDifference, ...]
    by_switch: dict[str, Counter[str]] = field(default_factory=dict)
    """Per switch touched (every device but the plan's hosts), the count of each kind."""

    @property
    def equal(self) -> bool:
        return not self.differences


def _name(end: End) -> str:
    return f"{end[0]}:{end[1]}"


def _pair(link: Link) -> tuple[End, End]:
    a, b = sorted(link)
    return a, b


def _ends(link: SheetLink, names: dict[tuple[str, int], str]) -> tuple[End, End]:
    def port(device: str, name: str, number: int | None) -> str:
        if name:
            return name
        if number is not None:
            return names.get((device, number), f"#{number}")
        return ""

    return (
        (link.a_device, port(link.a_device, link.a_port, link.a_port_number)),
        (link.z_device, port(link.z_device, link.z_port, link.z_port_number)),
    )


def _short(end: End, planned: set[str]) -> End:
    """An LLDP system name given as an FQDN (``spine-001.dc1.example``) names the plan's device."""
    device, port = end
    if device not in planned and "." in device and device.split(".", 1)[0] in planned:
        return device.split(".", 1)[0], port
    return end


def compare_cabling(
    plan: Sequence[SheetLink], observed: Iterable[SheetLink], reporters: Iterable[str]
) -> CablingComparison:
    """Differences between the planned cables and the observed ones (see the module docstring).

    Parameters
    ----------
    plan
        The cut sheet's cables.
    observed
        What the fabric reports (LLDP, ibnetdiscover, a cut sheet of the built fabric).
    reporters
        Devices that reported: planned cables touching none of them are out of scope.

    Returns
    -------
    CablingComparison
        Counts of planned, observed and matched cables, every difference (missing, extra,
        miswired, swapped) and the kinds per switch.

    Examples
    --------
    >>> from fabricplan.export.cutsheet import SheetLink
    >>> plan = [SheetLink("leaf-001", "p1", "node-01", "eth0")]
    >>> built = [SheetLink("leaf-001", "p1", "node-02", "eth0")]
    >>> result = compare_cabling(plan, built, ["leaf-001"])
    >>> result.planned, result.matched, result.equal
    (1, 0, False)
    """
    names: dict[tuple[str, int], str] = {}
    for sheet in plan:
        if sheet.a_port_number is not None:
            names[(sheet.a_device, sheet.a_port_number)] = sheet.a_port
        if sheet.z_port_number is not None:
            names[(sheet.z_device, sheet.z_port_number)] = sheet.z_port
    scope = set(reporters)
    planned_links: list[Link] = []
    for sheet in plan:
        a, z = _ends(sheet, names)
        if a[0] in scope or z[0] in scope:
            planned_links.append(frozenset({a, z}))
    planned_devices = {end[0] for link in planned_links for end in link}
    observed_links: list[Link] = []
    seen: set[Link] = set()
    for sheet in observed:
        a, z = (_short(end, planned_devices) for end in _ends(sheet, names))
        key = frozenset({a, z})
        if (a[0] in scope or z[0] in scope) and key not in seen:
            seen.add(key)
            observed_links.append(key)

    planned_set = set(planned_links)
    matched = planned_set & seen
    plan_left = [link for link in planned_links if link not in matched]
    obs_left = [link for link in observed_links if link not in matched]
    plan_open = set(plan_left)
    obs_open = set(obs_left)
    plan_peer: dict[End, End] = {}
    for link in plan_left:
        a, b = _pair(link)
        plan_peer[a], plan_peer[b] = b, a
    obs_peer: dict[End, End] = {}
    for link in obs_left:
        a, b = _pair(link)
        obs_peer.setdefault(a, b)
        obs_peer.setdefault(b, a)
    differences: list[CablingDifference] = []

    def observed_at(end: End) -> End | None:
        peer = obs_peer.get(end)
        if peer is None or frozenset({end, peer}) not in obs_open:
            return None
        return peer

    for link in plan_left:
        if link not in plan_open:
            continue
        for x, y in (_pair(link), _pair(link)[::-1]):
            f = observed_at(x)
            if f is None:
                continue
            g = plan_peer.get(f)
            if g is None:
                continue
            other = frozenset({f, g})
            if (
                other not in plan_open
                or other == link
                or observed_at(g) != y
                or frozenset({g, y}) not in obs_open
            ):
                continue
            plan_open -= {link, other}
            obs_open -= {frozenset({x, f}), frozenset({g, y})}
            differences.append(
                CablingDifference(
                    "swapped",
                    (_pair(link), _pair(other)),
                    (_pair(frozenset({x, f})), _pair(frozenset({g, y}))),
                    f"swap the cables at {_name(f)} and {_name(y)} (the ends at {_name(x)} and"
                    f" {_name(g)} are right)",
                )
            )
            break
    for link in plan_left:
        if link not in plan_open:
            continue
        for x, y in (_pair(link), _pair(link)[::-1]):
            f = observed_at(x)
            if f is None:
                continue
            plan_open.discard(link)
            obs_open.discard(frozenset({x, f}))
            differences.append(
                CablingDifference(
                    "miswired",
                    (_pair(link),),
                    (_pair(frozenset({x, f})),),
                    f"move the cable at {_name(x)} from {_name(f)} to {_name(y)}",
                )
            )
            break
    for link in plan_left:
        if link in plan_open:
            a, b = _pair(link)
            differences.append(
                CablingDifference(
                    "missing", (_pair(link),), (), f"connect {_name(a)} to {_name(b)}"
                )
            )
    for link in obs_left:
        if link in obs_open:
            a, b = _pair(link)
            differences.append(
                CablingDifference(
                    "extra",
                    (),
                    (_pair(link),),
                    f"remove the cable between {_name(a)} and {_name(b)} (not in the plan)",
                )
            )
    by_switch: dict[str, Counter[str]] = {}
    for difference in differences:
        devices = {end[0] for pair in (*difference.planned, *difference.observed) for end in pair}
        for device in devices:
            by_switch.setdefault(device, Counter())[difference.kind] += 1
    return CablingComparison(
        planned=len(planned_links),
        observed=len(observed_links),
        matched=len(matched),
        differences=tuple(differences),
        by_switch=by_switch,
    )
