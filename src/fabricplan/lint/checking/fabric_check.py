"""Agreement between the NICs and the switches: RoCE marking (L02), CNP marking (L03), DCBX (L12).

A NIC marks; every switch hop classifies on that marking. These rules compare each NIC with the
intent (which the NICs themselves set, see
:func:`fabricplan.lint.checking.rule.infer_intent`) and with what the switches in the same lint
run do.

>>> from fabricplan.lint.model import DeviceConfig, NicSettings, PortConfig
>>> nic = DeviceConfig("gpu01", "nic", "nic_cc", "gpu01.txt", ports=(PortConfig("eth0"),),
...     nic=NicSettings(cnp_dscp=48, cnp_priority=7))
>>> sw = DeviceConfig("leaf1", "switch", "eos", "leaf1.cfg", ports=(PortConfig("Ethernet1",
...     trust="dscp", dscp_to_priority={48: 6}, pfc_priorities=frozenset({3})),))
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> [f.what for f in check_nic_cnp(LintContext((nic, sw), infer_intent([nic, sw])))]
['the NIC sends CNPs on priority 7 but the switches classify DSCP 48 into priority 6']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from fabricplan.lint.checking.rule import LintContext, LintFinding, finding, format_value
from fabricplan.lint.model import DeviceConfig


def _switch_priority_of(ctx: LintContext, dscp: int) -> int | None:
    """The priority most switch ports put ``dscp`` in (``None`` when no switch says)."""
    counts: Counter[int] = Counter()
    for device in ctx.switches:
        for port in device.ports:
            if port.trust in ("dscp", "both") and port.dscp_to_priority:
                priority = port.dscp_to_priority.get(dscp)
                if priority is not None:
                    counts[priority] += 1
    if not counts:
        return None
    return min(counts, key=lambda p: (-counts[p], p))


def check_nic_marking(ctx: LintContext) -> Iterator[LintFinding]:
    """L02 on NICs: the NIC marks the fabric's RoCE DSCP and maps it to the lossless priority."""
    want = ctx.intent.lossless_priorities
    dscp = ctx.intent.roce_dscp
    for device in ctx.nics:
        nic = device.nic
        port = device.ports[0]
        if (
            nic is not None
            and nic.roce_dscp is not None
            and dscp is not None
            and (nic.roce_dscp != dscp)
        ):
            yield finding(
                "L02",
                device,
                "RoCE traffic class DSCP",
                nic.roce_dscp,
                f"the NIC marks RoCE with a DSCP other than the fabric's {dscp}",
                nic.origin_of("roce_dscp"),
            )
        if dscp is None or port.dscp_to_priority is None or port.trust != "dscp":
            continue
        priority = port.dscp_to_priority.get(dscp)
        if priority not in want:
            yield finding(
                "L02",
                device,
                f"dscp2prio dscp {dscp}",
                f"priority {format_value(priority)}",
                f"the NIC puts the RoCE DSCP outside lossless priority {format_value(want)}",
                port.origin_of("dscp_to_priority"),
            )


def check_nic_cnp(ctx: LintContext) -> Iterator[LintFinding]:
    """L03 on NICs: CNP DSCP as the fabric expects; CNP priority as the switches classify it."""
    cnp = ctx.intent.cnp_dscp
    switch_priority = _switch_priority_of(ctx, cnp)
    for device in ctx.nics:
        nic = device.nic
        if nic is None:
            continue
        if nic.cnp_dscp is not None and nic.cnp_dscp != cnp:
            yield finding(
                "L03",
                device,
                "CNP_DSCP",
                nic.cnp_dscp,
                f"the NIC marks CNPs differently from the fabric's DSCP {cnp}",
                nic.origin_of("cnp_dscp"),
            )
        if nic.cnp_priority is None:
            continue
        if nic.cnp_priority in ctx.intent.lossless_priorities:
            yield finding(
                "L03",
                device,
                "CNP_802P_PRIO",
                nic.cnp_priority,
                "the NIC sends CNPs on the lossless RoCE priority",
                nic.origin_of("cnp_priority"),
            )
        elif switch_priority is not None and nic.cnp_priority != switch_priority:
            yield finding(
                "L03",
                device,
                "CNP_802P_PRIO",
                nic.cnp_priority,
                f"the NIC sends CNPs on priority {nic.cnp_priority} but the switches classify"
                f" DSCP {cnp} into priority {switch_priority}",
                nic.origin_of("cnp_priority"),
                severity="warning",
            )


def _advertises_dcbx(device: DeviceConfig) -> set[str]:
    return {port.dcbx for port in device.ports if port.dcbx}


def check_dcbx(ctx: LintContext) -> Iterator[LintFinding]:
    """L12: the NIC's lossless settings come from one place."""
    advertised: set[str] = set()
    for device in ctx.switches:
        advertised |= _advertises_dcbx(device)
    for device in ctx.nics:
        nic = device.nic
        if nic is None:
            continue
        flavours = {name for name, on in (("ieee", nic.dcbx_ieee), ("cee", nic.dcbx_cee)) if on}
        if nic.dcbx_willing and flavours and not advertised:
            yield finding(
                "L12",
                device,
                "DCBX_WILLING",
                "True",
                "the NIC would take PFC/ETS from a switch's DCBX, but the switches are set"
                " statically",
                nic.origin_of("dcbx_willing"),
            )
        if (
            advertised
            and (nic.dcbx_ieee is not None or nic.dcbx_cee is not None)
            and not (advertised & flavours)
        ):
            yield finding(
                "L12",
                device,
                "DCBX_IEEE/DCBX_CEE",
                format_value(flavours or None),
                f"the switches advertise DCBX {format_value(advertised)} which the NIC does not"
                " speak",
                nic.origin_of("dcbx_ieee") or nic.origin_of("dcbx_cee"),
            )
