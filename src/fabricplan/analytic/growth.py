"""What growing a built fabric to a target size costs: the hardware bought and the links moved.

The design at the target is made by the designer with the same choices (technology, switch,
topology, planes); this module prices the difference against today's design:

- hardware: every bill-of-materials item the target needs beyond today's quantity, at the
  scenario's price (what is already bought is reused; a surplus is sunk);
- recabling: a new tier or a new spine grouping moves every link above the leaves (the old
  spines become a pod's or a group's), and a new tier that leaves each leaf fewer host ports
  (a one-switch plane becoming a leaf) moves the host links it no longer holds; more spines
  in the same tiers move the share ``1 - S_now / S_target`` of the leaf-spine links (each
  leaf's uplinks are spread over the new spines), and likewise for the spine-core links with
  the core count. Each moved link costs :data:`RECABLE_USD_PER_LINK`.

Growth to today's size costs nothing: the same design has no item beyond today's quantities and
no tier or switch count changes.

>>> from fabricplan.analytic.cost import _tiny_leaf_spine
>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 16}})
>>> now = _tiny_leaf_spine()
>>> growth_result(valid, now, now, 16).added_capex_usd
0.0
"""

from __future__ import annotations

from fabricplan.model.fabric import FabricDesign, LinkGroupName, TierName
from fabricplan.model.results import GrowthResult
from fabricplan.model.scenario import ValidScenario

RECABLE_USD_PER_LINK = 60.0
"""Labour to move, re-label and test one installed link. Estimate: about 0.5 h of a data-centre
technician at roughly 120 USD/h (fully loaded); no published per-link rate was found. Downtime
of the moved links is not counted (growth is usually done in a maintenance window)."""


def _moved_share(links: int, kept: int, of: int) -> tuple[float, int]:
    """The share ``1 - kept / of`` of ``links`` that moves, and how many links that is."""
    share = 1.0 - kept / of
    return share, round(links * share)


def _moved_links(now: FabricDesign, target: FabricDesign) -> tuple[int, list[str]]:
    if target.tiers != now.tiers:
        moved = sum(g.count for g in now.link_groups if g.name in ("leaf_spine", "spine_core"))
        tier_notes = [
            f"a new tier ({now.tiers} -> {target.tiers}): every one of today's {moved:,} links"
            " above the leaves is moved"
        ]
        hosts = sum(g.count for g in now.link_groups if g.name == "node_leaf")
        if 0 < target.hosts_per_leaf < now.hosts_per_leaf and hosts:
            # A leaf that gives ports to its new uplinks keeps fewer hosts: the rest move to
            # the new leaves (one switch per plane becoming a leaf keeps half at 1:1).
            share, count = _moved_share(hosts, target.hosts_per_leaf, now.hosts_per_leaf)
            moved += count
            tier_notes.append(
                f"leaves keep {target.hosts_per_leaf:,} hosts instead of {now.hosts_per_leaf:,}:"
                f" {share:.0%} of today's {hosts:,} node links ({count:,}) move to new leaves"
            )
        return moved, tier_notes
    if target.spine_groups != now.spine_groups:
        moved = sum(g.count for g in now.link_groups if g.name in ("leaf_spine", "spine_core"))
        return moved, [
            f"spine grouping {now.spine_groups} -> {target.spine_groups}: every one of today's"
            f" {moved:,} links above the leaves is re-cabled to its new spine group"
        ]
    moved = 0
    notes: list[str] = []
    pairs: tuple[tuple[TierName, LinkGroupName], ...] = (
        ("spine", "leaf_spine"),
        ("core", "spine_core"),
    )
    for tier, group in pairs:
        before, after = now.switches[tier], target.switches[tier]
        links = now.links.get(group, 0)
        if before and after > before and links:
            share, count = _moved_share(links, before, after)
            moved += count
            notes.append(
                f"{tier} switches {before:,} -> {after:,}: {share:.0%} of today's {links:,}"
                f" {group} links ({count:,}) are moved to the new {tier}s"
            )
    return moved, notes


def growth_result(
    valid: ValidScenario,
    now: FabricDesign,
    target: FabricDesign | None,
    target_gpus: int,
    why_unreachable: str = "",
) -> GrowthResult:
    """The cost of growing ``now`` to ``target`` (the designer's design at ``target_gpus``).

    Parameters
    ----------
    valid
        Today's scenario (its prices).
    now
        Today's design.
    target
        The design at the target with the same choices; ``None`` when none can be built.
    target_gpus
        The target size.
    why_unreachable
        The designer's reason when ``target`` is ``None``.

    Returns
    -------
    GrowthResult
        ``added_capex_usd`` = items beyond today's quantities x price + moved links x
        :data:`RECABLE_USD_PER_LINK`; ``None`` when unreachable.
    """
    if target is None or any(f.severity == "error" for f in target.findings):
        reason = why_unreachable or "; ".join(
            f.message for f in (target.findings if target else ()) if f.severity == "error"
        )
        return GrowthResult(
            target_gpus=target_gpus,
            reachable=False,
            added_capex_usd=None,
            notes=(
                f"{now.technology} with {now.switch_id} ({now.topology}, {now.planes} plane(s))"
                f" cannot grow to {target_gpus:,} GPUs: {reason}",
            ),
        )
    have: dict[str, int] = {}
    for line in now.bom:
        have[line.item] = have.get(line.item, 0) + line.quantity
    need: dict[str, int] = {}
    for line in target.bom:
        need[line.item] = need.get(line.item, 0) + line.quantity
    added = {item: q - have.get(item, 0) for item, q in need.items() if q > have.get(item, 0)}
    hardware = 0.0
    notes: list[str] = []
    for item, quantity in sorted(added.items()):
        entry = valid.prices.get(item)
        price = entry.price_usd if entry is not None else 0.0
        hardware += quantity * price
        notes.append(
            f"+{quantity:,} {item} at ${price:,.0f}"
            + ("" if entry is not None else " (unpriced: counts $0)")
        )
    moved, moved_notes = _moved_links(now, target)
    notes += moved_notes
    if moved:
        notes.append(f"recabling: {moved:,} links x ${RECABLE_USD_PER_LINK:,.0f} (estimate)")
    if not added and not moved:
        notes.append(f"{target_gpus:,} GPUs fit today's design: nothing to buy or move")
    return GrowthResult(
        target_gpus=target_gpus,
        reachable=True,
        added_capex_usd=hardware + moved * RECABLE_USD_PER_LINK,
        added_items=added,
        recabled_links=moved,
        notes=tuple(notes),
    )
