"""Congestion-control rules: ECN on the RoCE queue (L04), DCQCN on the NIC (L11), ETS (L13).

>>> from fabricplan.lint.model import DeviceConfig, EcnProfile, PortConfig
>>> port = PortConfig("swp1", pfc_priorities=frozenset({3}),
...     ecn={3: EcnProfile(True, 1_500_000, 150_000, 100)})
>>> sw = DeviceConfig("leaf1", "switch", "nvue", "leaf1.yaml", ports=(port,))
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> [f.what for f in check_ecn(LintContext((sw,), infer_intent([sw])))]
['ECN min threshold is not below the max threshold (150000 B)']
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
from fabricplan.lint.headroom import dynamic_threshold_trigger_bytes
from fabricplan.lint.model import DeviceConfig, EcnProfile, PortConfig

DCQCN_ALGORITHMS = frozenset({"ecn", "0"})
"""``ROCE_CC_ALGORITHM`` values that mean DCQCN (mlxconfig prints ``ECN(0)``, docs/refs.md C.2)."""

PERCENT_TOTAL = 100.0
PERCENT_TOLERANCE = 0.5
"""Percent weights may be rounded by the tool that printed them."""


def _ecn_problem(profile: EcnProfile | None, trigger_bytes: float | None) -> str | None:
    if profile is None or not profile.ecn_enabled:
        return "ECN marking is off on the RoCE queue"
    low, high = profile.min_threshold_bytes, profile.max_threshold_bytes
    if low is None or high is None:
        low, high = profile.min_threshold_raw, profile.max_threshold_raw
    if low is not None and high is not None and low >= high:
        return f"ECN min threshold is not below the max threshold ({format_value(high)} B)"
    if profile.mark_probability_pct is not None and profile.mark_probability_pct <= 0:
        return "ECN marking probability is 0"
    if (
        trigger_bytes is not None
        and profile.max_threshold_bytes is not None
        and (profile.max_threshold_bytes >= trigger_bytes)
    ):
        return (
            f"ECN max threshold is not below the PFC trigger ({format_value(round(trigger_bytes))}"
            " B): PFC pauses before ECN marks"
        )
    return None


def pfc_trigger_bytes(device: DeviceConfig, port: PortConfig, priority: int) -> float | None:
    """Ingress occupancy at which ``priority`` sends PFC, when the configuration fixes it.

    A static threshold is the trigger itself; a dynamic threshold gives
    ``alpha / (1 + alpha) * pool``
    (:func:`~fabricplan.lint.headroom.dynamic_threshold_trigger_bytes`).
    """
    profile = port.ingress_buffers.get(priority)
    if profile is None:
        return None
    if profile.static_threshold_bytes is not None:
        return profile.static_threshold_bytes
    if profile.dynamic_th is None or profile.pool is None:
        return None
    for pool in device.buffer_pools:
        if pool.name == profile.pool and pool.size_bytes:
            return dynamic_threshold_trigger_bytes(pool.size_bytes, profile.dynamic_th)
    return None


def check_ecn(ctx: LintContext) -> Iterator[LintFinding]:
    """L04: ECN on the RoCE queue with Kmin < Kmax below the PFC trigger and Pmax > 0."""
    for device in ctx.switches:
        problems: list[tuple[tuple[int, str], PortConfig]] = []
        for port in lossless_domain(device):
            for priority in sorted(ctx.intent.lossless_priorities & port.pfc_set):
                queue = port.queue_of(priority)
                trigger = pfc_trigger_bytes(device, port, priority)
                problem = _ecn_problem(port.ecn.get(queue), trigger)
                if problem is not None:
                    problems.append(((queue, problem), port))
        groups: dict[tuple[int, str], list[PortConfig]] = {}
        for key, port in problems:
            groups.setdefault(key, []).append(port)
        for (queue, problem), group in groups.items():
            profile = group[0].ecn.get(queue)
            value = (
                "off"
                if profile is None or not profile.ecn_enabled
                else (
                    f"min {format_value(profile.min_threshold_raw or profile.min_threshold_bytes)}"
                    f" max {format_value(profile.max_threshold_raw or profile.max_threshold_bytes)}"
                    f" {profile.threshold_unit} p {format_value(profile.mark_probability_pct)}"
                )
            )
            yield finding(
                "L04",
                device,
                f"{port_list(group)} queue {queue} ecn",
                value,
                problem,
                group[0].origin_of(f"ecn.{queue}") or group[0].origin_of("pfc_priorities"),
            )


def check_nic_congestion_control(ctx: LintContext) -> Iterator[LintFinding]:
    """L11: DCQCN on the RoCE priority of every NIC; mask and sysfs aligned."""
    want = ctx.intent.lossless_priorities
    for device in ctx.nics:
        nic = device.nic
        if nic is None:
            continue
        if nic.cc_priorities is not None and not want <= nic.cc_priorities:
            yield finding(
                "L11",
                device,
                "ROCE_CC_PRIO_MASK",
                nic.cc_priorities,
                "congestion control is off on RoCE priority"
                f" {format_value(want - nic.cc_priorities)}",
                nic.origin_of("cc_priorities"),
            )
        for point, enabled in (("rp", nic.cc_rp_enabled), ("np", nic.cc_np_enabled)):
            if enabled is not None and not want <= enabled:
                yield finding(
                    "L11",
                    device,
                    f"ecn/roce_{point}/enable",
                    enabled,
                    f"DCQCN {'reaction' if point == 'rp' else 'notification'} point is off on"
                    f" RoCE priority {format_value(want - enabled)}",
                    nic.origin_of(f"cc_{point}_enabled"),
                )
        if nic.cc_algorithm is not None and nic.cc_algorithm not in DCQCN_ALGORITHMS:
            yield finding(
                "L11",
                device,
                "ROCE_CC_ALGORITHM",
                nic.cc_algorithm,
                "the congestion-control algorithm is not DCQCN (ECN)",
                nic.origin_of("cc_algorithm"),
            )
        if (
            nic.cc_priorities is not None
            and nic.cc_rp_enabled is not None
            and (want <= nic.cc_priorities and want <= nic.cc_rp_enabled)
        ):
            # Only the priorities sysfs reported can be compared.
            disagree = {p for p in nic.cc_rp_enabled ^ nic.cc_priorities if p in want}
            if disagree:
                yield finding(
                    "L11",
                    device,
                    "ROCE_CC_PRIO_MASK vs ecn/roce_rp",
                    nic.cc_priorities,
                    "the mask and sysfs disagree (ConnectX-7 firmware applies CC globally)",
                    nic.origin_of("cc_priorities"),
                    severity="warning",
                )


def _percent_weights(port: PortConfig) -> dict[int, float]:
    return {
        queue: scheduler.weight
        for queue, scheduler in port.scheduler.items()
        if scheduler.kind in ("dwrr", "ets")
        and scheduler.weight_is_percent
        and scheduler.weight is not None
    }


def check_ets(ctx: LintContext) -> Iterator[LintFinding]:
    """L13: percent weights add up to 100 and the RoCE queue gets a share."""
    want = ctx.intent.lossless_priorities
    for device in ctx.devices:
        ports = [p for p in lossless_domain(device) if p.scheduler]
        for total, group in grouped(ports, lambda p: sum(_percent_weights(p).values())):
            if _percent_weights(group[0]) and abs(total - PERCENT_TOTAL) > PERCENT_TOLERANCE:
                queue = min(_percent_weights(group[0]))
                yield finding(
                    "L13",
                    device,
                    f"{port_list(group)} ETS weights",
                    f"{format_value(total)} %",
                    "ETS percentages do not add up to 100",
                    group[0].origin_of(f"scheduler.{queue}"),
                )
        starved: list[tuple[int, PortConfig]] = []
        for port in ports:
            percent_based = bool(_percent_weights(port))
            for priority in sorted(want):
                queue = port.queue_of(priority)
                scheduler = port.scheduler.get(queue)
                if scheduler is None:
                    if percent_based:
                        starved.append((queue, port))
                elif (
                    scheduler.kind in ("dwrr", "ets")
                    and scheduler.weight is not None
                    and (scheduler.weight <= 0)
                ):
                    starved.append((queue, port))
        for queue, group in grouped_by_queue(starved):
            yield finding(
                "L13",
                device,
                f"{port_list(group)} queue {queue} weight",
                "0",
                "the RoCE queue has no bandwidth share",
                group[0].origin_of(f"scheduler.{queue}") or group[0].origin_of("pfc_priorities"),
            )


def grouped_by_queue(items: list[tuple[int, PortConfig]]) -> list[tuple[int, list[PortConfig]]]:
    """Ports grouped by queue number, in first-seen order."""
    groups: dict[int, list[PortConfig]] = {}
    for queue, port in items:
        groups.setdefault(queue, []).append(port)
    return list(groups.items())
