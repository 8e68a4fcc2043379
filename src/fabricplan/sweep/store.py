"""The results file: one Parquet table, written whole and atomically, read back to resume.

Columns: ``point`` (index in the grid), ``point_key``, one column per varied key named by its
spec path, then :data:`~fabricplan.sweep.point.ROW_COLUMNS`. Rows are sorted by point and seed
(technologies in the spec's order), so the file's content does not depend on which worker
finished first. A varied key's column is bool, int64, float64 or string when all its values are
of that kind, and text otherwise (scalars as written, lists and mappings as JSON).

The file's schema metadata holds, under ``fabricplan.sweep``, a JSON object with the package
version, the sweep definition (base spec, dimensions, backend, seeds, base seed, message
size), its fingerprint and the varied keys.

Each write goes through the one output layer (:func:`fabricplan.output_file.write_atomic`): a
temporary file beside the target, renamed over it with SIGINT and SIGTERM held, so a reader, a
crash or a kill at any moment sees the previous complete file or the new one, and no temporary
file is left behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fabricplan.errors import SweepError
from fabricplan.input_file import FileKind, read_bytes
from fabricplan.output_file import write_atomic
from fabricplan.sweep.grid import SweepDefinition, sweep_points
from fabricplan.sweep.point import ROW_COLUMNS

METADATA_KEY = b"fabricplan.sweep"


def parquet_modules() -> tuple[Any, Any]:
    """``pyarrow`` and ``pyarrow.parquet`` (the optional ``sweep`` extra)."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise SweepError(
            "FP1015",
            "sweep",
            "pyarrow is not installed (results are Parquet)",
            None,
            "pip install 'fabricplan[sweep]'",
        ) from None
    return pyarrow, pyarrow.parquet


def _package_version() -> str:
    from fabricplan import __version__

    return __version__


def _key_column(values: list[Any]) -> tuple[str, list[Any]]:
    """A varied key's Parquet type and values (text for mixed kinds, JSON for nested values)."""
    given = [v for v in values if v is not None]
    if given and all(isinstance(v, bool) for v in given):
        return "bool", values
    if given and all(isinstance(v, int) and not isinstance(v, bool) for v in given):
        return "int64", values
    if given and all(isinstance(v, int | float) and not isinstance(v, bool) for v in given):
        return "float64", [None if v is None else float(v) for v in values]
    if all(isinstance(v, str) for v in given):
        return "string", values
    return "string", [_text(v) for v in values]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, sort_keys=True)


def metadata_document(definition: SweepDefinition) -> dict[str, Any]:
    """What the file's metadata says about the sweep."""
    return {
        "version": _package_version(),
        "fingerprint": definition.fingerprint(),
        "keys": list(definition.keys),
        "definition": definition.model_dump(mode="json"),
    }


def sorted_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by point, then seed; a point-seed's technologies keep their order."""
    return sorted(rows, key=lambda r: (r["point"], r["seed"]))


def write_results(
    path: str | os.PathLike[str], rows: Sequence[dict[str, Any]], definition: SweepDefinition
) -> None:
    """Write every row (sorted) with the sweep's metadata, atomically."""
    pa, pq = parquet_modules()
    ordered = sorted_rows(rows)
    keys = definition.keys
    arrays: dict[str, Any] = {}
    fields = []
    for name in ("point", "point_key", *keys, *list(ROW_COLUMNS)[2:]):
        values = [r.get(name) for r in ordered]
        kind = ROW_COLUMNS.get(name)
        if name in keys:
            kind, values = _key_column(values)
        arrow_type = pa.type_for_alias(kind or "string")
        fields.append(pa.field(name, arrow_type))
        arrays[name] = pa.array(values, type=arrow_type)
    schema = pa.schema(fields, metadata={METADATA_KEY: json.dumps(metadata_document(definition))})
    table = pa.Table.from_pydict(arrays, schema=schema)
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    write_atomic(path, buffer.getvalue().to_pybytes())


RESULTS_FILE = FileKind(
    "sweep results", SweepError, "FP1010", max_bytes=2**30, fix="give a file written by sweep"
)
"""A results file: a regular file of at most 1 GiB (read whole, never a FIFO or a device)."""


def _results_table(path: str | os.PathLike[str], *, rows: bool) -> tuple[dict[str, Any], Any]:
    """The sweep metadata of a results file and, if ``rows``, its table."""
    pa, pq = parquet_modules()
    data = read_bytes(path, RESULTS_FILE)
    try:
        schema = pq.read_schema(pa.BufferReader(data))
        table = pq.read_table(pa.BufferReader(data)) if rows else None
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise SweepError(
            "FP1010", str(path), "is not a readable Parquet file", str(exc)[:80], "check the path"
        ) from None
    raw = (schema.metadata or {}).get(METADATA_KEY)
    try:
        document = json.loads(raw) if raw is not None else None
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise SweepError(
            "FP1010",
            str(path),
            "is not a fabricplan sweep results file (no sweep metadata)",
            None,
            "give a file written by `fabricplan sweep`",
        )
    return document, table


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The sweep metadata of a results file; :class:`SweepError` if it is not one."""
    document, _ = _results_table(path, rows=False)
    return document


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every row of a results file as a mapping from column to value."""
    _, table = _results_table(path, rows=True)
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def resumable_rows(
    path: str | os.PathLike[str], definition: SweepDefinition
) -> list[dict[str, Any]]:
    """The rows a previous run of the same sweep left in ``path`` (none if it does not exist).

    The varied keys' values are taken back to what the sweep set (JSON text is decoded), so the
    rewritten file is the same as an uninterrupted run's.
    """
    parquet_modules()  # before any work: the results could not be written without it
    if not Path(path).exists():
        return []
    document = read_metadata(path)
    if document.get("fingerprint") != definition.fingerprint():
        raise SweepError(
            "FP1009",
            str(path),
            "holds the results of another sweep (spec, --vary, backend, --seed or --size differ)",
            None,
            "write to another -o file, or add --fresh to start this file over",
        )
    rows = read_rows(path)
    settings_by_point: dict[int, dict[str, Any]] = {}
    for point in sweep_points(definition):
        settings_by_point[point.index] = {k: point.settings.get(k) for k in definition.keys}
    for row in rows:
        row.update(settings_by_point.get(row["point"], {}))
    return rows
