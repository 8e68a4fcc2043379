"""The baseline lossless configuration for a designed RoCE fabric, per vendor, that lints clean.

Input is plain (:class:`BaselineSpec`: switch roles with their port groups' speed and cable
length, the host NIC's speed, cable and CNP marking), so that the generator does not depend on
the designer; :func:`baseline_spec` builds it from a ``ValidScenario`` and ``FabricDesign``.

What is written, per switch role (leaf, spine, core) and vendor:

- maps: RoCE DSCP -> lossless priority -> queue; CNP DSCP -> the NIC vendor's CNP priority ->
  a strict queue; trust DSCP;
- PFC on the lossless priority only, rx and tx, with the PFC watchdog (SONiC defaults: 200 ms
  detection and restoration, 200 ms poll, action drop, docs/refs.md C.4);
- headroom per (speed, cable length) class from :func:`~fabricplan.lint.headroom.
  sonic_mellanox_headroom` (SONiC static profiles; Cumulus and EOS size headroom themselves from
  the cable length they are given);
- ECN on the RoCE queue: Cumulus's ``qos roce`` thresholds (150,000 / 1,500,000 B, docs/refs.md C.1)
  taken as the 400G point and scaled linearly with port speed (the HPCC simulator's
  Kmin, Kmax proportional to bandwidth, docs/refs.md C.1) [derived]; kept below the PFC trigger;
- ETS: RoCE and best effort DWRR 50/50, CNP strict (docs/refs.md C.6).

For the hosts: ``host-nic.sh`` (the ``mlnx_qos``/``mlxconfig``/sysfs commands for ConnectX NICs) and
``host-nic-expected.txt`` (what those tools print afterwards, in the format ``fabricplan lint``
reads), so that ``fabricplan lint <switch files> host-nic-expected.txt`` checks the whole fabric.

>>> spec = BaselineSpec(
...     switch_roles=(SwitchRoleSpec("leaf", 4, (PortGroupSpec("host", 2, 400, 3),
...                                              PortGroupSpec("fabric", 2, 400, 30))),),
...     host_speed_gbps=400, host_cable_length_m=3)
>>> files = roce_baseline(spec, "sonic")
>>> sorted(files)
['baseline.md', 'host-nic-expected.txt', 'host-nic.sh', 'sonic-leaf.json']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

from fabricplan.lint.headroom import (
    SONIC_DEFAULT_LOSSLESS_MTU_BYTES,
    SONIC_DEFAULT_SMALL_PACKET_PCT,
    SPECTRUM_3,
    AsicBufferSpec,
    HeadroomRecord,
    dynamic_threshold_trigger_bytes,
    sonic_mellanox_headroom,
)
from fabricplan.lint.value import input_error
from fabricplan.lint.vendor_default import DSCP_SHIFT_IN_TOS, EOS_DEFAULT_DSCP_TO_TC
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.units import gbps_to_mbps, ms_to_s

Vendor = Literal["sonic", "nvue", "eos"]
VENDORS: tuple[Vendor, ...] = get_args(Vendor)

ECN_MIN_BYTES_AT_400G = 150_000.0
ECN_MAX_BYTES_AT_400G = 1_500_000.0
ECN_REFERENCE_SPEED_GBPS = 400.0
"""Cumulus ``qos roce`` ECN thresholds (docs/refs.md C.1), taken as the 400G operating point."""
ECN_MARK_PROBABILITY_PCT = 100.0
"""Cumulus ``qos roce`` marking probability at the max threshold (docs/refs.md C.1)."""
ECN_MAX_SHARE_OF_PFC_TRIGGER = 0.5
"""ECN max is kept at most at half the PFC trigger, so that marking starts well before pausing."""

WATCHDOG_DETECTION_MS = 200.0
WATCHDOG_RESTORATION_MS = 200.0
WATCHDOG_POLL_MS = 200.0
WATCHDOG_ACTION = "drop"
"""SONiC ``pfcwd start_default`` values (docs/refs.md C.4)."""
NVUE_WATCHDOG_POLL_MS = 100
NVUE_WATCHDOG_ROBUSTNESS = 2
"""Cumulus watchdog: 100 ms poll, 2 polls (200 ms) before it acts, the SONiC detection time."""

ROCE_DWRR_PERCENT = 50
"""RoCE and best-effort DWRR 50/50, CNP strict (Cumulus/Onyx and Thor2 defaults,
docs/refs.md C.6)."""

SWITCH_MTU_BYTES: dict[Vendor, int] = {"sonic": 9100, "nvue": 9216, "eos": 9214}
"""Port MTU per switch OS: SONiC's default 9100, Cumulus 9216, EOS's largest 9214
(docs/refs.md C.5)."""
HOST_MTU_BYTES = 9000
"""Host netdev MTU: >= RoCE MTU 4096 + 96 B and below every switch MTU (docs/refs.md C.5)."""
ROCE_MTU_BYTES = 4096

DYNAMIC_TH_LOSSLESS = 0
"""SONiC lossless PG dynamic threshold exponent (alpha = 1) as in the templates' lossless
profiles."""
SN5600_EGRESS_LOSSLESS_POOL_BYTES = 158_229_504
"""SN5600 C224O8 SONiC ``egress_lossless_pool_size`` (docs/refs.md C.3), used when the switch's
buffer size is unknown."""

LANES_PER_PORT_BY_SPEED_GBPS: dict[float, int] = {800: 8, 400: 4, 200: 2, 100: 1}
"""SerDes lanes of a port at 100G per lane (Spectrum-4 / Tomahawk 5 class switches)."""

ECN_ECT0 = 0b10
"""ECN field codepoint ECT(0): the packet is ECN-capable, so switches mark it instead of dropping
(RFC 3168). With DSCP 26 this gives the ToS 106 RoCE recipes set (``cma_roce_tos -t 106``)."""

BEST_EFFORT_DSCP = 0
BEST_EFFORT_TC = 0


@dataclass(frozen=True, slots=True)
class PortGroupSpec:
    """Ports of one switch that share a direction, a speed and a cable length."""

    facing: Literal["host", "fabric"]
    count: int
    speed_gbps: float
    cable_length_m: float
    peer: str = ""
    """What the ports connect to (``hosts``, ``spine``...), for descriptions."""


@dataclass(frozen=True, slots=True)
class SwitchRoleSpec:
    """One switch role (every switch of a tier gets the same configuration)."""

    name: str
    count: int
    port_groups: tuple[PortGroupSpec, ...]
    port_names: tuple[str, ...] = ()
    """The box's front-panel names of the role's ports in port-group order (empty: the writers
    number the ports themselves)."""


@dataclass(frozen=True, slots=True)
class BaselineSpec:
    """Everything the generator needs, in plain figures."""

    switch_roles: tuple[SwitchRoleSpec, ...]
    host_speed_gbps: float
    host_cable_length_m: float
    lossless_priority: int = 3
    roce_dscp: int = 26
    cnp_dscp: int = 48
    cnp_priority: int = 6
    nic_name: str = "ConnectX"
    buffer_bytes: float | None = None
    asic: AsicBufferSpec = SPECTRUM_3
    lanes_per_port: int | None = None
    """SerDes lanes of one port on the box (None: 100G lanes assumed, :func:`lanes_for`)."""
    sonic_platform: str = ""
    """SONiC ``DEVICE_METADATA.platform`` of the box (empty: not written), so that a linter
    reads which ASIC's figures the headroom was sized with."""
    static_headroom: tuple[tuple[float, float, HeadroomRecord], ...] = ()
    """``(speed_gbps, longest cable_m, headroom)`` of the platform's own lossless profiles
    (SONiC ``pg_profile_lookup.ini`` of a Broadcom platform): used instead of the Mellanox formula
    for ports of that speed and a cable no longer."""


