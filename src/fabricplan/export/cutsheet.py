"""The cut sheet: one row per cable, as CSV or XLSX, and its reader (``verify-cabling``'s plan).

The first nine columns are fixed (:data:`CUTSHEET_COLUMNS`); after them come the cable label,
plane, rail, the logical port numbers of both ends (an InfiniBand switch's port number is what
ibnetdiscover prints) and the row and rack of both ends: where the design's layout puts them
(:func:`~fabricplan.export.layout.placed_layout`), or where a layout file says.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.export.cabling import cabling_plan
>>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
>>> text = cutsheet_csv(cabling_plan(design_fabric(valid, "roce_v2"), valid))
>>> print(text.splitlines()[1])
node-0001,nic0,leaf-001,Ethernet0,node_leaf,400,optic-400g-dr2,optic-100m,5,C00001,0,0,1,1,A,A01,A,A02
>>> len(read_cutsheet(text, "plan.csv"))  # 64 host links on one 128-port switch
64
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan
from fabricplan.export.layout import NOWHERE, Layout, placed_layout

CUTSHEET_COLUMNS: tuple[str, ...] = (
    "a_device",
    "a_port",
    "z_device",
    "z_port",
    "link_group",
    "speed_gbps",
    "part",
    "reach_class",
    "length_m",
)
"""The fixed leading columns of every cut sheet."""

HOST_PORT_NUMBER = 1
"""Port number of a host's end: each NIC (one HCA) has one fabric port."""

EXTRA_COLUMNS: tuple[str, ...] = (
    "cable_label",
    "plane",
    "rail",
    "a_port_number",
    "z_port_number",
    "a_row",
    "a_rack",
    "z_row",
    "z_rack",
)


def cable_label(index: int) -> str:
    """The label printed on cable ``index`` (0-based): ``C00001``...

    >>> cable_label(0), cable_label(123456)
    ('C00001', 'C123457')
    """
    return f"C{index + 1:05d}"


def _port_numbers(plan: CablingPlan) -> tuple[dict[str, int], dict[str, int]]:
    """Logical port numbers by name: of the leaves (and every switch), and of a scheduled
    fabric's elements (the Z end of its leaf-spine links)."""
    numbers = {name: i + 1 for i, name in enumerate(plan.switch_ports)}
    elements = {name: i + 1 for i, name in enumerate(plan.element_ports)}
    return numbers, elements or numbers


def cutsheet_rows(plan: CablingPlan, layout: Layout | None = None) -> Iterator[list[str]]:
    """The header, then one row per cable (strings, ready for CSV or a sheet); rows and racks
    from the design's layout, or from ``layout`` where it lists the device."""
    numbers, element_numbers = _port_numbers(plan)
    place = placed_layout(plan, layout)
    yield [*CUTSHEET_COLUMNS, *EXTRA_COLUMNS]
    for index, cable in enumerate(plan.cables):
        # A host's NIC has one fabric port (ibnetdiscover's CA port 1).
        host = cable.link_group in ("node_leaf", "management")
        a_number = HOST_PORT_NUMBER if host else numbers[cable.a_port]
        yield [
            cable.a_device,
            cable.a_port,
            cable.z_device,
            cable.z_port,
            cable.link_group,
            f"{cable.speed_gbps:g}",
            cable.part,
            cable.reach_class,
            f"{cable.length_m:g}",
            cable_label(index),
            str(cable.plane),
            str(cable.rail) if cable.rail >= 0 else "",
            str(a_number),
            str((element_numbers if cable.link_group == "leaf_spine" else numbers)[cable.z_port]),
            place.get(cable.a_device, NOWHERE).row,
            place.get(cable.a_device, NOWHERE).rack,
            place.get(cable.z_device, NOWHERE).row,
            place.get(cable.z_device, NOWHERE).rack,
        ]


def cutsheet_csv(plan: CablingPlan, layout: Layout | None = None) -> str:
    """The cut sheet as CSV text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(cutsheet_rows(plan, layout))
    return out.getvalue()


def cutsheet_xlsx(plan: CablingPlan, layout: Layout | None = None) -> bytes:
    """The cut sheet as an XLSX workbook."""
    return rows_xlsx({"cut sheet": cutsheet_rows(plan, layout)}, numeric={"speed_gbps", "length_m"})


def rows_xlsx(sheets: dict[str, Iterator[list[str]]], numeric: set[str] | None = None) -> bytes:
    """Sheets of string rows (first row: header) as XLSX; ``numeric`` columns become numbers."""
    from fabricplan.export.spreadsheet import xlsx_bytes

    return xlsx_bytes(sheets, numeric)


@dataclass(frozen=True, slots=True)
class SheetLink:
    """One cable of a cut sheet as read back: both ends and the port numbers when given."""

    a_device: str
    a_port: str
    z_device: str
    z_port: str
    link_group: str = ""
    a_port_number: int | None = None
    z_port_number: int | None = None
    line: int = 0


def _int_or_none(text: str | None) -> int | None:
    if text is None or not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        return None


def read_cutsheet(text: str, where: str) -> list[SheetLink]:
    """Read a cut sheet's CSV (the header must start with :data:`CUTSHEET_COLUMNS`' first four).

    Raises
    ------
    InputFileError
        FP1210 when the header is not a cut sheet's, FP1211 when a row lacks an end.
    """
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or [h.strip() for h in header[:4]] != list(CUTSHEET_COLUMNS[:4]):
        raise InputFileError(
            "FP1210",
            f"{where}:1",
            "not a cut sheet (the header must start a_device,a_port,z_device,z_port)",
            ",".join(header[:4]) if header else "",
            "pass a file written by `fabricplan export --format cutsheet`",
        )
    index = {name.strip(): i for i, name in enumerate(header)}
    links: list[SheetLink] = []
    for number, row in enumerate(reader, start=2):
        if not row or not any(cell.strip() for cell in row):
            continue
        cells = [cell.strip() for cell in row]
        if len(cells) < 4 or not all(cells[:4]):
            raise InputFileError(
                "FP1211",
                f"{where}:{number}",
                "a row lacks a device or port",
                ",".join(cells[:4]),
                "give a_device,a_port,z_device,z_port on every row",
            )

        def cell(name: str, cells: list[str] = cells) -> str | None:
            i = index.get(name)
            return cells[i] if i is not None and i < len(cells) else None

        links.append(
            SheetLink(
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                cell("link_group") or "",
                _int_or_none(cell("a_port_number")),
                _int_or_none(cell("z_port_number")),
                number,
            )
        )
    return links
