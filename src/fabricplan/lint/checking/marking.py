"""Switch-side classification rules: RoCE DSCP (L02), CNP queue (L03), trust (L09).

The NIC side of L02 and L03, and their agreement with the switches, is in
:mod:`fabricplan.lint.checking.fabric_check`.

>>> from fabricplan.lint.model import DeviceConfig, PortConfig, QueueScheduler
>>> port = PortConfig("Ethernet0", trust="dscp", pfc_priorities=frozenset({3}),
...     dscp_to_priority={26: 3, 48: 6}, scheduler={6: QueueScheduler("dwrr", 15)})
>>> sw = DeviceConfig("leaf1", "switch", "sonic", "leaf1.json", ports=(port,))
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> [f.what for f in check_cnp_queue(LintContext((sw,), infer_intent([sw])))]
['the CNP queue is not strict priority']
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricplan.lint.checking.rule import (
    LintContext,
    LintFinding,
    finding,
    format_value,
    grouped,
    lossless_domain,
    port_list,
)
from fabricplan.lint.model import PortConfig

DSCP_TRUST = ("dscp", "both")
"""Trust modes that classify IP packets on DSCP (``both`` is Cumulus ``pcp,dscp``)."""


def _classifying(ports: tuple[PortConfig, ...]) -> list[PortConfig]:
    return [p for p in ports if p.trust in DSCP_TRUST and p.dscp_to_priority is not None]


def check_roce_dscp(ctx: LintContext) -> Iterator[LintFinding]:
    """L02 on switches: the RoCE DSCP lands in a lossless priority on every port."""
    want = ctx.intent.lossless_priorities
    dscp = ctx.intent.roce_dscp
    for device in ctx.switches:
        ports = _classifying(lossless_domain(device))
        if dscp is None:
            for priority in sorted(want):
                unreachable = [
                    p for p in ports if priority not in (p.dscp_to_priority or {}).values()
                ]
                if unreachable:
                    yield finding(
                        "L02",
                        device,
                        f"{port_list(unreachable)} dscp map",
                        None,
                        f"no DSCP maps to lossless priority {priority}",
                        unreachable[0].origin_of("dscp_to_priority"),
                    )
            continue
        wrong = [p for p in ports if (p.dscp_to_priority or {}).get(dscp) not in want]
        basis = ctx.intent.basis.get("roce_dscp", "")
        for mapped, group in grouped(wrong, lambda p: (p.dscp_to_priority or {}).get(dscp)):
            yield finding(
                "L02",
                device,
                f"{port_list(group)} dscp {dscp}",
                f"priority {format_value(mapped)}",
                f"the RoCE DSCP ({basis}) is not mapped to lossless priority {format_value(want)}",
                group[0].origin_of("dscp_to_priority"),
            )


def check_cnp_queue(ctx: LintContext) -> Iterator[LintFinding]:
    """L03 on switches: the CNP DSCP goes to a strict, non-PFC queue that does not drop."""
    cnp = ctx.intent.cnp_dscp
    want = ctx.intent.lossless_priorities
    for device in ctx.switches:
        ports = _classifying(lossless_domain(device))
        unmapped = [p for p in ports if cnp not in (p.dscp_to_priority or {})]
        if unmapped:
            yield finding(
                "L03",
                device,
                f"{port_list(unmapped)} dscp {cnp}",
                None,
                "the CNP DSCP is not mapped (CNPs fall into the default class)",
                unmapped[0].origin_of("dscp_to_priority"),
            )
        mapped = [p for p in ports if cnp in (p.dscp_to_priority or {})]
        shared = [p for p in mapped if (p.dscp_to_priority or {})[cnp] in want]
        if shared:
            yield finding(
                "L03",
                device,
                f"{port_list(shared)} dscp {cnp}",
                f"priority {(shared[0].dscp_to_priority or {})[cnp]}",
                "CNPs share the lossless RoCE priority: they wait behind the data they throttle",
                shared[0].origin_of("dscp_to_priority"),
            )
        others = [p for p in mapped if p not in shared]
        not_strict = [p for p in others if _cnp_scheduler_kind(p, cnp) not in (None, "strict")]
        if not_strict:
            queue = _cnp_queue(not_strict[0], cnp)
            yield finding(
                "L03",
                device,
                f"{port_list(not_strict)} queue {queue} scheduler",
                _cnp_scheduler_kind(not_strict[0], cnp),
                "the CNP queue is not strict priority",
                not_strict[0].origin_of(f"scheduler.{queue}"),
            )
        dropping = [p for p in others if _cnp_queue_drops(p, cnp)]
        if dropping:
            queue = _cnp_queue(dropping[0], cnp)
            yield finding(
                "L03",
                device,
                f"{port_list(dropping)} queue {queue} wred",
                "drop",
                "WRED drops on the CNP queue (CNPs are not ECN-capable and are dropped)",
                dropping[0].origin_of(f"ecn.{queue}"),
            )


def _cnp_queue(port: PortConfig, cnp: int) -> int:
    return port.queue_of((port.dscp_to_priority or {})[cnp])


def _cnp_scheduler_kind(port: PortConfig, cnp: int) -> str | None:
    scheduler = port.scheduler.get(_cnp_queue(port, cnp))
    return scheduler.kind if scheduler is not None else None


def _cnp_queue_drops(port: PortConfig, cnp: int) -> bool:
    profile = port.ecn.get(_cnp_queue(port, cnp))
    return profile is not None and profile.drop_enabled


def check_trust(ctx: LintContext) -> Iterator[LintFinding]:
    """L09: every lossless port (and NIC) classifies on DSCP."""
    for device in ctx.devices:
        ports = [
            p
            for p in lossless_domain(device)
            if p.trust not in DSCP_TRUST and (p.trust is not None or device.kind == "switch")
        ]
        for trust, group in grouped(ports, lambda p: p.trust):
            yield finding(
                "L09",
                device,
                f"{port_list(group)} trust",
                trust or "no DSCP map",
                "the port does not classify on DSCP",
                group[0].origin_of("trust") or group[0].origin_of("pfc_priorities"),
            )