@dataclass(frozen=True, slots=True)
class PortClass:
    """Headroom and ECN for one (speed, cable length) class."""

    speed_gbps: float
    cable_length_m: float
    headroom: HeadroomRecord
    ecn_min_bytes: int
    ecn_max_bytes: int

    @property
    def profile_name(self) -> str:
        speed_mbps = int(gbps_to_mbps(self.speed_gbps))
        return f"pg_lossless_{speed_mbps}_{_meters(self.cable_length_m)}m_profile"


def _meters(value: float) -> str:
    return f"{value:g}"


def lanes_for(speed_gbps: float) -> int:
    """SerDes lanes of a port (4 for 400G at 100G per lane)."""
    return LANES_PER_PORT_BY_SPEED_GBPS.get(speed_gbps, 4)


def ecn_thresholds_bytes(
    speed_gbps: float, pfc_trigger_bytes: float | None = None
) -> tuple[int, int]:
    """ECN (min, max) thresholds for a port speed, below the PFC trigger.

    >>> ecn_thresholds_bytes(400)
    (150000, 1500000)
    >>> ecn_thresholds_bytes(100)
    (37500, 375000)
    >>> ecn_thresholds_bytes(400, pfc_trigger_bytes=1_000_000)
    (50000, 500000)
    """
    scale = speed_gbps / ECN_REFERENCE_SPEED_GBPS
    high = ECN_MAX_BYTES_AT_400G * scale
    low = ECN_MIN_BYTES_AT_400G * scale
    if pfc_trigger_bytes is not None and high > pfc_trigger_bytes * ECN_MAX_SHARE_OF_PFC_TRIGGER:
        ratio = low / high
        high = pfc_trigger_bytes * ECN_MAX_SHARE_OF_PFC_TRIGGER
        low = high * ratio
    return round(low), round(high)


