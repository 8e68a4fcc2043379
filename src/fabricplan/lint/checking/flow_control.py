"""Rules on PFC itself: which priorities (L01), the watchdog (L05), 802.3x pause (L10), how many
lossless priorities and their pool (L14), buffers behind each PFC priority (L16), both directions
(L17).

>>> from fabricplan.lint.model import DeviceConfig, PortConfig
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> sw = DeviceConfig("leaf1", "switch", "sonic", "leaf1.json", ports=(
...     PortConfig("Ethernet0", pfc_priorities=frozenset({3})),
...     PortConfig("Ethernet4", pfc_priorities=frozenset({3, 4}))))
>>> ctx = LintContext((sw,), infer_intent([sw], None))
>>> [(f.rule, f.setting) for f in check_pfc_priorities(ctx)]
[('L01', 'Ethernet4 pfc')]
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

MAX_LOSSLESS_PRIORITIES = 2
"""Lossless priorities a switch should carry: the SONiC template uses two (3, 4) and Dell
Enterprise SONiC's ``roce`` accepts at most two (docs/refs.md C.1); each one reserves headroom on
every port."""


def check_pfc_priorities(ctx: LintContext) -> Iterator[LintFinding]:
    """L01: PFC on exactly the lossless priorities on every port and NIC."""
    want = ctx.intent.lossless_priorities
    basis = ctx.intent.basis.get("lossless_priorities", "")
    for device in ctx.devices:
        ports = [
            p
            for p in lossless_domain(device)
            if device.kind == "switch" or (p.pfc_priorities is not None)
        ]
        for pfc, group in grouped(ports, lambda p: p.pfc_set):
            if pfc == want:
                continue
            missing = want - pfc
            what = (
                f"PFC is off on lossless priority {format_value(missing)}"
                if missing
                else f"PFC is on a priority outside {format_value(want)}"
            )
            yield finding(
                "L01",
                device,
                f"{port_list(group)} pfc",
                pfc,
                f"{what} (lossless priorities {format_value(want)} from the {basis})",
                group[0].origin_of("pfc_priorities"),
            )


def check_watchdog(ctx: LintContext) -> Iterator[LintFinding]:
    """L05: watchdog on every PFC port, with poll <= detection <= restoration."""
    for device in ctx.switches:
        ports = [p for p in lossless_domain(device) if p.pfc_set]
        off = [p for p in ports if p.watchdog is None or not p.watchdog.enabled]
        if off:
            yield finding(
                "L05",
                device,
                f"{port_list(off)} pfc watchdog",
                "off",
                "PFC is on but the PFC watchdog is not",
                off[0].origin_of("watchdog") or off[0].origin_of("pfc_priorities"),
            )
        timed = [p for p in ports if p.watchdog is not None and p.watchdog.enabled]
        for (poll, detect, restore), group in grouped(timed, _timing):
            origin = group[0].origin_of("watchdog")
            if poll is not None and detect is not None and poll > detect:
                yield finding(
                    "L05",
                    device,
                    f"{port_list(group)} pfc watchdog poll",
                    f"{format_value(poll)} ms",
                    f"polls less often than the detection time ({format_value(detect)} ms)",
                    origin,
                )
            if detect is not None and restore is not None and restore < detect:
                yield finding(
                    "L05",
                    device,
                    f"{port_list(group)} pfc watchdog restoration",
                    f"{format_value(restore)} ms",
                    f"restores before the detection time ({format_value(detect)} ms) has passed",
                    origin,
                )


def _timing(port: PortConfig) -> tuple[float | None, float | None, float | None]:
    watchdog = port.watchdog
    if watchdog is None:
        return (None, None, None)
    return (watchdog.poll_ms, watchdog.detection_ms, watchdog.restoration_ms)


def check_link_pause(ctx: LintContext) -> Iterator[LintFinding]:
    """L10: no 802.3x pause where PFC is used."""
    for device in ctx.devices:
        paused = [p for p in lossless_domain(device) if p.link_pause]
        if paused:
            yield finding(
                "L10",
                device,
                f"{port_list(paused)} link pause",
                "on",
                "802.3x pause is on in a PFC fabric",
                paused[0].origin_of("link_pause"),
            )


def check_lossless_capacity(ctx: LintContext) -> Iterator[LintFinding]:
    """L14: at most two lossless priorities; a non-empty lossless pool where PFC is used."""
    for device in ctx.devices:
        ports = [p for p in lossless_domain(device) if len(p.pfc_set) > MAX_LOSSLESS_PRIORITIES]
        for pfc, group in grouped(ports, lambda p: p.pfc_set):
            yield finding(
                "L14",
                device,
                f"{port_list(group)} pfc",
                pfc,
                f"more than {MAX_LOSSLESS_PRIORITIES} lossless priorities",
                group[0].origin_of("pfc_priorities"),
            )
        if device.kind != "switch" or not device.lossless_pool_required or not device.pfc_ports:
            continue
        pool = device.lossless_pool()
        if pool is None:
            yield finding(
                "L14",
                device,
                "lossless buffer pool",
                None,
                "PFC is on but no lossless buffer pool is configured",
                device.origin_of("buffer_pools"),
            )
        elif pool.empty:
            yield finding(
                "L14",
                device,
                f"buffer pool {pool.name}",
                "0",
                "the lossless pool has no memory",
                device.origin_of("buffer_pools"),
            )


def check_lossless_buffers(ctx: LintContext) -> Iterator[LintFinding]:
    """L16: every PFC priority has a lossless PG and, where given, a lossless egress queue."""
    for device in ctx.switches:
        problems: dict[tuple[str, str, str, str], list[PortConfig]] = {}
        for port in lossless_domain(device):
            for priority in sorted(port.pfc_set):
                profile = port.ingress_buffers.get(priority)
                if profile is not None and not profile.lossless:
                    key = (
                        f"priority {priority} ingress buffer",
                        profile.name,
                        "PFC priority uses a lossy buffer profile (no xoff)",
                        f"ingress_buffers.{priority}",
                    )
                    problems.setdefault(key, []).append(port)
                elif profile is None and port.ingress_buffers:
                    key = (
                        f"priority {priority} ingress buffer",
                        "missing",
                        "PFC priority has no priority-group buffer",
                        "pfc_priorities",
                    )
                    problems.setdefault(key, []).append(port)
                queue = port.queue_of(priority)
                if port.egress_lossless_queues is not None and (
                    queue not in port.egress_lossless_queues
                ):
                    key = (
                        f"queue {queue} egress buffer",
                        "lossy",
                        "PFC priority's queue uses a lossy egress buffer profile",
                        f"egress_queue.{queue}",
                    )
                    problems.setdefault(key, []).append(port)
        for (setting, value, what, field), group in problems.items():
            yield finding(
                "L16",
                device,
                f"{port_list(group)} {setting}",
                value,
                what,
                group[0].origin_of(field) or group[0].origin_of("pfc_priorities"),
            )


def check_pfc_directions(ctx: LintContext) -> Iterator[LintFinding]:
    """L17: PFC is sent (tx) and honoured (rx)."""
    for device in ctx.switches:
        for direction in ("rx", "tx"):
            ports = [
                p
                for p in lossless_domain(device)
                if p.pfc_set and getattr(p, f"pfc_{direction}") is False
            ]
            if ports:
                yield finding(
                    "L17",
                    device,
                    f"{port_list(ports)} pfc {direction}",
                    "disabled",
                    "PFC is not received" if direction == "rx" else "PFC is not sent",
                    ports[0].origin_of(f"pfc_{direction}"),
                )
