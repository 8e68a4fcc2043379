"""Readers of what a built fabric reports about its cables: LLDP neighbour tables and cut sheets.

Every reader returns :class:`~fabricplan.export.cutsheet.SheetLink` records (both ends of a
cable) and the devices that reported, so that ``verify-cabling`` compares only the part of the
plan that was observed.

- SONiC ``show lldp table`` (columns ``LocalPort RemoteDevice RemotePortID Capability
  RemotePortDescr``): the file names the local switch (``leaf-001.txt``, up to the first dot),
  since the table does not;
- NVUE JSON (``nv show interface lldp -o json`` style: ``{<interface>: {"lldp": {"neighbor":
  {<name>: {...}}}}}``) and lldpd's JSON (``lldpcli show neighbors -f json``: ``{"lldp":
  {"interface": {<interface>: {"chassis": {<name>: ...}, "port": {"id": {"value": ...}}}}}}``);
  the neighbour's port is its ``port.name`` / ``port.id`` / ``port.description``, in that order;
- EOS JSON (``show lldp neighbors | json``: ``{"lldpNeighbors": [{"port": ..., "neighborDevice":
  ..., "neighborPort": ...}]}``), for Arista boxes (a DDC's leaves and fabric elements);
- CSV: a cut sheet (``a_device,a_port,z_device,z_port,...``) or a neighbour list
  ``local_device,local_port,remote_device,remote_port``;
- ibnetdiscover output (:func:`fabricplan.export.infiniband.read_ibnetdiscover`).

>>> table = '''LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr
... -----------  --------------  --------------  ------------  -----------------
... Ethernet0    spine-001       Ethernet8       BR            leaf-001 uplink
... --------------------------------------------------
... Total entries displayed:  1'''
>>> [(l.a_device, l.a_port, l.z_device, l.z_port) for l in read_sonic_lldp(table, "leaf-001.txt")]
[('leaf-001', 'Ethernet0', 'spine-001', 'Ethernet8')]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fabricplan.errors import InputFileError
from fabricplan.export.cutsheet import CUTSHEET_COLUMNS, SheetLink, read_cutsheet
from fabricplan.export.infiniband import read_ibnetdiscover
from fabricplan.input_file import FileKind
from fabricplan.input_file import read_text as read_input_text

ObservedFormat = Literal["cutsheet", "neighbours-csv", "sonic-lldp", "lldp-json", "ibnetdiscover"]

NEIGHBOUR_CSV_COLUMNS = ("local_device", "local_port", "remote_device", "remote_port")

MAX_OBSERVED_BYTES = 256 * 1024 * 1024
"""Largest observation file read (an ibnetdiscover of 100k ports is tens of MB)."""


@dataclass(frozen=True, slots=True)
class Observation:
    """The cables one file reports and the devices that reported them."""

    path: str
    format: ObservedFormat
    links: tuple[SheetLink, ...]
    reporters: frozenset[str]
    """Devices whose every port this file covers (their unreported planned cables are missing)."""


def _local_name(path: str) -> str:
    return Path(path).name.split(".", 1)[0]


def read_sonic_lldp(text: str, where: str) -> list[SheetLink]:
    """SONiC ``show lldp table``; the local device is the file name up to its first dot."""
    device = _local_name(where)
    links: list[SheetLink] = []
    started = False
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words:
            continue
        if words[0] == "LocalPort":
            started = True
            continue
        if not started or set(line.strip()) <= {"-", " "} or words[0] == "Total":
            continue
        if len(words) < 3:
            raise InputFileError(
                "FP1214",
                f"{where}:{number}",
                "an LLDP row lacks the remote device or port",
                line.strip()[:60],
                "pass the whole output of `show lldp table`",
            )
        links.append(SheetLink(device, words[0], words[1], words[2], line=number))
    if not started:
        raise InputFileError(
            "FP1214",
            where,
            "no `show lldp table` header (LocalPort RemoteDevice RemotePortID ...)",
            None,
            "pass the output of SONiC `show lldp table`",
        )
    return links


def _first_text(value: Any, *keys: str) -> str | None:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return None
    for key in keys:
        found = value.get(key)
        if isinstance(found, str) and found:
            return found
        if isinstance(found, dict):
            inner = _first_text(found, "value", "name", *keys)
            if inner:
                return inner
    return None


def _neighbour_port(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    port = entry.get("port")
    if isinstance(port, list) and port:
        port = port[0]
    return _first_text(port, "name", "id", "description", "descr")


def read_lldp_json(text: str, where: str) -> list[SheetLink]:
    """NVUE or lldpd LLDP neighbours as JSON (see the module docstring)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            "FP1215",
            f"{where}:{exc.lineno}",
            "not valid JSON",
            exc.msg,
            "pass `nv show interface lldp -o json`, `lldpcli show neighbors -f json` or EOS"
            " `show lldp neighbors | json`",
        ) from None
    device = _local_name(where)
    if isinstance(data, dict) and isinstance(data.get("lldpNeighbors"), list):
        return _eos_lldp(data["lldpNeighbors"], device)
    interfaces: Any = data
    if isinstance(data, dict) and isinstance(data.get("lldp"), dict):
        interfaces = data["lldp"].get("interface", {})
    if isinstance(interfaces, list):  # lldpd may give a list of one-key objects
        merged: dict[str, Any] = {}
        for item in interfaces:
            if isinstance(item, dict):
                merged.update(item)
        interfaces = merged
    if not isinstance(interfaces, dict):
        raise InputFileError(
            "FP1215", where, "no interfaces in the LLDP JSON", None, "pass the neighbour JSON"
        )
    links: list[SheetLink] = []
    for interface, body in interfaces.items():
        if not isinstance(body, dict):
            continue
        lldp = body.get("lldp", body)
        neighbours = lldp.get("neighbor") if isinstance(lldp, dict) else None
        if isinstance(neighbours, dict):  # NVUE: neighbor -> {name: {...}}
            for name, entry in neighbours.items():
                system = _first_text(
                    entry.get("chassis") if isinstance(entry, dict) else None, "system-name"
                )
                port = _neighbour_port(entry)
                if port:
                    links.append(SheetLink(device, interface, system or name, port))
            continue
        chassis = body.get("chassis")
        port = _neighbour_port(body)
        if isinstance(chassis, dict) and chassis and port:
            name = next(iter(chassis))
            links.append(SheetLink(device, interface, name, port))
    return links


