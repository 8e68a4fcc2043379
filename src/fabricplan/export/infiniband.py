"""InfiniBand files: the expected topology in ibnetdiscover's format, its reader, and the UFM
Cable Validation Tool point-to-point (P2P) sheet.

ibnetdiscover (infiniband-diags) prints one block per node: ``vendid``/``devid``/GUID lines, a
header ``Switch <ports> "S-<guid>"  # "<description>" ...`` or ``Ca <ports> "H-<guid>" # "..."``,
then one line per connected port ``[<port>](<port guid>)  "<peer id>"[<peer port>]  # ...``.
The expected file written here follows that layout with GUIDs made up from the device's place in
the plan (NVIDIA's OUI 00:02:c9, so they cannot collide with one another, only with real ones);
compare a real fabric with it by node descriptions and port numbers (``verify-cabling``), never
by GUID.

Host ports map to HCAs as the CVT's default HCA mapping does: NIC ``j`` (plan port ``nicj``,
CVT ``HCA/Port`` ``j + 1``) is RDMA device ``mlx5_j`` port 1.

>>> text = "Switch\\t2 \\"S-1\\"\\t\\t# \\"leaf-001\\" base port 0 lid 1 lmc 0\\n"
>>> text += '[1]\\t"H-2"[1](2)\\t\\t# "node-0001 mlx5_0" lid 2 4xNDR\\n'
>>> text += 'Ca\\t1 "H-2"\\t\\t# "node-0001 mlx5_0"\\n'
>>> text += '[1](2)\\t"S-1"[1]\\t\\t# lid 2 "leaf-001" lid 1 4xNDR\\n'
>>> [(l.a_device, l.a_port, l.z_device, l.z_port_number) for l in read_ibnetdiscover(text, "x")]
[('node-0001', 'nic0', 'leaf-001', 1)]
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabricplan.catalog.loader import load_catalog
from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan
from fabricplan.export.cutsheet import SheetLink, rows_xlsx
from fabricplan.export.layout import NOWHERE, Layout, placed_layout
from fabricplan.model.hardware import SwitchSpec

MELLANOX_VENDOR_ID = 0x02C9
"""IEEE OUI 00:02:c9 (Mellanox Technologies, now NVIDIA), ibnetdiscover's ``vendid=0x2c9``."""

DEVICE_ID_BY_MODEL: dict[str, int] = {
    "qm8700": 0xCF08,  # Quantum (MT53000)
    "qm9700": 0xD2F0,  # Quantum-2 (MT54000)
    "q3400": 0xD2F2,  # Quantum-3 / X800 (MT54002)
    "cx6": 0x101B,  # ConnectX-6 (MT4123)
    "cx7": 0x1021,  # ConnectX-7 (MT4129)
    "cx8": 0x1023,  # ConnectX-8 (MT4131)
}
"""PCI device ids (``devid``) of the catalog's IB parts: the MT number of the MST device name in
hex (pci.ids, vendor 15b3). A part not listed prints ``devid=0x0``."""

IB_LANE_RATE_NAMES: dict[float, str] = {25: "EDR", 50: "HDR", 100: "NDR", 200: "XDR"}
"""InfiniBand rate names per lane speed in Gb/s (IBTA specification, volume 2)."""

HCA_TEMPLATE = "mlx5_{index}"
"""RDMA device of NIC ``index`` (the CVT default HCA mapping: HCA/Port j+1 -> mlx5_j P1)."""

GUID_ROLE_CODE = {"node": 1, "management": 2, "leaf": 3, "spine": 4, "core": 5}

_HEADER = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s+"([^"]+)"\[(\d+)\]')
_HCA = re.compile(r"^mlx5_(\d+)$")


def _guid(role: str, index: int) -> str:
    return f"{(MELLANOX_VENDOR_ID << 40) | (GUID_ROLE_CODE[role] << 32) | index:016x}"


def _rate(speed_gbps: float, lane_gbps: float) -> str:
    lanes = max(round(speed_gbps / lane_gbps), 1)
    return f"{lanes}x{IB_LANE_RATE_NAMES.get(lane_gbps, 'NDR')}"


IB_PORT_LANES = 4
"""Lanes of a full-width InfiniBand port (IBTA "4x"), for a switch the catalog does not know."""


