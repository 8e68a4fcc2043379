"""Inventory files: the priced bill of materials and NetBox's bulk-import CSVs.

- BOM: one row per bill-of-materials line with the vendor part number where the catalog has one
  (``catalog/data/front_panels.yaml`` for switches), quantity, unit and total price and the
  price's basis and note (every default price is an estimate that says on what it rests);
- NetBox: ``devices.csv`` (columns of NetBox's device import form: ``name, role, manufacturer,
  device_type, site, status, description``), ``interfaces.csv`` (``device, name, type, speed,
  description``; speed in kb/s as NetBox stores it) and ``cables.csv`` (``side_a_device,
  side_a_type, side_a_name, side_b_device, side_b_type, side_b_name, type, status, label, color,
  length, length_unit, description``) -- netbox-community/netbox ``dcim/forms/bulk_import.py``
  (DeviceImportForm, InterfaceImportForm, CableImportForm, NetBox 4.x). Import them in that
  order; device types and roles must exist first. Switch device types are named as the NetBox
  device-type library names them where the catalog records it (``Nvidia``/``QM9700``); the
  library's interface names (``P0.0``...) are not the switch OS's, so interfaces are imported
  with the OS's names.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from fabricplan.catalog.front_panel import front_panel
from fabricplan.export.cabling import CablingPlan
from fabricplan.export.cutsheet import cable_label
from fabricplan.model.results import CostBreakdown
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import gbps_to_kbps

BOM_COLUMNS = (
    "item",
    "kind",
    "role",
    "part_number",
    "quantity",
    "unit_price_usd",
    "total_usd",
    "price_basis",
    "price_note",
)

NETBOX_DEVICE_COLUMNS = (
    "name",
    "role",
    "manufacturer",
    "device_type",
    "site",
    "status",
    "description",
)
NETBOX_INTERFACE_COLUMNS = ("device", "name", "type", "speed", "description")
NETBOX_CABLE_COLUMNS = (
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "color",
    "length",
    "length_unit",
    "description",
)
NETBOX_TERMINATION = "dcim.interface"
NETBOX_STATUS = "planned"
"""Status given to devices and cables: they are a plan until built (NetBox status choice)."""

NETBOX_CABLE_TYPE_BY_KIND = {"dac": "dac-passive", "acc": "dac-active", "aoc": "aoc"}
"""NetBox ``CableTypeChoices`` per catalog cable kind; optics are ``mmf`` (SR, multimode) or
``smf`` (the single-mode DR/FR parts)."""

NETBOX_IB_INTERFACE_TYPES = {
    100: "infiniband-edr",
    200: "infiniband-hdr",
    400: "infiniband-ndr",
    800: "infiniband-xdr",
}
NETBOX_ETHERNET_INTERFACE_TYPES = {
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}
"""NetBox ``InterfaceTypeChoices`` by speed (InfiniBand, Ethernet)."""

MANUFACTURER_BY_FAMILY = {"infiniband": "NVIDIA", "ethernet": ""}


def _csv(rows: Iterator[list[str]] | list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def bom_rows(valid: ValidScenario, plan: CablingPlan, cost: CostBreakdown) -> Iterator[list[str]]:
    """The BOM table; prices come from the cost model's lines (same order as the design's BOM)."""
    yield list(BOM_COLUMNS)
    for line, priced in zip(plan.design.bom, cost.lines, strict=True):
        entry = valid.prices.get(line.item)
        panel = front_panel(line.item) if line.kind == "switch" else None
        yield [
            line.item,
            line.kind,
            line.role,
            panel.part_number if panel is not None else "",
            str(line.quantity),
            f"{priced.unit_price_usd:.2f}",
            f"{priced.total_usd:.2f}",
            priced.basis,
            entry.note if entry is not None else "no price: counts 0 in capex",
        ]
    yield ["total", "", "", "", "", "", f"{cost.capex_usd:.2f}", "", "capex of the lines above"]


def bom_csv(valid: ValidScenario, plan: CablingPlan, cost: CostBreakdown) -> str:
    return _csv(bom_rows(valid, plan, cost))


def _interface_type(infiniband: bool, speed_gbps: float) -> str:
    table = NETBOX_IB_INTERFACE_TYPES if infiniband else NETBOX_ETHERNET_INTERFACE_TYPES
    return table.get(round(speed_gbps), "other")


def _cable_type(cable_id: str, kind: str | None) -> str:
    if kind is None:
        return ""
    if kind == "optic":
        return "mmf" if "-sr" in cable_id else "smf"
    return NETBOX_CABLE_TYPE_BY_KIND.get(kind, "")


def netbox_files(valid: ValidScenario, plan: CablingPlan, site: str) -> dict[str, str]:
    """``netbox-devices.csv``, ``netbox-interfaces.csv`` and ``netbox-cables.csv``."""
    design = plan.design
    switch = valid.switches[design.technology]
    infiniband = switch.family == "infiniband"
    manufacturer = MANUFACTURER_BY_FAMILY.get(switch.family, "") or switch.name.split()[0]
    switch_model = switch.name
    panel = front_panel(switch.id)
    if panel is not None and panel.netbox_model:
        manufacturer, switch_model = panel.netbox_manufacturer or manufacturer, panel.netbox_model
    nic = valid.nics[design.technology]
    element = valid.fabric_elements.get(design.technology) if plan.scheduled else None
    devices: list[list[str]] = [list(NETBOX_DEVICE_COLUMNS)]
    for device in plan.devices:
        if element is not None and device.role == "spine":
            model, maker = element.name, element.name.split()[0]
            text = f"fabric element (cell switch), plane {device.plane}"
        elif device.role in ("leaf", "spine", "core"):
            model, maker = switch_model, manufacturer
            text = f"{device.role} switch, plane {device.plane}"
        elif device.role == "node":
            model, maker = valid.node.name, valid.node.name.split()[0]
            text = f"compute node, block {device.scalable_unit}, {nic.name} NICs"
        else:
            model, maker = device.model, manufacturer
            text = "management / subnet manager"
        devices.append([device.name, device.role, maker, model, site, NETBOX_STATUS, text])
    kinds = {cable.id: cable.cable_kind for cable in valid.cables}
    interfaces: list[list[str]] = [list(NETBOX_INTERFACE_COLUMNS)]
    cables: list[list[str]] = [list(NETBOX_CABLE_COLUMNS)]
    for index, cable in enumerate(plan.cables):
        kind = _interface_type(infiniband, cable.speed_gbps)
        speed_kbps = str(gbps_to_kbps(cable.speed_gbps))
        for end, port, peer in (
            (cable.a_device, cable.a_port, cable.z_device),
            (cable.z_device, cable.z_port, cable.a_device),
        ):
            interfaces.append([end, port, kind, speed_kbps, f"to {peer}"])
        cables.append(
            [
                cable.a_device,
                NETBOX_TERMINATION,
                cable.a_port,
                cable.z_device,
                NETBOX_TERMINATION,
                cable.z_port,
                _cable_type(cable.part, kinds.get(cable.part)),
                NETBOX_STATUS,
                cable_label(index),
                "",
                f"{cable.length_m:g}",
                "m",
                f"{cable.link_group} {cable.part}",
            ]
        )
    return {
        "netbox-devices.csv": _csv(devices),
        "netbox-interfaces.csv": _csv(interfaces),
        "netbox-cables.csv": _csv(cables),
    }