def _eos_lldp(rows: list[Any], device: str) -> list[SheetLink]:
    """EOS ``show lldp neighbors | json``: ``lldpNeighbors`` rows of ``port``,
    ``neighborDevice``, ``neighborPort``."""
    links = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        port, peer, peer_port = (row.get(k) for k in ("port", "neighborDevice", "neighborPort"))
        if isinstance(port, str) and isinstance(peer, str) and isinstance(peer_port, str):
            links.append(SheetLink(device, port, peer, peer_port))
    return links


def read_neighbour_csv(text: str, where: str) -> list[SheetLink]:
    """``local_device,local_port,remote_device,remote_port`` rows (any extra columns ignored)."""
    rows = [
        line.split(",") for line in text.splitlines() if line.strip() and not line.startswith("#")
    ]
    links = []
    for number, row in enumerate(rows[1:], start=2):
        cells = [cell.strip() for cell in row]
        if len(cells) < 4 or not all(cells[:4]):
            raise InputFileError(
                "FP1211",
                f"{where}:{number}",
                "a row lacks a device or port",
                ",".join(cells[:4]),
                "give local_device,local_port,remote_device,remote_port on every row",
            )
        links.append(SheetLink(cells[0], cells[1], cells[2], cells[3], line=number))
    return links


def detect_format(text: str, where: str) -> ObservedFormat:
    """Which reader a file needs, from its content.

    Raises
    ------
    InputFileError
        FP1216 when the content matches no known format.
    """
    head = text.lstrip()[:4096]
    first = head.splitlines()[0] if head else ""
    if first.replace(" ", "").startswith(",".join(CUTSHEET_COLUMNS[:4])):
        return "cutsheet"
    if first.replace(" ", "").startswith(",".join(NEIGHBOUR_CSV_COLUMNS)):
        return "neighbours-csv"
    if head.startswith(("{", "[")):
        return "lldp-json"
    if "LocalPort" in head and "RemoteDevice" in head:
        return "sonic-lldp"
    if "Switch\t" in head or "\nCa\t" in head or "switchguid=" in head or "caguid=" in head:
        return "ibnetdiscover"
    raise InputFileError(
        "FP1216",
        where,
        "not a known cabling observation (cut sheet CSV, neighbour CSV, SONiC `show lldp"
        " table`, NVUE, lldpd or EOS LLDP JSON or ibnetdiscover output)",
        first[:40],
        "pass one of those",
    )


OBSERVED_FILE = FileKind(
    "observed cabling file",
    InputFileError,
    "FP1217",
    max_bytes=MAX_OBSERVED_BYTES,
    fix="check the path",
)
"""A cut sheet, neighbour table or layout: a regular UTF-8 file of at most 256 MiB."""


def read_text(path: Path) -> str:
    """A text file, or one clear error (FP1217) when it cannot be read (see input_file)."""
    return read_input_text(path, OBSERVED_FILE)


def read_observation(text: str, where: str) -> Observation:
    """Read one observation file (format detected from its content)."""
    fmt = detect_format(text, where)
    if fmt == "cutsheet":
        links = read_cutsheet(text, where)
    elif fmt == "neighbours-csv":
        links = read_neighbour_csv(text, where)
    elif fmt == "sonic-lldp":
        links = read_sonic_lldp(text, where)
    elif fmt == "lldp-json":
        links = read_lldp_json(text, where)
    else:
        links = read_ibnetdiscover(text, where)
    if fmt in ("sonic-lldp", "lldp-json"):
        reporters = frozenset({_local_name(where)})
    elif fmt == "neighbours-csv":
        reporters = frozenset(link.a_device for link in links)
    else:
        reporters = frozenset(device for link in links for device in (link.a_device, link.z_device))
    return Observation(where, fmt, tuple(links), reporters)
