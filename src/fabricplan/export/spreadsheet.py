"""XLSX workbooks written directly as Office Open XML (SpreadsheetML), with no dependency.

A workbook is a ZIP of XML parts (ECMA-376 Part 1, SpreadsheetML): ``[Content_Types].xml``,
``_rels/.rels``, ``xl/workbook.xml``, ``xl/_rels/workbook.xml.rels`` and one
``xl/worksheets/sheetN.xml`` per sheet, cells as inline strings (``t="inlineStr"``) or numbers.
Written by hand because openpyxl without lxml spends over two minutes on a 16k-GPU cut sheet
(benchmarks/export_speed.py); the tests read every workbook back with openpyxl.

>>> data = xlsx_bytes({"cut sheet": [["a_device", "length_m"], ["node-0001", "3"]]}, {"length_m"})
>>> data[:2]
b'PK'
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Mapping
from xml.sax.saxutils import escape

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_SHEET_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
_BOOK_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
_FIXED_TIME = (2020, 1, 1, 0, 0, 0)
"""ZIP entry time: fixed so the same plan gives the same bytes."""
SHEET_NAME_MAX_CHARS = 31
"""Longest sheet name Excel accepts."""


def column_letter(index: int) -> str:
    """Spreadsheet column of a 0-based index.

    >>> column_letter(0), column_letter(25), column_letter(26), column_letter(701)
    ('A', 'Z', 'AA', 'ZZ')
    """
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _number(text: str) -> str | None:
    try:
        value = float(text)
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return text.strip()


def _sheet_xml(rows: Iterable[list[str]], numeric: set[str]) -> str:
    parts = [
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="{_MAIN}">'
        "<sheetData>"
    ]
    wanted: set[int] = set()
    letters: list[str] = []
    for r, row in enumerate(rows, start=1):
        if r == 1:
            wanted = {i for i, name in enumerate(row) if name in numeric}
        while len(letters) < len(row):
            letters.append(column_letter(len(letters)))
        cells = []
        for i, value in enumerate(row):
            ref = f"{letters[i]}{r}"
            number = _number(value) if r > 1 and i in wanted else None
            if number is not None:
                cells.append(f'<c r="{ref}"><v>{number}</v></c>')
            elif value:
                if "&" in value or "<" in value or ">" in value:
                    value = escape(value)
                cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>')
        parts.append(f'<row r="{r}">{"".join(cells)}</row>')
    parts.append("</sheetData></worksheet>")
    return "".join(parts)


def xlsx_bytes(sheets: Mapping[str, Iterable[list[str]]], numeric: set[str] | None = None) -> bytes:
    """A workbook of string rows (first row: header); ``numeric`` columns become numbers."""
    names = [name[:SHEET_NAME_MAX_CHARS] for name in sheets]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:

        def put(path: str, text: str) -> None:
            book.writestr(zipfile.ZipInfo(path, _FIXED_TIME), text, zipfile.ZIP_DEFLATED)

        overrides = "".join(
            f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{_SHEET_TYPE}"/>'
            for i in range(1, len(names) + 1)
        )
        put(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_BOOK_TYPE}"/>{overrides}'
            "</Types>",
        )
        put(
            "_rels/.rels",
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns='
            f'"{_PKG_REL}"><Relationship Id="rId1" Type="{_REL}/officeDocument"'
            ' Target="xl/workbook.xml"/></Relationships>',
        )
        sheet_list = "".join(
            f'<sheet name="{escape(name)}" sheetId="{i}" r:id="rId{i}"/>'
            for i, name in enumerate(names, start=1)
        )
        put(
            "xl/workbook.xml",
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="{_MAIN}"'
            f' xmlns:r="{_REL}"><sheets>{sheet_list}</sheets></workbook>',
        )
        links = "".join(
            f'<Relationship Id="rId{i}" Type="{_REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
            for i in range(1, len(names) + 1)
        )
        put(
            "xl/_rels/workbook.xml.rels",
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns='
            f'"{_PKG_REL}">{links}</Relationships>',
        )
        for i, rows in enumerate(sheets.values(), start=1):
            put(f"xl/worksheets/sheet{i}.xml", _sheet_xml(rows, numeric or set()))
    return out.getvalue()
