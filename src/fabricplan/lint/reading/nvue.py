"""NVIDIA Cumulus Linux NVUE configuration (``nv config show -o yaml``) into a DeviceConfig.

The document is the list NVUE writes (``- header: ...``, ``- set: ...``); a bare mapping with a
``set`` key, or the contents of ``set`` alone, is accepted too. The YAML paths mirror the ``nv set``
commands (``nv set qos pfc default-global switch-priority 3`` is ``set.qos.pfc.default-global.
switch-priority.'3'``).

``qos roce`` is expanded to the settings the Cumulus documentation lists for that mode
(docs/refs.md C.1, Cumulus Linux 5.14 "RDMA over Converged Ethernet - RoCE"): trust ``pcp,dscp``;
DSCP 24-31 -> switch priority 3 and 48-55 -> 6 (the default DSCP map, DSCP // 8); switch priority
3 -> traffic class 3, 6 -> 6, others -> 0; ETS TC6 strict, TC3 and TC0 DWRR 50 %; ECN on TCs 0
and 3 at 150,000 / 1,500,000 B, probability 100; in lossless modes PFC rx and tx on switch
priority 3 with cable length 100 m and the ``roce-lossless`` traffic pool. Explicit ``qos``
settings then override these defaults, as NVUE applies them.

>>> device = parse_nvue('''
... - set:
...     qos: {roce: {enable: on, mode: lossless}}
...     interface: {swp1-2: {type: swp, link: {mtu: 9216, speed: 400G}}}
... ''', "leaf.yaml")
>>> [p.name for p in device.ports], sorted(device.ports[0].pfc_set), device.ports[0].cable_length_m
(['swp1', 'swp2'], [3], 100.0)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricplan.lint.model import (
    BufferPool,
    BufferProfile,
    DeviceConfig,
    EcnProfile,
    Origin,
    PortConfig,
    QueueScheduler,
    SchedulerKind,
    TrustMode,
    Watchdog,
)
from fabricplan.lint.value import (
    expand_names,
    input_error,
    int_range,
    role_from_description,
    to_bool,
    to_float,
    to_int,
    to_priority,
)
from fabricplan.units import mbps_to_gbps

DEFAULT_PROFILE = "default-global"

ROCE_LOSSLESS_MODES = frozenset({"lossless", "lossless-single-ipool"})
ROCE_MODES = ROCE_LOSSLESS_MODES | {"lossy", "lossy-multi-tc"}

ROCE_PFC_PRIORITY = 3
ROCE_CNP_PRIORITY = 6
ROCE_CABLE_LENGTH_M = 100.0
"""``nv show qos roce``: pfc.cable-length 100 (Cumulus Linux 5.14 docs)."""
ROCE_ECN_TRAFFIC_CLASSES = (0, 3)
ROCE_ECN_MIN_BYTES = 150_000.0
ROCE_ECN_MAX_BYTES = 1_500_000.0
ROCE_ECN_PROBABILITY_PCT = 100.0
ROCE_DWRR_PERCENT = 50.0
"""Cumulus ``qos roce`` defaults (docs/refs.md C.1): ECN min 150,000 B, max 1,500,000 B
(the docs print 1,501,500 B and 1.43 MB), probability 100; ETS TC3 and TC0 DWRR 50 %, TC6
strict."""

DEFAULT_PFC_CABLE_LENGTH_M = 10.0
"""``nv set qos pfc <profile> cable-length``: the default is 10 m (Cumulus QoS docs)."""
DEFAULT_WATCHDOG_POLL_MS = 100.0
DEFAULT_WATCHDOG_ROBUSTNESS = 3
"""Cumulus PFC watchdog: polling interval 100 ms, 3 polling intervals before mitigation."""

DEFAULT_DSCP_MAP: dict[int, int] = {dscp: dscp // 8 for dscp in range(64)}
"""Cumulus default DSCP -> switch priority when DSCP is trusted (0-7 -> 0, ..., 56-63 -> 7)."""

TRUST_MODES: dict[str, TrustMode] = {"l2": "pcp", "l3": "dscp", "both": "both", "port": "port"}
FIELDS_BY_FEATURE: dict[str, frozenset[str]] = {
    "mapping": frozenset({"trust", "dscp_to_priority"}),
    "egress-queue-mapping": frozenset({"priority_to_queue"}),
    "pfc": frozenset({"pfc_priorities", "pfc_rx", "pfc_tx", "cable_length_m", "ingress_buffers"}),
    "congestion-control": frozenset({"ecn"}),
    "egress-scheduler": frozenset({"scheduler"}),
}
"""Which port fields each NVUE qos feature sets (its profile's origins are taken for these)."""
PORT_TYPES = frozenset({"swp", "bond"})

_SPEED_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GM]?)\s*$", re.IGNORECASE)
_MS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms)?\s*$", re.IGNORECASE)


