"""The settings the newer Ethernet transports rely on: Spectrum-X RoCE (L20-L22), UEC (L23-L24).

Each mechanism needs every device of the fabric to agree. A rule becomes active when the fabric
shows the mechanism somewhere (a port with adaptive routing on, a NIC with telemetry CC, a queue
that trims, a link with LLR) and then names the devices that state otherwise; a device that
does not state the setting is skipped (rules never guess).

>>> from fabricplan.lint.model import DeviceConfig, PortConfig
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> sw = DeviceConfig("leaf1", "switch", "nvue", "leaf1.yaml", ports=(
...     PortConfig("swp1", adaptive_routing=True), PortConfig("swp2", adaptive_routing=False)))
>>> [f.what for f in check_fabric_adaptive_routing(LintContext((sw,), infer_intent([sw])))]
['adaptive routing is off on a fabric port of a fabric that routes adaptively']
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricplan.lint.checking.rule import LintContext, LintFinding, finding, grouped, port_list
from fabricplan.lint.model import DeviceConfig, PortConfig


def _fabric_ports(device: DeviceConfig) -> list[PortConfig]:
    """Ports that face other switches (or whose role is unknown), up and physical."""
    return [p for p in device.ports if p.kind == "physical" and p.admin_up and p.role != "host"]


def _adaptive_fabric(ctx: LintContext) -> bool:
    return any(p.adaptive_routing for d in ctx.switches for p in d.ports)


def check_fabric_adaptive_routing(ctx: LintContext) -> Iterator[LintFinding]:
    """L20: in a fabric that routes adaptively, no fabric port left on ECMP."""
    if not _adaptive_fabric(ctx):
        return
    for device in ctx.switches:
        off = [p for p in _fabric_ports(device) if p.adaptive_routing is False]
        if off:
            yield finding(
                "L20",
                device,
                f"{port_list(off)} adaptive-routing",
                "off",
                "adaptive routing is off on a fabric port of a fabric that routes adaptively",
                off[0].origin_of("adaptive_routing"),
            )


def check_nic_reordering(ctx: LintContext) -> Iterator[LintFinding]:
    """L21: every NIC behind per-packet adaptive routing places out-of-order packets."""
    if not _adaptive_fabric(ctx):
        return
    for device in ctx.nics:
        if device.nic is not None and device.nic.out_of_order_placement is False:
            yield finding(
                "L21",
                device,
                "out-of-order placement",
                "off",
                "the switches route per packet but this NIC takes out-of-order packets as loss",
                device.nic.origin_of("out_of_order_placement"),
            )


def check_telemetry_cc(ctx: LintContext) -> Iterator[LintFinding]:
    """L22: switch telemetry and NIC telemetry CC on together."""
    nics_on = any(d.nic is not None and d.nic.telemetry_cc for d in ctx.nics)
    switches_on = any(d.telemetry for d in ctx.switches)
    if nics_on:
        for device in ctx.switches:
            if device.telemetry is False:
                yield finding(
                    "L22",
                    device,
                    "congestion telemetry",
                    "off",
                    "the NICs run telemetry congestion control but this switch adds no telemetry",
                    device.origin_of("telemetry"),
                )
    if switches_on:
        for device in ctx.nics:
            if device.nic is not None and device.nic.telemetry_cc is False:
                yield finding(
                    "L22",
                    device,
                    "telemetry congestion control",
                    "off",
                    "the switches add congestion telemetry but this NIC does not act on it",
                    device.nic.origin_of("telemetry_cc"),
                )


def check_trimming(ctx: LintContext) -> Iterator[LintFinding]:
    """L23: once a fabric trims, every port trims the queues its data uses."""
    if not any(p.trimming_queues for d in ctx.switches for p in d.ports):
        return
    for device in ctx.switches:
        stated = [p for p in device.ports if p.kind == "physical" and p.trimming_queues is not None]

        def missing(port: PortConfig) -> frozenset[int]:
            data = frozenset(port.queue_of(q) for q in ctx.intent.lossless_priorities)
            return data - (port.trimming_queues or frozenset())

        for queues, group in grouped(stated, missing):
            if queues:
                yield finding(
                    "L23",
                    device,
                    f"{port_list(group)} egress queues {sorted(queues)} packet_discard_action",
                    "drop",
                    "the fabric trims, but these data queues drop on overflow",
                    group[0].origin_of("trimming_queues"),
                )


def _link_ports(ctx: LintContext) -> list[tuple[DeviceConfig, PortConfig]]:
    return [
        (d, p)
        for d in ctx.devices
        for p in d.ports
        if p.kind == "physical" and (d.kind == "nic" or p.admin_up)
    ]


LINK_FEATURES: tuple[tuple[str, str], ...] = (
    ("link_level_retry", "LLR"),
    ("credit_flow_control", "CBFC"),
)
"""UEC's optional link features: the port (and ``fabric.uec``) setting and the label L24 says."""


def check_link_retry(ctx: LintContext) -> Iterator[LintFinding]:
    """L24: LLR and CBFC the same on every link end that states them."""
    ports = _link_ports(ctx)
    for name, label in LINK_FEATURES:
        values = {getattr(p, name) for _, p in ports} - {None}
        if values != {True, False}:
            continue
        by_device: dict[str, tuple[DeviceConfig, list[PortConfig]]] = {}
        for device, port in ports:
            if getattr(port, name) is False:
                by_device.setdefault(device.name, (device, []))[1].append(port)
        for device, off in by_device.values():
            yield finding(
                "L24",
                device,
                f"{port_list(off)} {label}",
                "off",
                f"{label} is on elsewhere in the fabric: the link ends disagree",
                off[0].origin_of(name),
            )
