"""SONiC ``config_db.json`` into a :class:`~fabricplan.lint.model.DeviceConfig`.

Tables read (docs/refs.md C.8): ``DEVICE_METADATA``, ``PORT``, ``PORT_QOS_MAP``, ``DSCP_TO_TC_MAP``,
``DOT1P_TO_TC_MAP``, ``TC_TO_QUEUE_MAP``, ``TC_TO_PRIORITY_GROUP_MAP``,
``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP``, ``QUEUE``, ``SCHEDULER``, ``WRED_PROFILE``, ``BUFFER_POOL``,
``BUFFER_PROFILE``, ``BUFFER_PG``, ``BUFFER_QUEUE``, ``CABLE_LENGTH``, ``PFC_WD``,
``LOSSLESS_TRAFFIC_PATTERN``, ``DEVICE_NEIGHBOR``, ``DEVICE_NEIGHBOR_METADATA``, and UEC
link-level retry's ``LLR_CONFIG`` and ``LLR_PORT`` (:func:`_link_level_retry`). Other tables
are ignored. Keys of the form ``Ethernet0,Ethernet4|3-4`` (port lists and ranges, as the SONiC
templates write them) are expanded; references may be plain names or ``[TABLE|name]``.

>>> device = parse_sonic('{"PORT": {"Ethernet0": {"speed": "400000", "mtu": "9100"}},'
...     ' "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}}', "leaf.json")
>>> port = device.ports[0]
>>> port.speed_gbps, port.mtu_bytes, sorted(port.pfc_set)
(400.0, 9100, [3])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from fabricplan.errors import InputFileError
from fabricplan.input_file import FileKind, load_json
from fabricplan.lint.model import (
    BufferPool,
    BufferProfile,
    DeviceConfig,
    EcnProfile,
    Origin,
    PortConfig,
    PortRole,
    QueueScheduler,
    SchedulerKind,
    TrustMode,
    Watchdog,
)
from fabricplan.lint.value import (
    input_error,
    int_range,
    parse_int_set,
    role_from_description,
    strip_reference,
    to_bool,
    to_dscp,
    to_float,
    to_int,
    to_priority,
)
from fabricplan.units import mbps_to_gbps

SONIC_FILE = FileKind(
    "SONiC config_db.json",
    InputFileError,
    "FP401",
    yaml_code="FP403",
    fix="fix the JSON (config_db.json is one JSON object)",
)
"""A SONiC config_db.json: syntax, NaN, overlong numbers and runaway nesting are FP403."""

SONIC_TABLES = frozenset(
    {
        "DEVICE_METADATA",
        "PORT",
        "PORT_QOS_MAP",
        "DSCP_TO_TC_MAP",
        "DOT1P_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        "QUEUE",
        "SCHEDULER",
        "WRED_PROFILE",
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "CABLE_LENGTH",
        "PFC_WD",
        "LOSSLESS_TRAFFIC_PATTERN",
        "DEVICE_NEIGHBOR",
        "DEVICE_NEIGHBOR_METADATA",
        "LLR_CONFIG",
        "LLR_PORT",
    }
)
"""Tables this parser reads; a JSON object with none of them is not a SONiC config_db."""

HOST_NEIGHBOR_TYPES = frozenset({"server", "host"})
"""``DEVICE_NEIGHBOR_METADATA.type`` values that mean a server-facing port."""

ECN_MODES_MARKING_GREEN = frozenset({"ecn_all", "ecn_green", "ecn_green_yellow", "ecn_green_red"})
"""``WRED_PROFILE.ecn`` modes that mark green (in-profile) packets, which RoCE data is."""

_CABLE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*m?\s*$")
_PORT_NUMBER_RE = re.compile(r"(\d+)")


class _Db:
    """The parsed document with typed accessors that fail with the key path."""

    def __init__(self, data: dict[str, Any], file: str) -> None:
        self.data = data
        self.file = file

    def where(self, *path: str) -> str:
        return f"{self.file}: {'|'.join(path[:2])}{'.' + '.'.join(path[2:]) if path[2:] else ''}"

    def table(self, name: str) -> dict[str, Any]:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise input_error(
                "FP405",
                self.where(name),
                "table is not a JSON object",
                None,
                "a config_db table maps keys to objects",
            )
        return value

    def entry(self, table: str, key: str) -> dict[str, Any]:
        value = self.table(table).get(key, {})
        if not isinstance(value, dict):
            raise input_error("FP405", self.where(table, key), "entry is not a JSON object")
        return value

    def origin(self, table: str, key: str, field: str | None = None) -> Origin:
        path = (table, key) if field is None else (table, key, field)
        text = f"{table}|{key}" + (f".{field}" if field else "")
        return Origin(self.file, key=text, path=path)


@dataclass(frozen=True)
class _Index:
    """Per-port views of the tables whose keys name ports, built once per document."""

    queues: dict[str, dict[int, tuple[str, dict[str, Any]]]]
    pgs: dict[str, dict[int, tuple[str, str]]]
    buffer_queues: dict[str, dict[int, tuple[str, str]]]
    cables: dict[str, tuple[float, Origin]]


V = TypeVar("V")


def _by_port(flat: dict[tuple[str, int], V]) -> dict[str, dict[int, V]]:
    nested: dict[str, dict[int, V]] = {}
    for (port, number), value in flat.items():
        nested.setdefault(port, {})[number] = value
    return nested


def parse_sonic(text: str, file: str) -> DeviceConfig:
    """Read a SONiC ``config_db.json``.

    Raises
    ------
    InputFileError
        FP403 for invalid JSON (with line and column), FP405 for a table or entry of the wrong
        shape, FP406/FP409 for a value that is not a number or out of range, FP408 when the
        document has no SONiC table.
    """
    data = load_json(text, file, SONIC_FILE)
    if not isinstance(data, dict):
        raise input_error("FP405", file, "config_db.json must be a JSON object of tables")
    if not SONIC_TABLES & data.keys():
        raise input_error(
            "FP408",
            file,
            "no SONiC config_db table found",
            None,
            "give a config_db.json with PORT, PORT_QOS_MAP, ... tables",
        )
    db = _Db(data, file)
    meta = db.entry("DEVICE_METADATA", "localhost")
    name = str(meta.get("hostname") or Path(file).stem)
    index = _Index(
        queues=_by_port(_queue_fields(db)),
        pgs=_by_port(_per_port_index(db, "BUFFER_PG")),
        buffer_queues=_by_port(_per_port_index(db, "BUFFER_QUEUE")),
        cables=_cable_lengths(db),
    )
    ports = tuple(_port(db, index, port_name) for port_name in _port_names(db))
    pattern = db.entry("LOSSLESS_TRAFFIC_PATTERN", "AZURE") or _first_entry(
        db, "LOSSLESS_TRAFFIC_PATTERN"
    )
    lossless_mtu = (
        to_int(pattern["mtu"], db.where("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "mtu"))
        if "mtu" in pattern
        else None
    )
    small_pct = (
        to_float(
            pattern["small_packet_percentage"],
            db.where("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage"),
        )
        if "small_packet_percentage" in pattern
        else None
    )
    return DeviceConfig(
        name=name,
        kind="switch",
        format="sonic",
        file=file,
        ports=ports,
        buffer_pools=_pools(db),
        lossless_pool_required="BUFFER_POOL" in data,
        asic=str(meta["platform"]) if "platform" in meta else None,
        lossless_mtu_bytes=lossless_mtu,
        small_packet_percentage=small_pct,
        where={"buffer_pools": Origin(file, key="BUFFER_POOL", path=("BUFFER_POOL",))},
    )


def _first_entry(db: _Db, table: str) -> dict[str, Any]:
    for key in db.table(table):
        return db.entry(table, key)
    return {}


def _natural_key(name: str) -> tuple[str, int]:
    match = _PORT_NUMBER_RE.search(name)
    return (name[: match.start()] if match else name, int(match.group(1)) if match else -1)


def _port_names(db: _Db) -> list[str]:
    names = set(db.table("PORT"))
    if not names:
        names = {key for key in db.table("PORT_QOS_MAP") if key != "global"}
    return sorted(names, key=_natural_key)


def _per_port_index(db: _Db, table: str) -> dict[tuple[str, int], tuple[str, str]]:
    """``(port, number) -> (table key, referenced name)`` for QUEUE, BUFFER_PG, BUFFER_QUEUE."""
    index: dict[tuple[str, int], tuple[str, str]] = {}
    for key, value in db.table(table).items():
        if not isinstance(value, dict):
            raise input_error("FP405", db.where(table, key), "entry is not a JSON object")
        ports, sep, numbers = key.rpartition("|")
        if not sep:
            raise input_error(
                "FP405",
                db.where(table, key),
                "key must be <port>|<index>",
                key,
                "write e.g. Ethernet0|3",
            )
        field = "profile" if table.startswith("BUFFER") else None
        for number in int_range(numbers, db.where(table, key)):
            for port in ports.split(","):
                if field is not None and field in value:
                    index[(port.strip(), number)] = (key, str(value[field]))
    return index


def _queue_fields(db: _Db) -> dict[tuple[str, int], tuple[str, dict[str, Any]]]:
    index: dict[tuple[str, int], tuple[str, dict[str, Any]]] = {}
    for key, value in db.table("QUEUE").items():
        if not isinstance(value, dict):
            raise input_error("FP405", db.where("QUEUE", key), "entry is not a JSON object")
        ports, sep, numbers = key.rpartition("|")
        if not sep:
            raise input_error("FP405", db.where("QUEUE", key), "key must be <port>|<queue>", key)
        for number in int_range(numbers, db.where("QUEUE", key)):
            for port in ports.split(","):
                index[(port.strip(), number)] = (key, value)
    return index


def _map(db: _Db, table: str, reference: object, where: str, is_dscp: bool) -> dict[int, int]:
    name = strip_reference(reference, where)
    if name not in db.table(table):
        raise input_error(
            "FP405",
            where,
            f"refers to a {table} entry that is not defined",
            name,
            f"define {table}|{name} or fix the name",
        )
    entries = db.entry(table, name)
    result: dict[int, int] = {}
    for key, value in entries.items():
        item_where = db.where(table, name, str(key))
        source = to_dscp(key, item_where) if is_dscp else to_priority(key, item_where)
        result[source] = to_priority(value, item_where)
    return result


def _port_map(
    db: _Db, port: str, qos: dict[str, Any], table: str, key: str
) -> dict[int, int] | None:
    """The priority map ``PORT_QOS_MAP|port`` names under ``key``; ``None`` when it names none."""
    if key not in qos:
        return None
    return _map(db, table, qos[key], db.where("PORT_QOS_MAP", port, key), is_dscp=False)


def _profile(db: _Db, name: str, where: str) -> BufferProfile:
    if name.upper() == "NULL":
        return BufferProfile(name="NULL", lossless=True, dynamic=True)
    profiles = db.table("BUFFER_PROFILE")
    if name not in profiles:
        raise input_error(
            "FP405",
            where,
            "refers to a BUFFER_PROFILE that is not defined",
            name,
            f"define BUFFER_PROFILE|{name} or fix the name",
        )
    entry = db.entry("BUFFER_PROFILE", name)

    def number(field: str) -> float | None:
        if field not in entry:
            return None
        return to_float(entry[field], db.where("BUFFER_PROFILE", name, field))

    pool = (
        strip_reference(entry["pool"], db.where("BUFFER_PROFILE", name, "pool"))
        if ("pool" in entry)
        else None
    )
    xoff = number("xoff")
    action = entry.get("packet_discard_action")
    discard: Literal["drop", "trim"] | None = None
    if action is not None:
        text = str(action).strip().lower()
        if text not in ("drop", "trim"):
            raise input_error(
                "FP405",
                db.where("BUFFER_PROFILE", name, "packet_discard_action"),
                "must be drop or trim",
                action,
                "set packet_discard_action to drop or trim",
            )
        discard = "trim" if text == "trim" else "drop"
    return BufferProfile(
        name=name,
        # Mellanox SONiC puts lossy and lossless PGs in one ingress pool: only xoff says lossless.
        lossless=xoff is not None,
        size_bytes=number("size"),
        xoff_bytes=xoff,
        xon_bytes=number("xon"),
        static_threshold_bytes=number("static_th"),
        dynamic_th=number("dynamic_th"),
        pool=pool,
        packet_discard_action=discard,
    )


def _scheduler(db: _Db, reference: object, where: str) -> QueueScheduler:
    name = strip_reference(reference, where)
    if name not in db.table("SCHEDULER"):
        raise input_error("FP405", where, "refers to a SCHEDULER that is not defined", name)
    entry = db.entry("SCHEDULER", name)
    kind_text = str(entry.get("type", "DWRR")).upper()
    kind: SchedulerKind = "strict" if kind_text == "STRICT" else "dwrr"
    weight = (
        to_float(entry["weight"], db.where("SCHEDULER", name, "weight"))
        if "weight" in entry
        else None
    )
    return QueueScheduler(kind=kind, weight=weight)


def _wred(db: _Db, reference: object, where: str) -> EcnProfile:
    name = strip_reference(reference, where)
    if name not in db.table("WRED_PROFILE"):
        raise input_error("FP405", where, "refers to a WRED_PROFILE that is not defined", name)
    entry = db.entry("WRED_PROFILE", name)

    def number(field: str) -> float | None:
        if field not in entry:
            return None
        return to_float(entry[field], db.where("WRED_PROFILE", name, field))

    ecn_mode = str(entry.get("ecn", "ecn_none")).lower()
    drop = (
        to_bool(entry["wred_green_enable"], db.where("WRED_PROFILE", name, "wred_green_enable"))
        if "wred_green_enable" in entry
        else False
    )
    return EcnProfile(
        ecn_enabled=ecn_mode in ECN_MODES_MARKING_GREEN,
        min_threshold_bytes=number("green_min_threshold"),
        max_threshold_bytes=number("green_max_threshold"),
        mark_probability_pct=number("green_drop_probability"),
        drop_enabled=drop,
        name=name,
    )


def _role(db: _Db, port: str) -> PortRole | None:
    neighbor = db.entry("DEVICE_NEIGHBOR", port)
    if "name" in neighbor:
        meta = db.entry("DEVICE_NEIGHBOR_METADATA", str(neighbor["name"]))
        if "type" in meta:
            return "host" if str(meta["type"]).lower() in HOST_NEIGHBOR_TYPES else "fabric"
    return role_from_description(str(db.entry("PORT", port).get("description", "")))


def _cable_lengths(db: _Db) -> dict[str, tuple[float, Origin]]:
    lengths: dict[str, tuple[float, Origin]] = {}
    for group in db.table("CABLE_LENGTH"):
        entry = db.entry("CABLE_LENGTH", group)
        for port, value in entry.items():
            where = db.where("CABLE_LENGTH", group, port)
            match = _CABLE_RE.match(str(value))
            if match is None:
                raise input_error("FP406", where, "cable length must be like 5m", value)
            lengths[port] = (float(match.group(1)), db.origin("CABLE_LENGTH", group, port))
    return lengths


def _pools(db: _Db) -> tuple[BufferPool, ...]:
    pools = []
    for name in db.table("BUFFER_POOL"):
        entry = db.entry("BUFFER_POOL", name)
        size = (
            to_float(entry["size"], db.where("BUFFER_POOL", name, "size"))
            if ("size" in entry)
            else None
        )
        xoff = (
            to_float(entry["xoff"], db.where("BUFFER_POOL", name, "xoff"))
            if ("xoff" in entry)
            else None
        )
        direction = str(entry.get("type", "")).lower()
        pools.append(
            BufferPool(
                name=name,
                size_bytes=size,
                direction="egress" if direction == "egress" else "ingress",
                lossless="lossless" in name.lower(),
                shared_headroom_bytes=xoff,
            )
        )
    return tuple(pools)


def _port(db: _Db, index: _Index, name: str) -> PortConfig:
    where: dict[str, Origin] = {}
    entry = db.entry("PORT", name)
    speed = None
    if "speed" in entry:
        speed = mbps_to_gbps(to_float(entry["speed"], db.where("PORT", name, "speed")))
        where["speed_gbps"] = db.origin("PORT", name, "speed")
    mtu = None
    if "mtu" in entry:
        mtu = to_int(entry["mtu"], db.where("PORT", name, "mtu"))
        where["mtu_bytes"] = db.origin("PORT", name, "mtu")
    lanes = len(str(entry["lanes"]).split(",")) if "lanes" in entry else None
    admin_up = str(entry.get("admin_status", "up")).lower() == "up"

    qos = db.entry("PORT_QOS_MAP", name)
    global_qos = db.entry("PORT_QOS_MAP", "global")
    dscp_to_priority = None
    trust: TrustMode | None = None
    dscp_ref = qos.get("dscp_to_tc_map", global_qos.get("dscp_to_tc_map"))
    if dscp_ref is not None:
        key_owner = name if "dscp_to_tc_map" in qos else "global"
        map_where = db.where("PORT_QOS_MAP", key_owner, "dscp_to_tc_map")
        dscp_to_priority = _map(db, "DSCP_TO_TC_MAP", dscp_ref, map_where, is_dscp=True)
        where["dscp_to_priority"] = db.origin("PORT_QOS_MAP", key_owner, "dscp_to_tc_map")
        trust = "dscp"
    if "dot1p_to_tc_map" in qos:
        trust = "both" if trust == "dscp" else "pcp"
    if trust is not None:
        where["trust"] = where.get("dscp_to_priority") or db.origin("PORT_QOS_MAP", name)
    tc_to_queue = _port_map(db, name, qos, "TC_TO_QUEUE_MAP", "tc_to_queue_map")
    tc_to_pg = _port_map(db, name, qos, "TC_TO_PRIORITY_GROUP_MAP", "tc_to_pg_map") or {}
    pfc_to_pg = (
        _port_map(db, name, qos, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "pfc_to_pg_map") or {}
    )
    pfc = None
    if "pfc_enable" in qos:
        pfc = parse_int_set(qos["pfc_enable"], db.where("PORT_QOS_MAP", name, "pfc_enable"))
        where["pfc_priorities"] = db.origin("PORT_QOS_MAP", name, "pfc_enable")

    ecn: dict[int, EcnProfile] = {}
    scheduler: dict[int, QueueScheduler] = {}
    for queue, (key, fields) in index.queues.get(name, {}).items():
        if "wred_profile" in fields:
            ecn[queue] = _wred(db, fields["wred_profile"], db.where("QUEUE", key, "wred_profile"))
            where[f"ecn.{queue}"] = db.origin("QUEUE", key, "wred_profile")
        if "scheduler" in fields:
            scheduler[queue] = _scheduler(
                db, fields["scheduler"], db.where("QUEUE", key, "scheduler")
            )
            where[f"scheduler.{queue}"] = db.origin("QUEUE", key, "scheduler")

    ingress: dict[int, BufferProfile] = {}
    pg_index = index.pgs.get(name, {})
    for priority in range(8):
        pg = pfc_to_pg.get(priority, tc_to_pg.get(priority, priority))
        if pg in pg_index:
            key, profile_name = pg_index[pg]
            ingress[priority] = _profile(
                db,
                strip_reference(profile_name, db.where("BUFFER_PG", key, "profile")),
                db.where("BUFFER_PG", key, "profile"),
            )
            where[f"ingress_buffers.{priority}"] = db.origin("BUFFER_PG", key, "profile")
    egress_lossless = None
    trimming = None
    queue_index = index.buffer_queues.get(name, {})
    if queue_index:
        lossless_queues = set()
        trimming_queues = set()
        for queue, (key, profile_name) in queue_index.items():
            profile_where = db.where("BUFFER_QUEUE", key, "profile")
            profile = _profile(db, strip_reference(profile_name, profile_where), profile_where)
            if "lossless" in profile.name or "lossless" in (profile.pool or ""):
                lossless_queues.add(queue)
            if profile.packet_discard_action == "trim":
                trimming_queues.add(queue)
            where[f"egress_queue.{queue}"] = db.origin("BUFFER_QUEUE", key, "profile")
        egress_lossless = frozenset(lossless_queues)
        trimming = frozenset(trimming_queues)
        where["trimming_queues"] = db.origin("BUFFER_QUEUE", next(iter(queue_index.values()))[0])

    cable = index.cables.get(name)
    if cable is not None:
        where["cable_length_m"] = cable[1]
    watchdog = None
    wd_entry = db.entry("PFC_WD", name)
    if wd_entry:
        poll_entry = db.entry("PFC_WD", "GLOBAL")

        def ms(entry: dict[str, Any], key: str, field: str) -> float | None:
            if field not in entry:
                return None
            return to_float(entry[field], db.where("PFC_WD", key, field))

        watchdog = Watchdog(
            enabled=True,
            detection_ms=ms(wd_entry, name, "detection_time"),
            restoration_ms=ms(wd_entry, name, "restoration_time"),
            poll_ms=ms(poll_entry, "GLOBAL", "POLL_INTERVAL"),
            action=str(wd_entry["action"]) if "action" in wd_entry else None,
        )
        where["watchdog"] = db.origin("PFC_WD", name)

    llr = _link_level_retry(db, name)
    if llr is not None:
        where["link_level_retry"] = db.origin("LLR_PORT", name)

    return PortConfig(
        name=name,
        speed_gbps=speed,
        mtu_bytes=mtu,
        lanes=lanes,
        cable_length_m=cable[0] if cable else None,
        role=_role(db, name),
        kind="physical",
        admin_up=admin_up,
        trust=trust,
        dscp_to_priority=dscp_to_priority,
        priority_to_queue=tc_to_queue,
        pfc_priorities=pfc,
        ecn=ecn,
        scheduler=scheduler,
        ingress_buffers=ingress,
        egress_lossless_queues=egress_lossless,
        trimming_queues=trimming,
        watchdog=watchdog,
        link_level_retry=llr,
        where=where,
    )


LLR_STATIC_MODE = "static"
"""``LLR_CONFIG|GLOBAL.mode`` under which ``LLR_PORT`` decides each port (the only mode of
the design's phase I; ``dynamic`` negotiates over LLDP)."""


def _link_level_retry(db: _Db, name: str) -> bool | None:
    """UEC link-level retry on port ``name``, from the SONiC LLR design's CONFIG_DB tables
    (sonic-net/SONiC doc/llr/Link_Layer_Retry_Design.md, rev 0.1, 2025-11-06, §2.3.1):
    ``LLR_CONFIG|GLOBAL.mode`` (``static`` / ``dynamic``) and ``LLR_PORT|<port>`` with
    ``llr_local`` (receive) and ``llr_remote`` (transmit), ``enabled`` / ``disabled``, both
    ``disabled`` by default.

    ``True`` when both directions are enabled in static mode (a mode left out counts as
    static); ``False`` when the document has LLR tables and either direction of this port is
    off, by default or by setting; ``None`` when it has none (an older image says nothing) or
    the mode is ``dynamic`` (LLDP decides, not the file). Credit-based flow control has no
    SONiC CONFIG_DB schema yet (only the SAI proposal), so ``credit_flow_control`` stays
    unread.

    >>> doc = ('{"PORT": {"Ethernet0": {}, "Ethernet4": {}}, "LLR_PORT": {"Ethernet0":'
    ...     ' {"llr_local": "enabled", "llr_remote": "enabled"}}}')
    >>> [p.link_level_retry for p in parse_sonic(doc, "leaf.json").ports]
    [True, False]
    """
    if "LLR_PORT" not in db.data and "LLR_CONFIG" not in db.data:
        return None
    mode = db.entry("LLR_CONFIG", "GLOBAL").get("mode", LLR_STATIC_MODE)
    if str(mode).strip().lower() != LLR_STATIC_MODE:
        return None
    entry = db.entry("LLR_PORT", name)
    directions = [
        to_bool(entry.get(field, "disabled"), db.where("LLR_PORT", name, field))
        for field in ("llr_local", "llr_remote")
    ]
    return all(directions)
