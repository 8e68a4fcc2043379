"""Where each device stands: the design's own hall layout, or a ``device,row,rack[,u]`` CSV.

The design places every rack (the spec's ``layout:``, :mod:`fabricplan.topology.layout`), so the
cut sheet's row and rack columns and the CVT sheet's rack column are filled from it
(:func:`placed_layout`); a layout file given with ``export --layout`` overrides the devices it
lists (and gives the U).

>>> text = "device,row,rack,u\\nleaf-001,A,A01,42\\nnode-0001,A,A02,10\\n"
>>> layout = read_layout(text, "racks.csv")
>>> layout["leaf-001"]
RackPosition(row='A', rack='A01', u='42')
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass

from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan

LAYOUT_COLUMNS = ("device", "row", "rack")


@dataclass(frozen=True, slots=True)
class RackPosition:
    row: str
    rack: str
    u: str = ""


NOWHERE = RackPosition("", "", "")
"""The position of a device the layout does not list."""

Layout = Mapping[str, RackPosition]


def read_layout(text: str, where: str) -> dict[str, RackPosition]:
    """Read a layout CSV (header ``device,row,rack`` and optionally ``u``).

    Raises
    ------
    InputFileError
        FP1225 for a wrong header, a row without a device, or a device listed twice.
    """
    rows = list(csv.reader(io.StringIO(text)))
    header = [cell.strip() for cell in rows[0]] if rows else []
    if tuple(header[:3]) != LAYOUT_COLUMNS:
        raise InputFileError(
            "FP1225",
            f"{where}:1",
            "not a layout (the header must start device,row,rack)",
            ",".join(header[:3]),
            "give device,row,rack[,u] rows",
        )
    has_u = len(header) > 3 and header[3] == "u"
    layout: dict[str, RackPosition] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if len(cells) < 3 or not cells[0]:
            raise InputFileError(
                "FP1225",
                f"{where}:{number}",
                "a row lacks the device, row or rack",
                ",".join(cells),
                "give device,row,rack on every row",
            )
        if cells[0] in layout:
            raise InputFileError(
                "FP1225", f"{where}:{number}", "device listed twice", cells[0], "list it once"
            )
        u = cells[3] if has_u and len(cells) > 3 else ""
        layout[cells[0]] = RackPosition(cells[1], cells[2], u)
    return layout


def placed_layout(plan: CablingPlan, given: Layout | None = None) -> dict[str, RackPosition]:
    """Every device's row and rack as the design places it, overridden by ``given`` where that
    lists the device.

    >>> from fabricplan.export.cabling import cabling_plan
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["infiniband"]}})
    >>> plan = cabling_plan(design_fabric(valid, "infiniband"), valid)
    >>> where = placed_layout(plan, {"leaf-001": RackPosition("Z", "Z09", "40")})
    >>> where["node-0001"], where["leaf-001"]
    (RackPosition(row='A', rack='A01', u=''), RackPosition(row='Z', rack='Z09', u='40'))
    """
    placed = {device.name: RackPosition(device.row, device.rack) for device in plan.devices}
    placed.update(given or {})
    return placed
