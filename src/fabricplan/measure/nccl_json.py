"""nccl-tests ``-J`` JSON and rccl-tests ``--output_format json|csv`` files.

nccl-tests (2025 on, ``JSON_FILE_VERSION`` 3) writes one object: ``args`` (argv, so
``args[0]`` names the program), ``env`` (``KEY=value`` strings), ``nccl_version``, ``config`` with
``devices`` (rank, hostname ...), ``results`` (``size``, ``type``, ``redop``, ``out_of_place`` and
``in_place`` each with ``time`` or ``cpu_time``, ``alg_bw``, ``bus_bw``, ``nwrong``),
``out_of_bounds``, ``average_bus_bandwidth``, ``errors``. The writer closes the object only at
the end of the run, so a crashed run leaves a cut file: the complete result objects are still read.

rccl-tests writes one record per row and placement: ``name`` (``AllReduce``), ``size``, ``type``,
``redop``, ``inPlace`` (0/1), ``time`` (us), ``algBw``, ``busBw``, ``#wrong``, ``gpus``; first as
JSON fragments one per line, since mid-2025 as one JSON list; or the same fields as CSV.

>>> doc = {"args": ["./build/all_gather_perf", "-b", "8"], "results": [{"size": 1048576,
...     "type": "float", "redop": "none", "out_of_place": {"time": 30.5, "alg_bw": 34.38,
...     "bus_bw": 30.08, "nwrong": 0.0}, "in_place": None}]}
>>> outcome = parse_nccl_json(doc, "a.json")
>>> outcome.drafts[0].test, outcome.drafts[0].rows[0]["busbw_GBps"]
('all_gather', 30.08)
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from fabricplan.errors import InputFileError
from fabricplan.measure.draft import ParseOutcome, RunDraft, finite, whole
from fabricplan.measure.jsondoc import objects_after, value_after_key
from fabricplan.measure.logline import LogContext, collective_name, test_in_text

RCCL_KEYS = {
    "name": "name",
    "size": "size",
    "type": "type",
    "redop": "redop",
    "inplace": "in_place",
    "time": "time",
    "algbw": "algbw",
    "busbw": "busbw",
    "#wrong": "wrong",
    "wrong": "wrong",
    "gpus": "gpus",
    "ranks": "gpus",
    "nranks": "gpus",
}
"""rccl-tests field names (any case, spaces and quotes ignored) to the names used here."""


def is_nccl_json(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("results"), list)


def is_rccl_record(doc: Any) -> bool:
    return isinstance(doc, dict) and any(str(k).lower() == "busbw" for k in doc)


def _group(group: Any) -> tuple[float, float, float, float | None] | None:
    if not isinstance(group, dict):
        return None
    time = finite(group.get("time", group.get("cpu_time")))
    algbw, busbw = finite(group.get("alg_bw")), finite(group.get("bus_bw"))
    if time is None or algbw is None or busbw is None:
        return None
    return time, algbw, busbw, finite(group.get("nwrong"))


def _nccl_row(result: Any, line: int) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(result, dict):
        return None, "a result is not an object"
    size = whole(result.get("size"))
    if size is None:
        return None, "a result has no whole-number size"
    out, inp = _group(result.get("out_of_place")), _group(result.get("in_place"))
    main = out or inp
    if main is None:
        return None, f"size {size}: no time/alg_bw/bus_bw"
    row: dict[str, Any] = {
        "line": line,
        "size_bytes": size,
        "placement": "out_of_place" if out else "in_place",
    }
    row["time_us"], row["algbw_GBps"], row["busbw_GBps"], row["wrong"] = main
    if out is not None and inp is not None:
        row["in_place_time_us"], _, row["in_place_busbw_GBps"], wrong_in = inp
        if wrong_in:
            row["wrong"] = (row["wrong"] or 0.0) + wrong_in
    for key, name in (("type", "dtype"), ("redop", "redop")):
        if isinstance(result.get(key), str):
            row[name] = result[key]
    return row, ""


def parse_nccl_json(
    doc: dict[str, Any], origin: str, file_test: str | None = None, cut: bool = False
) -> ParseOutcome:
    """Read an nccl-tests ``-J`` document (``cut``: salvaged from a file that was cut short)."""
    outcome = ParseOutcome("nccl-tests json")
    args = doc.get("args")
    program = args[0] if isinstance(args, list) and args and isinstance(args[0], str) else ""
    context = LogContext()
    env = doc.get("env")
    for item in env if isinstance(env, list) else []:
        if isinstance(item, str) and item.startswith("NCCL_"):
            context.update(item)
    config = doc.get("config")
    devices = config.get("devices") if isinstance(config, dict) else doc.get("devices")
    devices = devices if isinstance(devices, list) else []
    hosts = [str(d.get("hostname")) for d in devices if isinstance(d, dict)]
    draft = RunDraft(
        tool="nccl-tests",
        flavor="nccl-tests",
        test=test_in_text(program) or file_test or "unknown",
        line=1,
        ranks=len(hosts) or None,
        hosts=hosts,
        technology_hint=context.technology_hint,
        hint_reason=context.hint_reason,
        env=dict(context.env),
        complete=not cut,
    )
    outcome.tables_seen.append(1)
    results = doc.get("results")
    for result in results if isinstance(results, list) else []:
        row, note = _nccl_row(result, 1)
        if row is None:
            outcome.warn(origin, f"result skipped: {note}")
        elif row["size_bytes"] > 0:
            draft.rows.append(row)
    wrong = sum(1 for r in draft.rows if r.get("wrong"))
    if wrong:
        outcome.warn(origin, f"{wrong} results report wrong elements (nwrong > 0): data corruption")
    bounds = doc.get("out_of_bounds")
    if isinstance(bounds, dict) and (whole(bounds.get("count")) or 0) > 0:
        outcome.warn(origin, f"nccl-tests found {bounds['count']} out-of-bounds values (FAILED)")
    average = doc.get("average_bus_bandwidth")
    if isinstance(average, dict):
        draft.avg_busbw_GBps = finite(average.get("bandwidth"))
    errors = doc.get("errors")
    for error in errors if isinstance(errors, list) else []:
        if isinstance(error, str) and error.strip():
            outcome.warn(origin, f"nccl-tests error: {error.strip()[:160]}")
    if cut:
        outcome.warn(origin, f"the JSON is cut short; read {len(draft.rows)} complete results")
    if draft.ranks is None:
        draft.ranks = draft.infer_ranks()
    outcome.drafts.append(draft)
    return outcome


def salvage_nccl_json(text: str) -> dict[str, Any] | None:
    """What can be read from a cut nccl-tests JSON file: its header and complete results."""
    results = [obj for _, obj in objects_after(text, '{"size":') if isinstance(obj, dict)]
    if not results:
        return None
    doc: dict[str, Any] = {"results": results}
    for key in ("args", "env", "config"):
        value = value_after_key(text, key)
        if value is not None:
            doc[key] = value
    return doc


def _rccl_fields(record: dict[Any, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in record.items():
        name = RCCL_KEYS.get(str(key).strip().strip('"').replace(" ", "").lower())
        if name is not None:
            fields[name] = value.strip() if isinstance(value, str) else value
    return fields


def parse_rccl_records(
    records: Iterable[tuple[int, dict[Any, Any]]], origin: str, fmt: str
) -> ParseOutcome:
    """Read rccl-tests JSON/CSV records (``(line, record)`` pairs, read once in order: a
    generator streams, only one row per collective and size is kept); one run per collective."""
    outcome = ParseOutcome(fmt)
    drafts: dict[tuple[str, str, str], RunDraft] = {}
    rows: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for line, record in records:
        f = _rccl_fields(record)
        size, time = whole(f.get("size")), finite(f.get("time"))
        algbw, busbw = finite(f.get("algbw")), finite(f.get("busbw"))
        if size is None or time is None or algbw is None or busbw is None:
            outcome.warn(f"{origin}:{line}", "record skipped: size/time/algBw/busBw missing")
            continue
        if size == 0:
            continue
        name = str(f.get("name", ""))
        key = (name, str(f.get("type", "")), str(f.get("redop", "")))
        if key not in drafts:
            drafts[key] = RunDraft(
                tool="nccl-tests",
                flavor="rccl-tests",
                test=collective_name(name) or "unknown",
                line=line,
                ranks=whole(f.get("gpus")) or None,
            )
            outcome.tables_seen.append(line)
        in_place = str(f.get("in_place", "0")).strip().lower() in {"1", "true"}
        row = rows.setdefault((*key, size), {"line": line, "size_bytes": size})
        if in_place:
            row["in_place_time_us"], row["in_place_busbw_GBps"] = time, busbw
            if row.get("placement") == "out_of_place":
                continue
        row.update(
            time_us=time,
            algbw_GBps=algbw,
            busbw_GBps=busbw,
            wrong=finite(f.get("wrong")),
            placement="in_place" if in_place else "out_of_place",
            dtype=key[1] or None,
            redop=key[2] or None,
        )
    for (name, dtype, redop, _), row in rows.items():
        drafts[(name, dtype, redop)].rows.append(row)
    outcome.drafts.extend(drafts.values())
    return outcome


def rccl_csv_records(
    lines: Iterable[tuple[int, str]], origin: str = "<text>"
) -> Iterator[tuple[int, dict[Any, Any]]]:
    """CSV rows as ``(line, record)`` pairs, one row at a time (the first non-empty line is the
    rccl-tests CSV header); a field longer than :data:`MAX_CSV_FIELD_CHARS` is FP453.

    >>> list(rccl_csv_records([(1, "name,size,busBw"), (2, ""), (3, '"AllReduce",8,0.5')]))
    [(3, {'name': 'AllReduce', 'size': '8', 'busBw': '0.5'})]
    """
    at = _LineCounter(lines)
    reader = csv.reader(at, skipinitialspace=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        fields = [f.strip().strip('"') for f in header]
        for row in reader:
            yield at.number, dict(zip(fields, row, strict=False))
    except csv.Error as exc:
        raise InputFileError(
            "FP453",
            f"{origin}:{at.number}",
            "not a readable CSV row",
            str(exc)[:80],
            f"give rccl-tests CSV as the tool wrote it (fields of at most {MAX_CSV_FIELD_CHARS:,}"
            " characters)",
        ) from None


MAX_CSV_FIELD_CHARS = 131_072
"""Longest CSV field read (the ``csv`` module's default limit, 128 KiB): an rccl-tests field is
a number or a short name."""


class _LineCounter:
    """The non-empty lines' texts, remembering the number of the last one handed out."""

    def __init__(self, lines: Iterable[tuple[int, str]]) -> None:
        self._lines = iter(lines)
        self.number = 0

    def __iter__(self) -> Iterator[str]:
        for number, text in self._lines:
            if text.strip():
                self.number = number
                yield text
