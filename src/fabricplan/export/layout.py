"""Where each device stands, when the user knows it: a ``device,row,rack[,u]`` CSV.

fabricplan has no floor plan of its own; a layout file given with ``export --layout`` fills the
cut sheet's row and rack columns and the CVT sheet's rack and U columns.

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
            )
        if cells[0] in layout:
            raise InputFileError(
                "FP1225", f"{where}:{number}", "device listed twice", cells[0], "list it once"
            )
        u = cells[3] if has_u and len(cells) > 3 else ""
        layout[cells[0]] = RackPosition(cells[1], cells[2], u)
    return layout