@dataclass
class _Profile:
    """One set of QoS settings (the global one or a named port group)."""

    trust: TrustMode | None = None
    dscp_to_priority: dict[int, int] | None = None
    priority_to_queue: dict[int, int] | None = None
    pfc_priorities: frozenset[int] | None = None
    pfc_rx: bool | None = None
    pfc_tx: bool | None = None
    cable_length_m: float | None = None
    port_buffer_bytes: float | None = None
    xoff_threshold_bytes: float | None = None
    ecn: dict[int, EcnProfile] = field(default_factory=dict)
    scheduler: dict[int, QueueScheduler] = field(default_factory=dict)
    where: dict[str, Origin] = field(default_factory=dict)


class _Doc:
    def __init__(self, data: Mapping[str, Any], file: str) -> None:
        self.data = data
        self.file = file

    def where(self, *path: str) -> str:
        return f"{self.file}: {'.'.join(path)}"

    def origin(self, *path: str) -> Origin:
        return Origin(self.file, key=".".join(path), path=("set", *path))

    def node(self, *path: str) -> dict[str, Any]:
        """The mapping at ``path`` (empty when absent; FP405 when it is not a mapping)."""
        current: Any = self.data
        for depth, key in enumerate(path):
            if not isinstance(current, Mapping):
                raise input_error("FP405", self.where(*path[:depth]), "expected a mapping")
            current = _get(current, key)
            if current is None:
                return {}
        if not isinstance(current, Mapping):
            raise input_error("FP405", self.where(*path), "expected a mapping", _brief(current))
        return {str(k): v for k, v in current.items()}


def _get(mapping: Mapping[Any, Any], key: str) -> Any:
    if key in mapping:
        return mapping[key]
    if key.isdigit() and int(key) in mapping:
        return mapping[int(key)]
    return None