def port_classes(spec: BaselineSpec, role: SwitchRoleSpec, mtu_bytes: int) -> list[PortClass]:
    """The (speed, cable) classes of a role's ports, with headroom and ECN (no trigger cap)."""
    seen: dict[tuple[float, float], PortClass] = {}
    for group in role.port_groups:
        key = (group.speed_gbps, group.cable_length_m)
        if key in seen:
            continue
        static = [
            record
            for speed, longest_m, record in spec.static_headroom
            if speed == group.speed_gbps and group.cable_length_m <= longest_m
        ]
        headroom = (
            static[0]
            if static
            else sonic_mellanox_headroom(
                group.speed_gbps,
                group.cable_length_m,
                mtu_bytes,
                lossless_mtu_bytes=SONIC_DEFAULT_LOSSLESS_MTU_BYTES,
                small_packet_pct=SONIC_DEFAULT_SMALL_PACKET_PCT,
                asic=spec.asic,
                lanes=spec.lanes_per_port or lanes_for(group.speed_gbps),
            )
        )
        low, high = ecn_thresholds_bytes(group.speed_gbps)
        seen[key] = PortClass(group.speed_gbps, group.cable_length_m, headroom, low, high)
    return list(seen.values())


def _ports(role: SwitchRoleSpec) -> list[tuple[int, PortGroupSpec]]:
    ports: list[tuple[int, PortGroupSpec]] = []
    for group in role.port_groups:
        first = len(ports)
        ports.extend((first + i, group) for i in range(group.count))
    return ports


def _sonic_pools(
    spec: BaselineSpec, role: SwitchRoleSpec, classes: list[PortClass]
) -> tuple[int, int]:
    """(ingress pool, egress lossless pool) bytes: headroom is reserved out of the buffer."""
    buffer = int(spec.buffer_bytes or SN5600_EGRESS_LOSSLESS_POOL_BYTES)
    by_key = {(c.speed_gbps, c.cable_length_m): c for c in classes}
    reserved = sum(
        by_key[(g.speed_gbps, g.cable_length_m)].headroom.size_bytes * g.count
        for g in role.port_groups
    )
    shared = buffer - reserved
    if shared <= 0:
        raise input_error(
            "FP423",
            f"switch role {role.name}",
            "lossless headroom does not fit in the buffer",
            f"{reserved} B headroom, {buffer} B buffer",
            "use a switch with more buffer, shorter cables or fewer lossless ports",
        )
    return shared, buffer


def _capped(classes: list[PortClass], trigger: float) -> list[PortClass]:
    return [
        PortClass(
            c.speed_gbps, c.cable_length_m, c.headroom, *ecn_thresholds_bytes(c.speed_gbps, trigger)
        )
        for c in classes
    ]


