"""Adaptive routing only where the ASIC applies it (L15).

Cumulus Linux on Spectrum-4: adaptive routing works on L3 physical interfaces only (not bonds,
SVIs or subinterfaces) and not on 800G links (docs/refs.md B.5).

>>> from fabricplan.lint.model import DeviceConfig, PortConfig
>>> sw = DeviceConfig("leaf1", "switch", "nvue", "leaf1.yaml",
...     ports=(PortConfig("swp1", speed_gbps=800, adaptive_routing=True),))
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> [f.what for f in check_adaptive_routing(LintContext((sw,), infer_intent([sw])))]
['adaptive routing is not supported on 800G links']
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricplan.lint.checking.rule import LintContext, LintFinding, finding, grouped, port_list

AR_MAX_SPEED_GBPS = 400.0
"""Fastest link Spectrum-4 adaptive routing supports (not on 800G links, docs/refs.md B.5)."""


def check_adaptive_routing(ctx: LintContext) -> Iterator[LintFinding]:
    """L15: no adaptive routing on bonds or links faster than 400G."""
    for device in ctx.switches:
        enabled = [p for p in device.ports if p.adaptive_routing]
        bonds = [p for p in enabled if p.kind == "bond"]
        if bonds:
            yield finding(
                "L15",
                device,
                f"{port_list(bonds)} adaptive-routing",
                "on",
                "adaptive routing is not supported on bonds",
                bonds[0].origin_of("adaptive_routing"),
            )
        fast = [
            p
            for p in enabled
            if p.kind == "physical"
            and p.speed_gbps is not None
            and p.speed_gbps > AR_MAX_SPEED_GBPS
        ]
        for speed, group in grouped(fast, lambda p: p.speed_gbps):
            yield finding(
                "L15",
                device,
                f"{port_list(group)} adaptive-routing",
                "on",
                f"adaptive routing is not supported on {speed:g}G links",
                group[0].origin_of("adaptive_routing"),
            )