def _lane_gbps(plan: CablingPlan) -> float:
    """Speed of one SerDes lane of the box: the catalog's ``lane_gbps`` of the switch (the one
    source of that fact, as the cable chooser reads it); a generic switch, or one stating no
    lanes, is taken as 4x ports (``IB_PORT_LANES``) of its port speed."""
    switch_id = plan.design.switch_id
    spec = None
    if switch_id in load_catalog().ids("switch"):
        spec = load_catalog().get_typed(switch_id, SwitchSpec)
    if spec is None or spec.lane_gbps is None:
        return plan.design.port_speed_gbps / IB_PORT_LANES
    return spec.lane_gbps.value


def hca_name(port: str) -> str:
    """The RDMA device of a plan host port: ``nic3`` -> ``mlx5_3``.

    >>> hca_name("nic3")
    'mlx5_3'
    """
    return HCA_TEMPLATE.format(index=int(port.removeprefix("nic")))


def ibnetdiscover_text(plan: CablingPlan, nic_model: str) -> str:
    """The expected topology in ibnetdiscover's output format."""
    numbers = {name: i + 1 for i, name in enumerate(plan.switch_ports)}
    lane = _lane_gbps(plan)
    ids: dict[str, str] = {}
    role_index: dict[str, int] = {}
    for device in plan.devices:
        index = role_index.get(device.role, 0)
        role_index[device.role] = index + 1
        ids[device.name] = _guid(device.role, index)
    # Hosts have one GUID per HCA (numbered below); their system image GUID is the node's.
    hca_guid: dict[tuple[str, str], str] = {}
    switch_links: dict[str, list[tuple[int, str, str, int, float]]] = {}
    for cable in plan.cables:
        z_number = numbers[cable.z_port]
        if cable.link_group in ("node_leaf", "management"):
            role = "node" if cable.link_group == "node_leaf" else "management"
            guid = _guid(role, len(hca_guid))
            hca_guid[(cable.a_device, cable.a_port)] = guid
            hca = f"{cable.a_device} {hca_name(cable.a_port)}"
            switch_links.setdefault(cable.z_device, []).append(
                (z_number, f"H-{guid}", hca, 1, cable.speed_gbps)
            )
        else:
            a_number = numbers[cable.a_port]
            switch_links.setdefault(cable.a_device, []).append(
                (a_number, f"S-{ids[cable.z_device]}", cable.z_device, z_number, cable.speed_gbps)
            )
            switch_links.setdefault(cable.z_device, []).append(
                (z_number, f"S-{ids[cable.a_device]}", cable.a_device, a_number, cable.speed_gbps)
            )
    switch_id = DEVICE_ID_BY_MODEL.get(plan.design.switch_id, 0)
    nic_id = DEVICE_ID_BY_MODEL.get(nic_model, 0)
    lines = [
        "#",
        "# Topology file: expected topology written by fabricplan export --format ibnetdiscover",
        "#",
        "",
    ]
    radix = len(plan.switch_ports)
    for device in plan.devices:
        if device.role not in ("leaf", "spine", "core"):
            continue
        guid = ids[device.name]
        lines += [
            f"vendid=0x{MELLANOX_VENDOR_ID:x}",
            f"devid=0x{switch_id:x}",
            f"sysimgguid=0x{guid}",
            f"switchguid=0x{guid}({guid})",
            f'Switch\t{radix} "S-{guid}"\t\t# "{device.name}" enhanced port 0 lmc 0',
        ]
        for port, peer, peer_name, peer_port, speed in sorted(switch_links.get(device.name, [])):
            lines.append(f'[{port}]\t"{peer}"[{peer_port}]\t\t# "{peer_name}" {_rate(speed, lane)}')
        lines.append("")
    for cable in plan.cables:
        if cable.link_group not in ("node_leaf", "management"):
            continue
        hca = hca_name(cable.a_port)
        node_guid = hca_guid[(cable.a_device, cable.a_port)]
        lines += [
            f"vendid=0x{MELLANOX_VENDOR_ID:x}",
            f"devid=0x{nic_id:x}",
            f"sysimgguid=0x{ids[cable.a_device]}",
            f"caguid=0x{node_guid}",
            f'Ca\t1 "H-{node_guid}"\t\t# "{cable.a_device} {hca}"',
            f'[1]({node_guid})\t"S-{ids[cable.z_device]}"[{numbers[cable.z_port]}]\t\t#'
            f' "{cable.z_device}" {_rate(cable.speed_gbps, lane)}',
            "",
        ]
    return "\n".join(lines)