def sonic_config(spec: BaselineSpec, role: SwitchRoleSpec) -> dict[str, Any]:
    """A SONiC config_db fragment for one switch role."""
    mtu = SWITCH_MTU_BYTES["sonic"]
    classes = port_classes(spec, role, mtu)
    ingress_pool, egress_pool = _sonic_pools(spec, role, classes)
    classes = _capped(classes, dynamic_threshold_trigger_bytes(ingress_pool, DYNAMIC_TH_LOSSLESS))
    by_key = {(c.speed_gbps, c.cable_length_m): c for c in classes}
    prio, cnp = spec.lossless_priority, spec.cnp_priority
    ports = _ports(role)
    names = []
    cfg: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": f"{role.name}01",
                "type": f"{role.name.capitalize()}Router",
                "buffer_model": "traditional",
                "default_pfcwd_status": "enable",
                **({"platform": spec.sonic_platform} if spec.sonic_platform else {}),
            }
        },
        "PORT": {},
        "CABLE_LENGTH": {"AZURE": {}},
        "PORT_QOS_MAP": {},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": _int_text(WATCHDOG_POLL_MS)}},
        "QUEUE": {},
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
    }
    lane = 0
    for index, group in ports:
        lanes = spec.lanes_per_port or lanes_for(group.speed_gbps)
        if role.port_names:
            name = role.port_names[index]
            lane = int(name.removeprefix("Ethernet"))
        else:
            name = f"Ethernet{lane}"
        names.append(name)
        cfg["PORT"][name] = {
            "lanes": ",".join(str(lane + k) for k in range(lanes)),
            "speed": str(int(gbps_to_mbps(group.speed_gbps))),
            "mtu": str(mtu),
            "admin_status": "up",
            "description": f"{'host' if group.facing == 'host' else group.peer or 'uplink'}"
            f" port {index + 1}",
        }
        lane += lanes
        pclass = by_key[(group.speed_gbps, group.cable_length_m)]
        cfg["CABLE_LENGTH"]["AZURE"][name] = f"{_meters(group.cable_length_m)}m"
        cfg["PORT_QOS_MAP"][name] = {
            "dscp_to_tc_map": "ROCE",
            "tc_to_queue_map": "ROCE",
            "tc_to_pg_map": "ROCE",
            "pfc_to_pg_map": "ROCE",
            "pfc_to_queue_map": "ROCE",
            "pfc_enable": str(prio),
            "pfcwd_sw_enable": str(prio),
        }
        cfg["PFC_WD"][name] = {
            "action": WATCHDOG_ACTION,
            "detection_time": _int_text(WATCHDOG_DETECTION_MS),
            "restoration_time": _int_text(WATCHDOG_RESTORATION_MS),
        }
        cfg["QUEUE"][f"{name}|{BEST_EFFORT_TC}"] = {"scheduler": "scheduler.best_effort"}
        cfg["QUEUE"][f"{name}|{prio}"] = {
            "scheduler": "scheduler.roce",
            "wred_profile": _wred_name(pclass.speed_gbps),
        }
        cfg["QUEUE"][f"{name}|{cnp}"] = {"scheduler": "scheduler.cnp"}
        cfg["BUFFER_PG"][f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        cfg["BUFFER_PG"][f"{name}|{prio}"] = {"profile": pclass.profile_name}
        cfg["BUFFER_QUEUE"][f"{name}|{prio}"] = {"profile": "egress_lossless_profile"}
        for queue in range(8):
            if queue != prio:
                cfg["BUFFER_QUEUE"][f"{name}|{queue}"] = {"profile": "egress_lossy_profile"}
    dscp_map = {str(d): str(BEST_EFFORT_TC) for d in range(64)}
    dscp_map[str(spec.roce_dscp)] = str(prio)
    dscp_map[str(spec.cnp_dscp)] = str(cnp)
    cfg["DSCP_TO_TC_MAP"] = {"ROCE": dscp_map}
    cfg["TC_TO_QUEUE_MAP"] = {"ROCE": {str(t): str(t) for t in range(8)}}
    cfg["MAP_PFC_PRIORITY_TO_QUEUE"] = {"ROCE": {str(t): str(t) for t in range(8)}}
    cfg["TC_TO_PRIORITY_GROUP_MAP"] = {
        "ROCE": {str(t): str(prio if t == prio else 0) for t in range(8)}
    }
    cfg["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {"ROCE": {str(prio): str(prio)}}
    cfg["PORT_QOS_MAP"]["global"] = {"dscp_to_tc_map": "ROCE"}
    cfg["SCHEDULER"] = {
        "scheduler.best_effort": {"type": "DWRR", "weight": str(ROCE_DWRR_PERCENT)},
        "scheduler.roce": {"type": "DWRR", "weight": str(ROCE_DWRR_PERCENT)},
        "scheduler.cnp": {"type": "STRICT"},
    }
    cfg["WRED_PROFILE"] = {
        _wred_name(c.speed_gbps): {
            "ecn": "ecn_all",
            "wred_green_enable": "true",
            "green_min_threshold": str(c.ecn_min_bytes),
            "green_max_threshold": str(c.ecn_max_bytes),
            "green_drop_probability": _int_text(ECN_MARK_PROBABILITY_PCT),
        }
        for c in classes
    }
    cfg["BUFFER_POOL"] = {
        "ingress_lossless_pool": {"size": str(ingress_pool), "type": "ingress", "mode": "dynamic"},
        "egress_lossless_pool": {"size": str(egress_pool), "type": "egress", "mode": "dynamic"},
        "egress_lossy_pool": {"size": str(ingress_pool), "type": "egress", "mode": "dynamic"},
    }
    cfg["BUFFER_PROFILE"] = {
        "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
        "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
    } | {
        c.profile_name: {
            "pool": "ingress_lossless_pool",
            "xon": str(c.headroom.xon_bytes),
            "xoff": str(c.headroom.xoff_bytes),
            "size": str(c.headroom.size_bytes),
            "dynamic_th": str(DYNAMIC_TH_LOSSLESS),
        }
        for c in classes
    }
    cfg["LOSSLESS_TRAFFIC_PATTERN"] = {
        "AZURE": {
            "mtu": str(SONIC_DEFAULT_LOSSLESS_MTU_BYTES),
            "small_packet_percentage": _int_text(SONIC_DEFAULT_SMALL_PACKET_PCT),
        }
    }
    return cfg


def _wred_name(speed_gbps: float) -> str:
    return f"ROCE_LOSSLESS_{speed_gbps:g}G"


def _int_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def nvue_config(spec: BaselineSpec, role: SwitchRoleSpec) -> str:
    """An NVUE ``nv config show -o yaml`` document for one switch role."""
    mtu = SWITCH_MTU_BYTES["nvue"]
    prio, cnp = spec.lossless_priority, spec.cnp_priority
    classes = port_classes(spec, role, mtu)
    lines = [
        f"# {role.name}: RoCE lossless baseline written by fabricplan roce-config.",
        "- header:",
        "    nvue-api-version: nvue_v1",
        "- set:",
        "    system:",
        f"      hostname: {role.name}01",
        "    qos:",
        "      roce:",
        "        enable: on",
        "        mode: lossless",
        "      mapping:",
        "        default-global:",
        "          trust: l3",
        "          dscp:",
        f"            '{spec.roce_dscp}':",
        f"              switch-priority: {prio}",
        f"            '{spec.cnp_dscp}':",
        f"              switch-priority: {cnp}",
        "      egress-queue-mapping:",
        "        default-global:",
        "          switch-priority:",
        f"            '{prio}':",
        f"              traffic-class: {prio}",
        f"            '{cnp}':",
        f"              traffic-class: {cnp}",
        "      egress-scheduler:",
        "        default-global:",
        "          traffic-class:",
        f"            '{BEST_EFFORT_TC}':",
        "              mode: dwrr",
        f"              bw-percent: {ROCE_DWRR_PERCENT}",
        f"            '{prio}':",
        "              mode: dwrr",
        f"              bw-percent: {ROCE_DWRR_PERCENT}",
        f"            '{cnp}':",
        "              mode: strict",
        "      pfc:",
    ]
    for pclass in {_nvue_pfc_profile(c): c for c in classes}.values():
        lines += [
            f"        {_nvue_pfc_profile(pclass)}:",
            "          switch-priority:",
            f"            '{prio}': {{}}",
            f"          cable-length: {_meters(pclass.cable_length_m)}",
            "          rx: enable",
            "          tx: enable",
        ]
    lines.append("      congestion-control:")
    for speed in sorted({c.speed_gbps for c in classes}):
        low, high = ecn_thresholds_bytes(speed)
        lines += [
            f"        {_nvue_ecn_profile(speed)}:",
            "          traffic-class:",
            f"            '{prio}':",
            "              ecn: enable",
            "              red: disable",
            f"              min-threshold: {low}",
            f"              max-threshold: {high}",
            f"              probability: {_int_text(ECN_MARK_PROBABILITY_PCT)}",
        ]
    lines += [
        "      pfc-watchdog:",
        f"        polling-interval: {NVUE_WATCHDOG_POLL_MS}",
        f"        robustness: {NVUE_WATCHDOG_ROBUSTNESS}",
        "    interface:",
    ]
    first = 1
    for group in role.port_groups:
        if group.count == 0:
            continue
        last = first + group.count - 1
        if role.port_names:
            key = ",".join(role.port_names[first - 1 : last])
        else:
            key = f"swp{first}" if last == first else f"swp{first}-{last}"
        pclass = next(
            c
            for c in classes
            if (c.speed_gbps, c.cable_length_m) == (group.speed_gbps, group.cable_length_m)
        )
        lines += [
            f"      {key}:",
            "        type: swp",
            f"        description: {'hosts' if group.facing == 'host' else group.peer or 'uplink'}",
            "        link:",
            f"          mtu: {mtu}",
            f"          speed: {group.speed_gbps:g}G",
            "        qos:",
            "          pfc:",
            f"            profile: {_nvue_pfc_profile(pclass)}",
            "          congestion-control:",
            f"            profile: {_nvue_ecn_profile(group.speed_gbps)}",
            "          pfc-watchdog: {}",
        ]
        first = last + 1
    return "\n".join(lines) + "\n"


def _nvue_pfc_profile(pclass: PortClass) -> str:
    return f"roce-pfc-{_meters(pclass.cable_length_m)}m"


def _nvue_ecn_profile(speed_gbps: float) -> str:
    return f"roce-ecn-{speed_gbps:g}g"


def eos_config(spec: BaselineSpec, role: SwitchRoleSpec) -> str:
    """An EOS running-config for one switch role."""
    mtu = SWITCH_MTU_BYTES["eos"]
    prio, cnp = spec.lossless_priority, spec.cnp_priority
    speeds = sorted({g.speed_gbps for g in role.port_groups})
    best_effort_tc = _eos_best_effort_tc()
    lines = [
        "! Command: show running-config",
        f"! {role.name}: RoCE lossless baseline written by fabricplan roce-config",
        "!",
        f"hostname {role.name}01",
        "!",
        f"qos map dscp {spec.roce_dscp} to traffic-class {prio}",
        f"qos map dscp {spec.cnp_dscp} to traffic-class {cnp}",
        f"qos map traffic-class {prio} to tx-queue {prio}",
        f"qos map traffic-class {cnp} to tx-queue {cnp}",
        "!",
        f"priority-flow-control pause watchdog default timeout {ms_to_s(WATCHDOG_DETECTION_MS):g}",
        "priority-flow-control pause watchdog default recovery-time"
        f" {ms_to_s(WATCHDOG_RESTORATION_MS):g}",
        "priority-flow-control pause watchdog default polling-interval"
        f" {ms_to_s(WATCHDOG_POLL_MS / 2):g}",
        f"priority-flow-control pause watchdog action {WATCHDOG_ACTION}",
        "!",
    ]
    for speed in speeds:
        low, high = ecn_thresholds_bytes(speed)
        lines += [
            f"qos profile ROCE-{speed:g}G",
            "   qos trust dscp",
            "   priority-flow-control on",
            f"   priority-flow-control priority {prio} no-drop",
            "   !",
            f"   uc-tx-queue {best_effort_tc}",
            "      no priority",
            f"      bandwidth percent {ROCE_DWRR_PERCENT}",
            "   !",
            f"   uc-tx-queue {prio}",
            "      no priority",
            f"      bandwidth percent {ROCE_DWRR_PERCENT}",
            f"      random-detect ecn minimum-threshold {low} bytes maximum-threshold {high}"
            f" bytes max-mark-probability {_int_text(ECN_MARK_PROBABILITY_PCT)} weight 0",
            "   !",
            f"   uc-tx-queue {cnp}",
            "      priority strict",
            "!",
        ]
    for index, group in _ports(role):
        interface = role.port_names[index] if role.port_names else f"Ethernet{index + 1}/1"
        lines += [
            f"interface {interface}",
            f"   description {'host' if group.facing == 'host' else group.peer or 'uplink'}"
            f" port {index + 1}",
            f"   mtu {mtu}",
            f"   speed {group.speed_gbps:g}g-{spec.lanes_per_port or lanes_for(group.speed_gbps)}",
            "   no switchport",
            f"   service-profile ROCE-{group.speed_gbps:g}G",
            "!",
        ]
    lines.append("end")
    return "\n".join(lines) + "\n"


def _eos_best_effort_tc() -> int:
    """EOS puts DSCP 0 in traffic class 1 by default (see :mod:`fabricplan.lint.reading.eos`)."""
    return EOS_DEFAULT_DSCP_TO_TC[BEST_EFFORT_DSCP]


def host_nic_commands(spec: BaselineSpec, interface: str = "eth0", device: str = "mlx5_0") -> str:
    """Shell commands that set a ConnectX NIC to the baseline (run on every host, every rail)."""
    prio, cnp = spec.lossless_priority, spec.cnp_priority
    pfc = ",".join("1" if p == prio else "0" for p in range(8))
    tos = roce_tos(spec)
    prio_tc = ",".join(str(p if p in (prio, cnp) else BEST_EFFORT_TC) for p in range(8))
    tsa = ",".join("strict" if tc == cnp else "ets" for tc in range(8))
    tcbw = ",".join(
        str(ROCE_DWRR_PERCENT) if tc in (BEST_EFFORT_TC, prio) else "0" for tc in range(8)
    )
    return "\n".join(
        [
            "#!/bin/sh",
            "# RoCE lossless baseline for one ConnectX port, written by fabricplan roce-config.",
            f"# Repeat for every RoCE interface. IF={interface} DEV={device}",
            "set -e",
            f'IF="${{IF:-{interface}}}"',
            f'DEV="${{DEV:-{device}}}"',
            'MST="${MST:-/dev/mst/mt4129_pciconf0}"',
            'ip link set dev "$IF" mtu ' + str(HOST_MTU_BYTES),
            'ethtool -A "$IF" rx off tx off',
            'mlnx_qos -i "$IF" --trust dscp',
            f'mlnx_qos -i "$IF" --pfc {pfc}',
            f'mlnx_qos -i "$IF" --cable_len {_meters(spec.host_cable_length_m)}',
            f'mlnx_qos -i "$IF" --prio_tc {prio_tc}',
            f'mlnx_qos -i "$IF" --tsa {tsa} --tcbw {tcbw}',
            f'mlnx_qos -i "$IF" --dscp2prio set,{spec.roce_dscp},{prio}',
            f'mlnx_qos -i "$IF" --dscp2prio set,{spec.cnp_dscp},{cnp}',
            f"echo {tos} > /sys/kernel/config/rdma_cm/$DEV/ports/1/default_roce_tos",
            f"for p in {prio}; do echo 1 > /sys/class/net/$IF/ecn/roce_rp/enable/$p;"
            " echo 1 > /sys/class/net/$IF/ecn/roce_np/enable/$p; done",
            "# Firmware settings (take effect after a reset):",
            f'mlxconfig -y -d "$MST" set ROCE_CC_PRIO_MASK_P1={1 << prio}'
            f" CNP_DSCP_P1={spec.cnp_dscp} CNP_802P_PRIO_P1={cnp} DCBX_WILLING_P1=0",
            "",
        ]
    )


def host_nic_expected(spec: BaselineSpec) -> str:
    """What ``mlnx_qos``, ``mlxconfig q``, sysfs and ``ip link`` print on a baseline host."""
    prio, cnp = spec.lossless_priority, spec.cnp_priority
    lines = [
        "DCBX mode: OS controlled",
        "Priority trust state: dscp",
        "dscp2prio mapping:",
    ]
    for p in range(8):
        dscps = [d for d in range(64) if _nic_dscp_priority(spec, d) == p]
        lines.append(f"\tprio:{p} dscp:{','.join(f'{d:02d}' for d in reversed(dscps))},")
    lines += [
        f"Cable len: {_meters(spec.host_cable_length_m)}",
        "PFC configuration:",
        "\tpriority    " + "   ".join(str(p) for p in range(8)),
        "\tenabled     " + "   ".join("1" if p == prio else "0" for p in range(8)),
    ]
    lines.append(f"tc: {BEST_EFFORT_TC} ratelimit: unlimited, tsa: ets, bw: {ROCE_DWRR_PERCENT}%")
    lines += [f"\t priority:  {p}" for p in range(8) if p not in (prio, cnp)]
    lines.append(f"tc: {prio} ratelimit: unlimited, tsa: ets, bw: {ROCE_DWRR_PERCENT}%")
    lines.append(f"\t priority:  {prio}")
    lines.append(f"tc: {cnp} ratelimit: unlimited, tsa: strict")
    lines.append(f"\t priority:  {cnp}")
    lines += [
        f"4: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu {HOST_MTU_BYTES} qdisc mq state UP",
        f"\t\t\tactive_mtu:\t\t{ROCE_MTU_BYTES} (5)",
        "Pause parameters for eth0:",
        "RX:\t\toff",
        "TX:\t\toff",
        f"/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos:{roce_tos(spec)}",
        f"/sys/class/net/eth0/ecn/roce_rp/enable/{prio}:1",
        f"/sys/class/net/eth0/ecn/roce_np/enable/{prio}:1",
        "Configurations:                                          Next Boot",
        f"        ROCE_CC_PRIO_MASK_P1                        {1 << prio}",
        "        ROCE_CC_ALGORITHM_P1                        ECN(0)",
        f"        CNP_DSCP_P1                                 {spec.cnp_dscp}",
        f"        CNP_802P_PRIO_P1                            {cnp}",
        "        DCBX_WILLING_P1                             False(0)",
    ]
    return "\n".join(lines) + "\n"


def roce_tos(spec: BaselineSpec) -> int:
    """The ToS byte RoCE data is sent with: the RoCE DSCP and ECN-capable transport ECT(0).

    >>> roce_tos(BaselineSpec(switch_roles=(), host_speed_gbps=400, host_cable_length_m=3))
    106
    """
    return spec.roce_dscp << DSCP_SHIFT_IN_TOS | ECN_ECT0


def _nic_dscp_priority(spec: BaselineSpec, dscp: int) -> int:
    """The NIC's dscp2prio: ConnectX default DSCP // 8, with the RoCE and CNP DSCPs pinned."""
    if dscp == spec.roce_dscp:
        return spec.lossless_priority
    if dscp == spec.cnp_dscp:
        return spec.cnp_priority
    return dscp // 8


def baseline_summary(spec: BaselineSpec, vendor: Vendor) -> str:
    """A Markdown table of what was chosen per role and port class, and why."""
    mtu = SWITCH_MTU_BYTES[vendor]
    lines = [
        f"# RoCE lossless baseline ({vendor})",
        "",
        f"Lossless priority {spec.lossless_priority}; RoCE DSCP {spec.roce_dscp};"
        f" CNP DSCP {spec.cnp_dscp} on priority {spec.cnp_priority} ({spec.nic_name}), strict;"
        f" PFC watchdog {WATCHDOG_DETECTION_MS:g} ms detection / {WATCHDOG_RESTORATION_MS:g} ms"
        f" restoration; switch MTU {mtu}, host MTU {HOST_MTU_BYTES}, RoCE MTU {ROCE_MTU_BYTES}.",
        "",
        "| role | switches | ports | facing | speed | cable | xoff B | xon B | size B |"
        " ECN min B | ECN max B |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for role in spec.switch_roles:
        listed = port_classes(spec, role, mtu)
        if vendor == "sonic":
            # SONiC thresholds are capped by the PFC trigger of the pool this role gets.
            ingress_pool, _ = _sonic_pools(spec, role, listed)
            listed = _capped(
                listed, dynamic_threshold_trigger_bytes(ingress_pool, DYNAMIC_TH_LOSSLESS)
            )
        classes = {(c.speed_gbps, c.cable_length_m): c for c in listed}
        for group in role.port_groups:
            c = classes[(group.speed_gbps, group.cable_length_m)]
            lines.append(
                f"| {role.name} | {role.count} | {group.count} | {group.facing} |"
                f" {group.speed_gbps:g}G | {_meters(group.cable_length_m)} m |"
                f" {c.headroom.xoff_bytes} | {c.headroom.xon_bytes} | {c.headroom.size_bytes} |"
                f" {c.ecn_min_bytes} | {c.ecn_max_bytes} |"
            )
    static_speeds = ", ".join(f"{speed:g}G" for speed, _, _ in spec.static_headroom)
    lines += [
        "",
        (
            f"Headroom at {static_speeds}: the SONiC platform's own lossless profiles; else:"
            if static_speeds
            else "Headroom:"
        )
        + " SONiC Mellanox formula (sonic-swss buffer_headroom_mellanox.lua) with the"
        f" {spec.asic.name} ASIC figures; SONiC gets these as static profiles, Cumulus computes"
        " its own from the cable length it is given, EOS sizes it internally.",
        "ECN: Cumulus `qos roce` thresholds at 400G scaled linearly with speed, capped at half the"
        " PFC trigger. Check with: fabricplan lint <files>.",
        "",
    ]
    return "\n".join(lines)


def roce_baseline(spec: BaselineSpec, vendor: str) -> dict[str, str]:
    """Every file of the baseline: one switch config per role, the host NIC files, a summary.

    Raises
    ------
    InputFileError
        FP421 for an unknown vendor; FP423 when the headroom does not fit the switch buffer.
    """
    if vendor not in VENDORS:
        raise input_error(
            "FP421", "--vendor", "unknown vendor", vendor, f"use one of {', '.join(VENDORS)}"
        )
    files: dict[str, str] = {}
    for role in spec.switch_roles:
        if vendor == "sonic":
            files[f"sonic-{role.name}.json"] = json.dumps(sonic_config(spec, role), indent=4) + "\n"
        elif vendor == "nvue":
            files[f"nvue-{role.name}.yaml"] = nvue_config(spec, role)
        else:
            files[f"eos-{role.name}.cfg"] = eos_config(spec, role)
    files["host-nic.sh"] = host_nic_commands(spec)
    files["host-nic-expected.txt"] = host_nic_expected(spec)
    files["baseline.md"] = baseline_summary(spec, VENDORS[VENDORS.index(vendor)])
    return files


def _link(design: FabricDesign, name: str) -> tuple[float, float] | None:
    for group in design.link_groups:
        if group.name == name and group.count > 0:
            return group.speed_gbps, group.reach_m
    return None


def baseline_spec(valid: ValidScenario, design: FabricDesign) -> BaselineSpec:
    """The generator's input for a designed RoCE fabric.

    Port counts per switch come from the design's tiers, speeds and cable lengths from its link
    groups (falling back to the spec's cable reach), CNP marking and NIC from the scenario.
    """
    technology: TechnologyName = design.technology
    reach = valid.spec.fabric.cable_reach
    host = _link(design, "node_leaf") or (design.port_speed_gbps, reach.node_leaf_m)
    leaf_spine = _link(design, "leaf_spine") or (design.port_speed_gbps, reach.leaf_spine_m)
    spine_core = _link(design, "spine_core") or (design.port_speed_gbps, reach.spine_core_m)
    below = {"leaf": host, "spine": leaf_spine, "core": spine_core}
    above = {"leaf": (leaf_spine, "spine"), "spine": (spine_core, "core")}
    roles = []
    for tier in design.tier_designs:
        groups = []
        if tier.down_ports:
            down_speed, down_reach = below[tier.name]
            groups.append(
                PortGroupSpec(
                    "host" if tier.name == "leaf" else "fabric",
                    tier.down_ports,
                    down_speed,
                    down_reach,
                    "hosts" if tier.name == "leaf" else "downlink",
                )
            )
        if tier.up_ports and tier.name in above:
            (up_speed, up_reach), peer = above[tier.name]
            groups.append(PortGroupSpec("fabric", tier.up_ports, up_speed, up_reach, peer))
        if groups and tier.switches:
            roles.append(SwitchRoleSpec(tier.name, tier.switches, tuple(groups)))
    nic = valid.nics.get(technology)
    switch = valid.switches.get(technology)
    buffer = switch.buffer_bytes.value if switch is not None and switch.buffer_bytes else None
    return BaselineSpec(
        switch_roles=tuple(roles),
        host_speed_gbps=host[0],
        host_cable_length_m=host[1],
        cnp_dscp=nic.cnp_dscp if nic is not None and nic.cnp_dscp is not None else 48,
        cnp_priority=nic.cnp_priority if nic is not None and nic.cnp_priority is not None else 6,
        nic_name=nic.name if nic is not None else "ConnectX",
        buffer_bytes=buffer,
    )
