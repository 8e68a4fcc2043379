"""Arista EOS ``show running-config`` text into a :class:`~fabricplan.lint.model.DeviceConfig`.

Read (docs/refs.md C.8, AMD ROCm and Arista examples): ``hostname``; ``qos map dscp ... to
traffic-class N`` and ``qos map traffic-class N to tx-queue M``; ``qos profile NAME`` blocks and
``service-profile NAME`` on interfaces; per interface ``mtu``, ``speed``, ``description``,
``[no] switchport``, ``qos trust dscp|cos``, ``priority-flow-control on``,
``priority-flow-control priority N no-drop``, ``flowcontrol receive|send on``, ``dcbx mode``,
``[uc-]tx-queue N`` sub-blocks with ``random-detect ecn minimum-threshold ... maximum-threshold
... max-mark-probability P``, ``priority strict`` and ``bandwidth percent N``; the global
``priority-flow-control pause watchdog default timeout|recovery-time|polling-interval S`` (seconds)
and ``... watchdog action``. Other lines are ignored.

EOS defaults used when a setting is absent: DSCP 0-7 -> TC1, 8-15 -> TC0, then DSCP // 8 for
16-63 (the documented EOS default DSCP-to-traffic-class map); traffic class N -> tx-queue N;
routed ports (``no switchport``) trust DSCP, switched ports trust CoS.

>>> device = parse_eos('''hostname leaf1
... interface Ethernet1/1
...    mtu 9214
...    no switchport
...    priority-flow-control on
...    priority-flow-control priority 3 no-drop
... ''', "leaf1.cfg")
>>> port = device.ports[0]
>>> device.name, port.name, port.mtu_bytes, port.trust, sorted(port.pfc_set)
('leaf1', 'Ethernet1/1', 9214, 'dscp', [3])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fabricplan.lint.model import (
    DeviceConfig,
    EcnProfile,
    Origin,
    PortConfig,
    QueueScheduler,
    TrustMode,
    Watchdog,
)
from fabricplan.lint.value import (
    expand_names,
    input_error,
    role_from_description,
    to_dscp,
    to_float,
    to_int,
    to_priority,
)
from fabricplan.lint.vendor_default import EOS_DEFAULT_DSCP_TO_TC
from fabricplan.units import KIB_BYTES, MIB_BYTES, s_to_ms

ECN_UNIT_BYTES: dict[str, float | None] = {
    "bytes": 1.0,
    "kbytes": float(KIB_BYTES),
    "mbytes": float(MIB_BYTES),
    "segments": None,
    "milliseconds": None,
}
"""Bytes per ECN threshold unit; segments (an ASIC cell) and milliseconds have no fixed size."""

PORT_PREFIXES = ("ethernet", "port-channel")

_ECN_RE = re.compile(
    r"random-detect ecn minimum-threshold (\S+) (\S+) maximum-threshold (\S+) (\S+)"
    r"(?: max-mark-probability (\S+))?"
)
_SPEED_RE = re.compile(r"(\d+(?:\.\d+)?)\s*g", re.IGNORECASE)


@dataclass
class _Settings:
    """QoS settings of a qos profile or an interface (interface values override the profile)."""

    trust: TrustMode | None = None
    pfc_on: bool | None = None
    no_drop: set[int] = field(default_factory=set)
    ecn: dict[int, EcnProfile] = field(default_factory=dict)
    scheduler: dict[int, QueueScheduler] = field(default_factory=dict)
    where: dict[str, Origin] = field(default_factory=dict)


@dataclass
class _Interface:
    names: list[str]
    line: int
    settings: _Settings = field(default_factory=_Settings)
    profile: str | None = None
    mtu: int | None = None
    speed_gbps: float | None = None
    description: str = ""
    routed: bool = False
    link_pause: bool | None = None
    dcbx: str | None = None
    watchdog_off: bool = False
    shutdown: bool = False


@dataclass
class _Global:
    hostname: str | None = None
    dscp_to_tc: dict[int, int] = field(default_factory=lambda: dict(EOS_DEFAULT_DSCP_TO_TC))
    tc_to_queue: dict[int, int] = field(default_factory=lambda: {tc: tc for tc in range(8)})
    dscp_map_line: int | None = None
    queue_map_line: int | None = None
    watchdog_timeout_ms: float | None = None
    watchdog_recovery_ms: float | None = None
    watchdog_poll_ms: float | None = None
    watchdog_action: str | None = None
    watchdog_line: int | None = None
    profiles: dict[str, _Settings] = field(default_factory=dict)
    interfaces: list[_Interface] = field(default_factory=list)


def parse_eos(text: str, file: str) -> DeviceConfig:
    """Read an EOS running-config.

    Raises
    ------
    InputFileError
        FP406/FP409 (with file:line) when a recognised line carries a bad value; FP408 when the
        text has no interface, qos or PFC configuration.
    """
    state = _Global()
    block: _Settings | _Interface | None = None
    queue: int | None = None
    block_indent = 0
    seen = False
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("!"):
            if stripped.startswith("!") and raw == stripped:
                block, queue = None, None
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        where = f"{file}:{number}"
        if indent == 0:
            block, queue = None, None
            seen |= _top_level(state, stripped, number, where)
            block = _open_block(state, stripped, number, where)
            block_indent = 0
            continue
        if block is None:
            continue
        words = stripped.split()
        if words[0] in ("tx-queue", "uc-tx-queue") and len(words) == 2:
            queue = to_int(words[1], where)
            block_indent = indent
            continue
        if queue is not None and indent <= block_indent:
            queue = None
        settings = block.settings if isinstance(block, _Interface) else block
        if queue is not None:
            _queue_line(settings, queue, stripped, file, number)
        elif isinstance(block, _Interface):
            _interface_line(block, stripped, file, number)
        else:
            _settings_line(block, stripped, file, number)
        seen = True
    if not seen and not state.interfaces:
        raise input_error(
            "FP408",
            file,
            "no EOS interface, qos or priority-flow-control configuration found",
            None,
            "give the output of `show running-config`",
        )
    return _device(state, file)


def _top_level(state: _Global, line: str, number: int, where: str) -> bool:
    words = line.split()
    if words[0] == "hostname" and len(words) >= 2:
        state.hostname = words[1]
        return True
    if line.startswith("qos map dscp ") and " to traffic-class " in line:
        sources, _, target = line[len("qos map dscp ") :].partition(" to traffic-class ")
        tc = to_priority(target.strip(), where)
        for dscp in _numbers(sources, where, 63):
            state.dscp_to_tc[dscp] = tc
        state.dscp_map_line = state.dscp_map_line or number
        return True
    if line.startswith("qos map traffic-class ") and " to tx-queue " in line:
        sources, _, target = line[len("qos map traffic-class ") :].partition(" to tx-queue ")
        queue_number = to_priority(target.strip(), where)
        for tc in _numbers(sources, where, 7):
            state.tc_to_queue[tc] = queue_number
        state.queue_map_line = state.queue_map_line or number
        return True
    prefix = "priority-flow-control pause watchdog "
    if line.startswith(prefix):
        rest = line[len(prefix) :].split()
        state.watchdog_line = state.watchdog_line or number
        if rest[:1] == ["action"] and len(rest) >= 2:
            state.watchdog_action = rest[1]
        elif rest[:1] == ["default"] and len(rest) >= 3:
            value_ms = s_to_ms(to_float(rest[2], where))
            if rest[1] == "timeout":
                state.watchdog_timeout_ms = value_ms
            elif rest[1] == "recovery-time":
                state.watchdog_recovery_ms = value_ms
            elif rest[1] == "polling-interval":
                state.watchdog_poll_ms = value_ms
        return True
    return words[0] in ("interface", "qos", "priority-flow-control")


def _open_block(
    state: _Global, line: str, number: int, where: str
) -> _Settings | _Interface | None:
    words = line.split()
    if words[0] == "interface" and len(words) >= 2:
        name = " ".join(words[1:])
        if not name.lower().startswith(PORT_PREFIXES):
            return None
        interface = _Interface(names=expand_names(name, where), line=number)
        state.interfaces.append(interface)
        return interface
    if words[:2] == ["qos", "profile"] and len(words) >= 3:
        profile = state.profiles.setdefault(words[2], _Settings())
        return profile
    return None


def _numbers(text: str, where: str, high: int) -> list[int]:
    numbers: list[int] = []
    for token in text.replace(",", " ").split():
        first, sep, last = token.partition("-")
        start = to_dscp(first, where) if high == 63 else to_priority(first, where)
        stop = (to_dscp(last, where) if high == 63 else to_priority(last, where)) if sep else start
        numbers.extend(range(start, stop + 1))
    return numbers


def _settings_line(settings: _Settings, line: str, file: str, number: int) -> None:
    where = f"{file}:{number}"
    origin = Origin(file, number, line)
    words = line.split()
    if words[:2] == ["qos", "trust"] and len(words) >= 3:
        settings.trust = "dscp" if words[2] == "dscp" else "pcp" if words[2] == "cos" else None
        settings.where["trust"] = origin
    elif line == "priority-flow-control on":
        settings.pfc_on = True
        settings.where["pfc_priorities"] = origin
    elif line in ("priority-flow-control off", "no priority-flow-control"):
        settings.pfc_on = False
        settings.where["pfc_priorities"] = origin
    elif words[:2] == ["priority-flow-control", "priority"] and len(words) >= 4:
        priority = to_priority(words[2], where)
        if words[3] == "no-drop":
            settings.no_drop.add(priority)
        else:
            settings.no_drop.discard(priority)
        settings.where.setdefault("pfc_priorities", origin)


def _interface_line(interface: _Interface, line: str, file: str, number: int) -> None:
    where = f"{file}:{number}"
    origin = Origin(file, number, line)
    words = line.split()
    settings = interface.settings
    if words[0] == "mtu" and len(words) == 2:
        interface.mtu = to_int(words[1], where)
        settings.where["mtu_bytes"] = origin
    elif words[0] == "speed" and len(words) >= 2:
        match = _SPEED_RE.match(words[-1])
        if match is not None:
            interface.speed_gbps = float(match.group(1))
            settings.where["speed_gbps"] = origin
    elif words[0] == "description":
        interface.description = " ".join(words[1:])
    elif line == "no switchport":
        interface.routed = True
    elif line == "shutdown":
        interface.shutdown = True
    elif words[0] == "service-profile" and len(words) == 2:
        interface.profile = words[1]
        settings.where.setdefault("service_profile", origin)
    elif words[0] == "flowcontrol" and len(words) == 3:
        if words[2] == "on":
            interface.link_pause = True
        elif interface.link_pause is None:
            interface.link_pause = False
        settings.where["link_pause"] = origin
    elif words[:2] == ["dcbx", "mode"] and len(words) == 3:
        interface.dcbx = words[2] if words[2] in ("ieee", "cee") else None
        settings.where["dcbx"] = origin
    elif line == "no priority-flow-control pause watchdog":
        interface.watchdog_off = True
        settings.where["watchdog"] = origin
    else:
        _settings_line(settings, line, file, number)


def _queue_line(settings: _Settings, queue: int, line: str, file: str, number: int) -> None:
    where = f"{file}:{number}"
    origin = Origin(file, number, line)
    words = line.split()
    if line.startswith("random-detect ecn minimum-threshold"):
        match = _ECN_RE.match(line)
        if match is None:
            raise input_error(
                "FP406",
                where,
                "cannot read the ECN thresholds",
                line,
                "write `random-detect ecn minimum-threshold N UNIT maximum-threshold N UNIT"
                " max-mark-probability P`",
            )
        low, low_unit, high, high_unit, probability = match.groups()
        if low_unit not in ECN_UNIT_BYTES or high_unit not in ECN_UNIT_BYTES:
            raise input_error(
                "FP409",
                where,
                "unknown ECN threshold unit",
                f"{low_unit}/{high_unit}",
                f"use one of {sorted(ECN_UNIT_BYTES)}",
            )
        low_value, high_value = to_float(low, where), to_float(high, where)
        low_scale, high_scale = ECN_UNIT_BYTES[low_unit], ECN_UNIT_BYTES[high_unit]
        settings.ecn[queue] = EcnProfile(
            ecn_enabled=True,
            min_threshold_bytes=low_value * low_scale if low_scale else None,
            max_threshold_bytes=high_value * high_scale if high_scale else None,
            mark_probability_pct=to_float(probability, where) if probability else None,
            threshold_unit=low_unit if low_unit == high_unit else f"{low_unit}/{high_unit}",
            min_threshold_raw=low_value,
            max_threshold_raw=high_value,
        )
        settings.where[f"ecn.{queue}"] = origin
    elif line == "priority strict":
        old = settings.scheduler.get(queue)
        settings.scheduler[queue] = QueueScheduler("strict", old.weight if old else None, True)
        settings.where[f"scheduler.{queue}"] = origin
    elif line == "no priority":
        old = settings.scheduler.get(queue)
        settings.scheduler[queue] = QueueScheduler("dwrr", old.weight if old else None, True)
        settings.where[f"scheduler.{queue}"] = origin
    elif words[:2] == ["bandwidth", "percent"] and len(words) == 3:
        old = settings.scheduler.get(queue)
        settings.scheduler[queue] = QueueScheduler(
            old.kind if old else "dwrr", to_float(words[2], where), True
        )
        settings.where[f"scheduler.{queue}"] = origin


def _device(state: _Global, file: str) -> DeviceConfig:
    ports: list[PortConfig] = []
    watchdog_configured = state.watchdog_timeout_ms is not None
    for interface in state.interfaces:
        profile = state.profiles.get(interface.profile or "", _Settings())
        own = interface.settings
        trust = own.trust or profile.trust or ("dscp" if interface.routed else "pcp")
        pfc_on = own.pfc_on if own.pfc_on is not None else profile.pfc_on
        no_drop = own.no_drop or profile.no_drop
        pfc: frozenset[int] | None
        if pfc_on:
            pfc = frozenset(no_drop)
        elif pfc_on is False or no_drop:
            pfc = frozenset()
        else:
            pfc = None
        where = dict(profile.where) | dict(own.where)
        where.setdefault("trust", Origin(file, interface.line, f"interface {interface.names[0]}"))
        if state.dscp_map_line is not None:
            where["dscp_to_priority"] = Origin(file, state.dscp_map_line, "qos map dscp")
        if state.queue_map_line is not None:
            where["priority_to_queue"] = Origin(file, state.queue_map_line, "qos map traffic-class")
        watchdog = None
        if watchdog_configured or interface.watchdog_off:
            watchdog = Watchdog(
                enabled=watchdog_configured and not interface.watchdog_off,
                detection_ms=state.watchdog_timeout_ms,
                restoration_ms=state.watchdog_recovery_ms,
                poll_ms=state.watchdog_poll_ms,
                action=state.watchdog_action,
            )
            if "watchdog" not in where and state.watchdog_line is not None:
                where["watchdog"] = Origin(
                    file, state.watchdog_line, "priority-flow-control pause watchdog"
                )
        for name in interface.names:
            ports.append(
                PortConfig(
                    name=name,
                    speed_gbps=interface.speed_gbps,
                    mtu_bytes=interface.mtu,
                    role=role_from_description(interface.description),
                    kind="bond" if name.lower().startswith("port-channel") else "physical",
                    admin_up=not interface.shutdown,
                    trust=trust,
                    dscp_to_priority=state.dscp_to_tc,
                    priority_to_queue=state.tc_to_queue,
                    pfc_priorities=pfc,
                    link_pause=interface.link_pause,
                    ecn=profile.ecn | own.ecn,
                    scheduler=profile.scheduler | own.scheduler,
                    watchdog=watchdog,
                    dcbx=interface.dcbx,
                    where=where,
                )
            )
    return DeviceConfig(
        name=state.hostname or Path(file).stem,
        kind="switch",
        format="eos",
        file=file,
        ports=tuple(ports),
        lossless_pool_required=False,
    )