def read_ibnetdiscover(text: str, where: str) -> list[SheetLink]:
    """The links of an ibnetdiscover output, by node description and port number.

    A CA's description ``"<host> mlx5_<j>"`` gives device ``<host>`` and port ``nic<j>``; a
    switch's description is its device name and its ports are numbers (``z_port_number``).
    Each link is returned once although the file lists it from both ends.

    Raises
    ------
    InputFileError
        FP1212 when no node header is found, FP1213 when a port line comes before any node.
    """
    names: dict[str, tuple[str, str]] = {}
    kinds: dict[str, str] = {}
    raw: list[tuple[str, int, str, int, int]] = []
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        header = _HEADER.match(stripped)
        if header:
            kind, _, node_id, description = header.groups()
            current = node_id
            kinds[node_id] = kind
            names[node_id] = _device_port(description or node_id, kind)
            continue
        found = _PORT.match(stripped)
        if found:
            if current is None:
                raise InputFileError(
                    "FP1213",
                    f"{where}:{number}",
                    "a port line comes before any Switch or Ca line",
                    stripped[:40],
                    "pass the whole ibnetdiscover output",
                )
            raw.append((current, int(found.group(1)), found.group(2), int(found.group(3)), number))
    if not kinds:
        raise InputFileError(
            "FP1212",
            where,
            "no ibnetdiscover node (Switch or Ca line) found",
            None,
            "pass the output of `ibnetdiscover` (or `export --format ibnetdiscover`)",
        )
    seen: set[frozenset[tuple[str, int]]] = set()
    links: list[SheetLink] = []
    for node_id, port, peer_id, peer_port, number in raw:
        key = frozenset({(node_id, port), (peer_id, peer_port)})
        if key in seen:
            continue
        seen.add(key)
        ends = [_end(names, kinds, node_id, port), _end(names, kinds, peer_id, peer_port)]
        # Hosts (CAs) first, as a cut sheet lists them.
        ends.sort(key=lambda end: end[3] != "Ca")
        (a_dev, a_port, a_num, _), (z_dev, z_port, z_num, _) = ends
        links.append(SheetLink(a_dev, a_port, z_dev, z_port, "", a_num, z_num, number))
    return links


def _device_port(description: str, kind: str) -> tuple[str, str]:
    parts = description.split()
    device = parts[0] if parts else description
    if kind == "Ca" and len(parts) > 1:
        hca = _HCA.match(parts[1])
        return device, f"nic{hca.group(1)}" if hca else parts[1]
    return device, ""


def _end(
    names: dict[str, tuple[str, str]], kinds: dict[str, str], node_id: str, port: int
) -> tuple[str, str, int, str]:
    device, host_port = names.get(node_id, (node_id, ""))
    kind = kinds.get(node_id, "Ca" if node_id.startswith("H-") else "Switch")
    if kind == "Ca":
        return device, host_port or "nic0", 1, kind
    return device, "", port, kind


def cvt_rows(
    plan: CablingPlan, infiniband: bool, layout: Layout | None = None
) -> Iterator[list[str]]:
    """The CVT P2P sheet: A end, Z end with type and port (IB host ports as HCA/Port numbers),
    racks from the design's layout, U where a ``layout`` file gives it."""
    place = placed_layout(plan, layout)
    yield [
        "A-Rack",
        "A-U",
        "A-Node Name",
        "A-Type",
        "A-Port",
        "Z-Rack",
        "Z-RU",
        "Z-Node Name",
        "Z-Type",
        "Z-Port",
    ]
    for cable in plan.cables:
        host = cable.link_group in ("node_leaf", "management")
        a_port = cable.a_port
        if host and infiniband:
            a_port = str(int(cable.a_port.removeprefix("nic")) + 1)
        a_at, z_at = place.get(cable.a_device, NOWHERE), place.get(cable.z_device, NOWHERE)
        yield [
            a_at.rack,
            a_at.u,
            cable.a_device,
            "Host" if host else "Switch",
            a_port,
            z_at.rack,
            z_at.u,
            cable.z_device,
            "Switch",
            cable.z_port,
        ]


def hca_mapping_rows(nics_per_node: int) -> Iterator[list[str]]:
    """HCA/Port number -> RDMA device and port, as the CVT's default mapping."""
    yield ["HCA/Port", "HCA", "plan port"]
    for index in range(nics_per_node):
        yield [str(index + 1), f"{HCA_TEMPLATE.format(index=index)} P1", f"nic{index}"]


def cvt_xlsx(
    plan: CablingPlan, infiniband: bool, nics_per_node: int, layout: Layout | None = None
) -> bytes:
    """The CVT P2P workbook: sheet ``P2P`` and sheet ``HCA mapping``."""
    return rows_xlsx(
        {"P2P": cvt_rows(plan, infiniband, layout), "HCA mapping": hca_mapping_rows(nics_per_node)}
    )