def _mapping(value: object, where: str) -> dict[str, Any]:
    """``value`` as a mapping with string keys (``None`` is empty); FP405 otherwise."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise input_error("FP405", where, "expected a mapping", _brief(value))
    return {str(k): v for k, v in value.items()}


def _brief(value: object) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def _load(text: str, file: str) -> Mapping[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise input_error(
            "FP404",
            f"{file}{line}",
            "not valid YAML",
            exc.problem or str(exc),
            "fix the YAML syntax (as `nv config show -o yaml` prints it)",
        ) from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise input_error("FP404", file, "not valid YAML", type(exc).__name__) from None
    if isinstance(data, list):
        merged: dict[str, Any] = {}
        for item in data:
            if isinstance(item, Mapping) and isinstance(item.get("set"), Mapping):
                merged.update({str(k): v for k, v in item["set"].items()})
            elif not (isinstance(item, Mapping) and "header" in item):
                raise input_error(
                    "FP407",
                    file,
                    "expected a list of `header:` and `set:` maps",
                    _brief(item),
                    "give the output of `nv config show -o yaml`",
                )
        return merged
    if isinstance(data, Mapping):
        inner = data.get("set")
        if isinstance(inner, Mapping):
            return {str(k): v for k, v in inner.items()}
        if "qos" in data or "interface" in data:
            return {str(k): v for k, v in data.items()}
    raise input_error(
        "FP407",
        file,
        "not an NVUE configuration (no `set:` with qos or interface)",
        None,
        "give the output of `nv config show -o yaml`",
    )


def parse_nvue(text: str, file: str) -> DeviceConfig:
    """Read an NVUE configuration (``nv config show -o yaml``).

    Raises
    ------
    InputFileError
        FP404 for invalid YAML (with its line), FP405 for a node of the wrong shape, FP406/FP409
        for a bad value, FP407 when the document is not an NVUE configuration.
    """
    doc = _Doc(_load(text, file), file)
    roce = doc.node("qos", "roce")
    mode = None
    if roce or "roce" in doc.node("qos"):
        enabled = roce.get("enable", True)
        if to_bool(enabled, doc.where("qos", "roce", "enable")):
            mode = str(roce.get("mode", "lossless")).lower()
            if mode not in ROCE_MODES:
                raise input_error(
                    "FP409",
                    doc.where("qos", "roce", "mode"),
                    "unknown RoCE mode",
                    mode,
                    f"use one of {sorted(ROCE_MODES)}",
                )
    profiles = _profiles(doc, mode)
    watchdog_node = doc.node("qos", "pfc-watchdog")
    poll_ms = (
        _milliseconds(
            watchdog_node["polling-interval"], doc.where("qos", "pfc-watchdog", "polling-interval")
        )
        if "polling-interval" in watchdog_node
        else DEFAULT_WATCHDOG_POLL_MS
    )
    robustness = (
        to_int(watchdog_node["robustness"], doc.where("qos", "pfc-watchdog", "robustness"))
        if "robustness" in watchdog_node
        else DEFAULT_WATCHDOG_ROBUSTNESS
    )
    ar_global = doc.node("router", "adaptive-routing")
    ar_on = to_bool(ar_global.get("enable", False), doc.where("router", "adaptive-routing"))
    link_pause_profiles = doc.node("qos", "link-pause")

    ports: list[PortConfig] = []
    for key, value in doc.node("interface").items():
        if not isinstance(value, Mapping):
            if value is None:
                value = {}
            else:
                raise input_error("FP405", doc.where("interface", key), "expected a mapping")
        iface = {str(k): v for k, v in value.items()}
        names = expand_names(key, doc.where("interface", key))
        kind_text = str(iface.get("type", "swp" if names and names[0].startswith("swp") else ""))
        if kind_text not in PORT_TYPES:
            continue
        for name in names:
            ports.append(
                _port(
                    doc,
                    key,
                    name,
                    iface,
                    profiles,
                    (poll_ms, robustness),
                    ar_on,
                    link_pause_profiles,
                )
            )
    if not ports:
        # No switch ports listed: check the global profile as if it were one port.
        ports.append(
            _port(
                doc,
                "",
                f"{DEFAULT_PROFILE} (all ports)",
                {},
                profiles,
                (poll_ms, robustness),
                ar_on,
                link_pause_profiles,
            )
        )
    header_name = Path(file).stem
    hostname = doc.node("system").get("hostname")
    pools = _pools(doc, mode)
    return DeviceConfig(
        name=str(hostname) if hostname else header_name,
        kind="switch",
        format="nvue",
        file=file,
        ports=tuple(ports),
        buffer_pools=pools,
        lossless_pool_required=True,
        where={"buffer_pools": doc.origin("qos", "traffic-pool")},
    )


def _roce_profile(doc: _Doc, mode: str) -> _Profile:
    origin = doc.origin("qos", "roce")
    lossless = mode in ROCE_LOSSLESS_MODES
    dscp_map = dict(DEFAULT_DSCP_MAP)
    queue_map = {sp: 0 for sp in range(8)} | {ROCE_PFC_PRIORITY: 3, ROCE_CNP_PRIORITY: 6}
    ecn = {
        tc: EcnProfile(
            ecn_enabled=True,
            min_threshold_bytes=ROCE_ECN_MIN_BYTES,
            max_threshold_bytes=ROCE_ECN_MAX_BYTES,
            mark_probability_pct=ROCE_ECN_PROBABILITY_PCT,
            name="roce",
        )
        for tc in ROCE_ECN_TRAFFIC_CLASSES
    }
    scheduler = {
        0: QueueScheduler("dwrr", ROCE_DWRR_PERCENT, weight_is_percent=True),
        3: QueueScheduler("dwrr", ROCE_DWRR_PERCENT, weight_is_percent=True),
        6: QueueScheduler("strict"),
    }
    fields = (
        "trust",
        "dscp_to_priority",
        "priority_to_queue",
        "pfc_priorities",
        "pfc_rx",
        "cable_length_m",
    )
    return _Profile(
        trust="both",
        dscp_to_priority=dscp_map,
        priority_to_queue=queue_map,
        pfc_priorities=frozenset({ROCE_PFC_PRIORITY}) if lossless else None,
        pfc_rx=True if lossless else None,
        pfc_tx=True if lossless else None,
        cable_length_m=ROCE_CABLE_LENGTH_M if lossless else None,
        ecn=ecn,
        scheduler=scheduler,
        where={name: origin for name in fields}
        | {f"ecn.{tc}": origin for tc in ecn}
        | {f"scheduler.{tc}": origin for tc in scheduler},
    )


def _profiles(doc: _Doc, roce_mode: str | None) -> dict[tuple[str, str], _Profile]:
    """QoS settings per (feature, profile name); the global profile is (feature, default-global)."""
    base = _roce_profile(doc, roce_mode) if roce_mode else _Profile()
    result: dict[tuple[str, str], _Profile] = {}
    for feature in (
        "mapping",
        "egress-queue-mapping",
        "pfc",
        "congestion-control",
        "egress-scheduler",
    ):
        names = set(doc.node("qos", feature)) | {DEFAULT_PROFILE}
        for name in names:
            profile = (
                _Profile(**{k: v for k, v in vars(base).items()})
                if (name == DEFAULT_PROFILE)
                else _Profile()
            )
            profile.ecn = dict(profile.ecn)
            profile.scheduler = dict(profile.scheduler)
            profile.where = dict(profile.where)
            _apply(doc, feature, name, profile)
            result[(feature, name)] = profile
    return result


def _apply(doc: _Doc, feature: str, name: str, profile: _Profile) -> None:
    node = doc.node("qos", feature, name)
    path = ("qos", feature, name)
    if not node:
        return
    if feature == "mapping":
        if "trust" in node:
            trust = str(node["trust"]).lower()
            if trust not in TRUST_MODES:
                raise input_error(
                    "FP409",
                    doc.where(*path, "trust"),
                    "unknown trust mode",
                    trust,
                    "use l2, l3, both or port",
                )
            profile.trust = TRUST_MODES[trust]
            profile.where["trust"] = doc.origin(*path, "trust")
        dscp = doc.node(*path, "dscp")
        if dscp:
            mapping = dict(profile.dscp_to_priority or DEFAULT_DSCP_MAP)
            for key, value in dscp.items():
                where = doc.where(*path, "dscp", key)
                target = value.get("switch-priority") if isinstance(value, Mapping) else None
                if target is None:
                    raise input_error("FP405", where, "expected `switch-priority: <n>`")
                for number in int_range(key, where, 0, 63):
                    mapping[number] = to_priority(target, where)
            profile.dscp_to_priority = mapping
            profile.where["dscp_to_priority"] = doc.origin(*path, "dscp")
    elif feature == "egress-queue-mapping":
        sps = doc.node(*path, "switch-priority")
        if sps:
            mapping = dict(profile.priority_to_queue or {sp: sp for sp in range(8)})
            for key, value in sps.items():
                where = doc.where(*path, "switch-priority", key)
                target = value.get("traffic-class") if isinstance(value, Mapping) else None
                if target is None:
                    raise input_error("FP405", where, "expected `traffic-class: <n>`")
                for number in int_range(key, where):
                    mapping[number] = to_priority(target, where)
            profile.priority_to_queue = mapping
            profile.where["priority_to_queue"] = doc.origin(*path, "switch-priority")
    elif feature == "pfc":
        _apply_pfc(doc, path, node, profile)
    elif feature == "congestion-control":
        for key, value in doc.node(*path, "traffic-class").items():
            where = doc.where(*path, "traffic-class", key)
            settings = _mapping(value, where)
            for tc in int_range(key, where):
                old = profile.ecn.get(tc)
                profile.ecn[tc] = _ecn(settings, where, old)
                profile.where[f"ecn.{tc}"] = doc.origin(*path, "traffic-class", key)
    elif feature == "egress-scheduler":
        for key, value in doc.node(*path, "traffic-class").items():
            where = doc.where(*path, "traffic-class", key)
            if not isinstance(value, Mapping):
                raise input_error("FP405", where, "expected a mapping")
            mode_text = str(value.get("mode", "dwrr")).lower()
            kind: SchedulerKind = "strict" if mode_text == "strict" else "dwrr"
            weight = to_float(value["bw-percent"], where) if "bw-percent" in value else None
            for tc in int_range(key, where):
                profile.scheduler[tc] = QueueScheduler(kind, weight, weight_is_percent=True)
                profile.where[f"scheduler.{tc}"] = doc.origin(*path, "traffic-class", key)


def _apply_pfc(doc: _Doc, path: tuple[str, ...], node: dict[str, Any], profile: _Profile) -> None:
    if "switch-priority" in node:
        value = node["switch-priority"]
        where = doc.where(*path, "switch-priority")
        if isinstance(value, Mapping):
            keys = [str(k) for k in value]
        elif isinstance(value, int | str) and not isinstance(value, bool):
            keys = [str(value)]
        else:
            raise input_error("FP405", where, "expected switch priorities", _brief(value))
        profile.pfc_priorities = frozenset(n for key in keys for n in int_range(key, where))
        profile.where["pfc_priorities"] = doc.origin(*path, "switch-priority")
        if profile.pfc_rx is None:
            profile.pfc_rx = True
        if profile.pfc_tx is None:
            profile.pfc_tx = True
        if profile.cable_length_m is None:
            profile.cable_length_m = DEFAULT_PFC_CABLE_LENGTH_M
    for direction in ("rx", "tx"):
        if direction in node:
            enabled = to_bool(node[direction], doc.where(*path, direction))
            setattr(profile, f"pfc_{direction}", enabled)
            profile.where[f"pfc_{direction}"] = doc.origin(*path, direction)
    if "cable-length" in node:
        profile.cable_length_m = to_float(node["cable-length"], doc.where(*path, "cable-length"))
        profile.where["cable_length_m"] = doc.origin(*path, "cable-length")
    if "port-buffer" in node:
        profile.port_buffer_bytes = to_float(node["port-buffer"], doc.where(*path, "port-buffer"))
        profile.where["ingress_buffers"] = doc.origin(*path, "port-buffer")
    if "xoff-threshold" in node:
        profile.xoff_threshold_bytes = to_float(
            node["xoff-threshold"], doc.where(*path, "xoff-threshold")
        )
        profile.where["ingress_buffers"] = doc.origin(*path, "xoff-threshold")


def _ecn(settings: dict[str, Any], where: str, old: EcnProfile | None) -> EcnProfile:
    def number(key: str, default: float | None) -> float | None:
        return to_float(settings[key], where) if key in settings else default

    ecn_on = (
        to_bool(settings["ecn"], where) if "ecn" in settings else (old.ecn_enabled if old else True)
    )
    red_on = (
        to_bool(settings["red"], where)
        if "red" in settings
        else (old.drop_enabled if old else False)
    )
    return EcnProfile(
        ecn_enabled=ecn_on,
        min_threshold_bytes=number("min-threshold", old.min_threshold_bytes if old else None),
        max_threshold_bytes=number("max-threshold", old.max_threshold_bytes if old else None),
        mark_probability_pct=number(
            "probability", old.mark_probability_pct if old else ROCE_ECN_PROBABILITY_PCT
        ),
        drop_enabled=red_on,
    )


def _milliseconds(value: object, where: str) -> float:
    match = _MS_RE.match(str(value))
    if match is None:
        raise input_error("FP406", where, "expected milliseconds", _brief(value))
    return float(match.group(1))


def _speed_gbps(value: object, where: str) -> float | None:
    text = str(value).strip()
    if text.lower() == "auto":
        return None
    match = _SPEED_RE.match(text)
    if match is None:
        raise input_error("FP406", where, "expected a speed like 400G", _brief(value))
    number, unit = float(match.group(1)), match.group(2).upper()
    return mbps_to_gbps(number) if unit == "M" else number


def _port(
    doc: _Doc,
    key: str,
    name: str,
    iface: dict[str, Any],
    profiles: dict[tuple[str, str], _Profile],
    watchdog_timing: tuple[float, int],
    ar_on: bool,
    link_pause_profiles: dict[str, Any],
) -> PortConfig:
    qos = _mapping(iface.get("qos"), doc.where("interface", key, "qos"))

    def chosen(feature: str) -> _Profile:
        assigned = qos.get(feature)
        name_ = DEFAULT_PROFILE
        if isinstance(assigned, Mapping) and "profile" in assigned:
            name_ = str(assigned["profile"])
        if (feature, name_) not in profiles:
            raise input_error(
                "FP405",
                doc.where("interface", key, "qos", feature, "profile"),
                f"refers to a qos {feature} profile that is not defined",
                name_,
            )
        return profiles[(feature, name_)]

    mapping, queues, pfc = chosen("mapping"), chosen("egress-queue-mapping"), chosen("pfc")
    ecn, sched = chosen("congestion-control"), chosen("egress-scheduler")
    where: dict[str, Origin] = {}
    for feature, profile in (
        ("mapping", mapping),
        ("egress-queue-mapping", queues),
        ("pfc", pfc),
        ("congestion-control", ecn),
        ("egress-scheduler", sched),
    ):
        where.update(
            (name, origin)
            for name, origin in profile.where.items()
            if name.split(".")[0] in FIELDS_BY_FEATURE[feature]
        )

    link = _mapping(iface.get("link"), doc.where("interface", key, "link"))
    speed = None
    if "speed" in link:
        speed = _speed_gbps(link["speed"], doc.where("interface", key, "link", "speed"))
        where["speed_gbps"] = doc.origin("interface", key, "link", "speed")
    mtu = None
    if "mtu" in link:
        mtu = to_int(link["mtu"], doc.where("interface", key, "link", "mtu"))
        where["mtu_bytes"] = doc.origin("interface", key, "link", "mtu")

    watchdog = None
    if "pfc-watchdog" in qos:
        node = qos["pfc-watchdog"]
        state = node.get("state", "enable") if isinstance(node, Mapping) else "enable"
        enabled = to_bool(state, doc.where("interface", key, "qos", "pfc-watchdog", "state"))
        poll_ms, robustness = watchdog_timing
        watchdog = Watchdog(enabled=enabled, poll_ms=poll_ms, detection_ms=poll_ms * robustness)
        where["watchdog"] = doc.origin("interface", key, "qos", "pfc-watchdog")

    link_pause = None
    pause_assigned = qos.get("link-pause")
    if isinstance(pause_assigned, Mapping) and "profile" in pause_assigned:
        pause_node = link_pause_profiles.get(str(pause_assigned["profile"])) or {}
        rx = pause_node.get("rx", "enable") if isinstance(pause_node, Mapping) else "enable"
        tx = pause_node.get("tx", "enable") if isinstance(pause_node, Mapping) else "enable"
        pause_where = doc.where("qos", "link-pause", str(pause_assigned["profile"]))
        link_pause = to_bool(rx, pause_where) or to_bool(tx, pause_where)
        where["link_pause"] = doc.origin("interface", key, "qos", "link-pause", "profile")

    router = iface.get("router") or {}
    ar_node = router.get("adaptive-routing") if isinstance(router, Mapping) else None
    adaptive = None
    if isinstance(ar_node, Mapping):
        adaptive = ar_on and to_bool(
            ar_node.get("enable", True),
            doc.where("interface", key, "router", "adaptive-routing", "enable"),
        )
        where["adaptive_routing"] = doc.origin("interface", key, "router", "adaptive-routing")

    ingress = {}
    if pfc.xoff_threshold_bytes is not None or pfc.port_buffer_bytes is not None:
        headroom = None
        if pfc.port_buffer_bytes is not None and pfc.xoff_threshold_bytes is not None:
            headroom = pfc.port_buffer_bytes - pfc.xoff_threshold_bytes
        for priority in pfc.pfc_priorities or frozenset():
            ingress[priority] = BufferProfile(
                name="pfc", lossless=True, size_bytes=pfc.port_buffer_bytes, xoff_bytes=headroom
            )
    description = str(iface.get("description", ""))
    return PortConfig(
        name=name,
        speed_gbps=speed,
        mtu_bytes=mtu,
        cable_length_m=pfc.cable_length_m if pfc.pfc_priorities else None,
        role=role_from_description(description),
        kind="bond" if str(iface.get("type", "swp")) == "bond" else "physical",
        trust=mapping.trust,
        dscp_to_priority=mapping.dscp_to_priority
        or (DEFAULT_DSCP_MAP if mapping.trust in ("dscp", "both") else None),
        priority_to_queue=queues.priority_to_queue,
        pfc_priorities=pfc.pfc_priorities,
        pfc_rx=pfc.pfc_rx,
        pfc_tx=pfc.pfc_tx,
        link_pause=link_pause,
        ecn=ecn.ecn,
        scheduler=sched.scheduler,
        ingress_buffers=ingress,
        watchdog=watchdog,
        adaptive_routing=adaptive,
        where=where,
    )


def _pools(doc: _Doc, mode: str | None) -> tuple[BufferPool, ...]:
    pools: dict[str, BufferPool] = {}
    if mode in ROCE_LOSSLESS_MODES:
        pools["roce-lossless"] = BufferPool("roce-lossless", None, "ingress", lossless=True)
    for name, value in doc.node("qos", "traffic-pool").items():
        where = doc.where("qos", "traffic-pool", name)
        settings = _mapping(value, where)
        percent = (
            to_float(settings["memory-percent"], where) if "memory-percent" in settings else None
        )
        pools[name] = BufferPool(
            name, None, "ingress", lossless="lossless" in name, memory_percent=percent
        )
    return tuple(pools.values())
