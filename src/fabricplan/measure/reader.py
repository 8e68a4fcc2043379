"""Read any benchmark file fabricplan knows: the format is found from the content.

- starts with ``{`` or ``[``: JSON — nccl-tests ``-J``, perftest ``--out_json`` (also the unquoted
  form of 2021-2022), rccl-tests records (a list, or one object per line);
- a first line with commas and ``busBw``: rccl-tests CSV;
- anything else: text, read by both the nccl-tests/rccl-tests and the perftest reader, so that
  one log may hold several programs' output.

What cannot be read becomes an :class:`~fabricplan.errors.InputFileError` naming the file and the
line; what is read despite a problem (a cut table, NCCL WARN lines, #wrong) becomes a warning in
the :class:`~fabricplan.measure.measurement.BenchFileRecord`.

>>> log = '''#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong
...    1048576 262144 float sum -1  60.1 17.45 32.72  0  59.8 17.53 32.87  0
... # Avg bus bandwidth    : 32.8
... '''
>>> record = read_bench_text(log, "nccl_allreduce_16g.log")
>>> [(m.test, m.size_bytes, m.busbw_GBps) for m in record.measurements]
[('all_reduce', 1048576, 32.72)]
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fabricplan.errors import InputFileError
from fabricplan.input_file import FileKind, iter_lines
from fabricplan.measure.draft import ParseOutcome
from fabricplan.measure.jsondoc import json_documents
from fabricplan.measure.logline import strip_prefix, test_in_file_name
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord, RunRecord
from fabricplan.measure.nccl_json import (
    is_nccl_json,
    is_rccl_record,
    parse_nccl_json,
    parse_rccl_records,
    rccl_csv_records,
    salvage_nccl_json,
)
from fabricplan.measure.nccl_text import NcclTextReader
from fabricplan.measure.perftest_json import (
    is_perftest_json,
    parse_perftest_json,
    relaxed_perftest_json,
)
from fabricplan.measure.perftest_text import PerftestTextReader

MAX_FILE_BYTES = 512 * 2**20
BENCH_FILE = FileKind(
    "benchmark log",
    InputFileError,
    "FP450",
    max_bytes=MAX_FILE_BYTES,
    fix="check the path and permissions",
    decode_fallback=True,
    too_large_code="FP459",
)
"""A benchmark log: a regular file of at most 512 MiB; bytes that are not UTF-8 become U+FFFD."""
"""Larger files are not benchmark logs (a 10 000-rank NCCL_DEBUG=INFO log is ~100 MiB)."""
BINARY_PROBE_BYTES = 8192
MAX_JSON_WHOLE_BYTES = 64 * 2**20
"""Largest JSON benchmark file read whole (64 MiB: an nccl-tests ``-J`` run is ~300 B a size,
so ~200,000 rows). A larger one is read a line at a time when it holds one JSON value a line
(rccl-tests JSON lines); a larger single document is refused (FP1410): parsed whole it would
take several times its size in memory."""
_FORMATS_HINT = "give nccl-tests/rccl-tests or perftest output (text or JSON) as the tool wrote it"


def _json_outcomes(text: str, origin: str, file_test: str | None) -> list[ParseOutcome]:
    docs, error = json_documents(text)
    outcomes: list[ParseOutcome] = []
    rccl: list[tuple[int, dict[Any, Any]]] = []
    for number, doc in enumerate(docs, 1):
        items = doc if isinstance(doc, list) else [doc]
        for item in items:
            if is_nccl_json(item):
                outcomes.append(parse_nccl_json(item, origin, file_test))
            elif is_perftest_json(item):
                outcomes.append(parse_perftest_json(item, origin, file_test))
            elif is_rccl_record(item):
                rccl.append((number if len(docs) > 1 else 0, item))
    if rccl:
        fmt = "rccl-tests json" if len(docs) == 1 else "rccl-tests json lines"
        outcomes.append(parse_rccl_records(rccl, origin, fmt))
    if error is not None and outcomes:
        outcomes[0].warn(
            f"{origin}:{error[0]}", f"JSON stops here ({error[2]}); kept what came before"
        )
    if outcomes or error is None:
        return outcomes
    salvaged = salvage_nccl_json(text) if '"results"' in text else None
    if salvaged is not None:
        return [parse_nccl_json(salvaged, origin, file_test, cut=True)]
    if "test_info" in text or "MsgSize" in text:
        doc = relaxed_perftest_json(text, origin)
        if is_perftest_json(doc):
            return [parse_perftest_json(doc, origin, file_test)]
    line, column, why = error
    raise InputFileError(
        "FP453", f"{origin}:{line}:{column}", f"not valid JSON: {why}", None, _FORMATS_HINT
    )


def _too_large_json(origin: str, line: int) -> InputFileError:
    return InputFileError(
        "FP1410",
        f"{origin}:{line}",
        f"a JSON document larger than {MAX_JSON_WHOLE_BYTES // 2**20} MiB is not read whole",
        None,
        "give one JSON record a line (rccl-tests JSON lines) or split the file by run",
    )


def _json_lines_outcomes(
    lines: Iterable[str], origin: str, file_test: str | None
) -> list[ParseOutcome]:
    """The outcomes of a JSON file larger than :data:`MAX_JSON_WHOLE_BYTES`, read one line at a
    time: each line one JSON value (a record, or a list of records); the bracket lines of a list
    written one record a line, and commas after a value, are skipped. Memory follows the rows
    kept (one per collective and size), not the file. A line that is not a value stops the read
    (a warning when records came before, FP453 when none did, FP1410 when the first line opens
    a multi-line document)."""
    others: list[ParseOutcome] = []
    stop: list[tuple[int, str]] = []
    decoded = [0]  # values read so far

    def records() -> Iterable[tuple[int, dict[Any, Any]]]:
        for number, raw in enumerate(lines, 1):
            body = raw.strip().rstrip(",").strip()
            if not body or body in {"[", "]"}:
                continue
            if len(body) > MAX_JSON_WHOLE_BYTES:
                raise _too_large_json(origin, number)
            try:
                doc = json.loads(body)
            except RecursionError:
                stop.append((number, "nesting too deep"))
                return
            except ValueError as exc:  # JSONDecodeError, or an integer past Python's limit
                stop.append((number, str(exc).split(":")[0][:80]))
                return
            decoded[0] += 1
            for item in doc if isinstance(doc, list) else [doc]:
                if is_rccl_record(item):
                    yield number, item
                elif is_nccl_json(item):
                    others.append(parse_nccl_json(item, origin, file_test))
                elif is_perftest_json(item):
                    others.append(parse_perftest_json(item, origin, file_test))

    rccl = parse_rccl_records(records(), origin, "rccl-tests json lines")
    outcomes = [o for o in (rccl, *others) if o.drafts]
    if stop:
        line, why = stop[0]
        if not outcomes and not decoded[0]:  # the first value spans lines: one large document
            raise _too_large_json(origin, line)
        if not outcomes:
            raise InputFileError(
                "FP453", f"{origin}:{line}", f"not valid JSON: {why}", None, _FORMATS_HINT
            )
        outcomes[0].warn(f"{origin}:{line}", f"JSON stops here ({why}); kept what came before")
    return outcomes or [rccl]


_LINE_ENDS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What ``str.splitlines`` ends a line at (one of them ends each line :func:`iter_lines` gives)."""


def _is_csv_header(line: str) -> bool:
    fields = [f.strip().strip('"').lower() for f in line.split(",")]
    return "busbw" in fields and "size" in fields


def _text_outcomes(
    lines: Iterable[tuple[int, str]], origin: str, file_test: str | None
) -> tuple[list[ParseOutcome], str]:
    """Every reader's outcome over the numbered lines, read once and in order (a generator
    streams: only the tables' rows are kept), and the first line that is not blank."""
    numbered = iter(lines)
    head: list[tuple[int, str]] = []
    first = ""
    for number, text in numbered:
        head.append((number, text))
        if text.strip():
            first = text.strip()
            break
    if first and _is_csv_header(first):  # rccl-tests CSV: every line is a row, read one by one
        records = rccl_csv_records(itertools.chain(head, numbered), origin)
        return [parse_rccl_records(records, origin, "rccl-tests csv")], first
    readers = (NcclTextReader(origin, file_test), PerftestTextReader(origin, file_test))
    for number, raw in itertools.chain(head, numbered):
        text = strip_prefix(raw).rstrip()  # once for both readers
        for reader in readers:
            reader.feed_text(number, text)
    return [reader.finish() for reader in readers], first


def read_bench_text(text: str, origin: str = "<text>", op: str | None = None) -> BenchFileRecord:
    """Read benchmark output given as text.

    Parameters
    ----------
    text
        The whole file.
    origin
        Its name, for messages; a name such as ``allreduce_2n.log`` also tells the operation
        when the log does not.
    op
        The test to assume where the log does not say it (``all_reduce``, ``write_bw``).
    """
    file_test = test_in_file_name(Path(origin).name)
    if not text.strip():
        raise InputFileError("FP451", origin, "the file is empty", None, _FORMATS_HINT)
    numbered = enumerate(text.splitlines(), 1)
    if text.lstrip()[:1] in {"{", "["}:
        try:
            outcomes = _json_outcomes(text, origin, file_test)
        except InputFileError as json_error:
            # A log may start with "[root@host ~]# ib_write_bw ...": read it as text, and keep the
            # JSON error for when the text has no table either.
            outcomes, _ = _text_outcomes(numbered, origin, file_test)
            if not any(o.tables_seen for o in outcomes):
                raise json_error from None
        first = next((t.strip() for t in text.splitlines() if t.strip()), "")
    else:
        outcomes, first = _text_outcomes(numbered, origin, file_test)
    return _bench_record(outcomes, origin, op, first)


def _bench_record(
    outcomes: list[ParseOutcome], origin: str, op: str | None, first_line: str
) -> BenchFileRecord:
    """The record of what the readers found (FP451/FP452 when they found no row)."""
    drafts = sorted((d for o in outcomes for d in o.drafts if d.rows), key=lambda d: d.line)
    # Both text readers report the same problem lines; keep each once.
    warnings = tuple(dict.fromkeys(w for o in outcomes for w in o.warnings))
    unlisted = max((o.unlisted for o in outcomes), default=0)
    if unlisted:
        warnings += (f"{origin}: {unlisted} more warnings not listed",)
    if not drafts:
        seen = sorted(line for o in outcomes for line in o.tables_seen)
        if seen:
            raise InputFileError(
                "FP451",
                f"{origin}:{seen[0]}",
                "the table has no readable rows",
                warnings[0] if warnings else None,
                _FORMATS_HINT,
            )
        raise InputFileError(
            "FP452",
            f"{origin}:1",
            "no nccl-tests, rccl-tests or perftest table found",
            first_line[:60],
            _FORMATS_HINT,
        )
    formats = "+".join(dict.fromkeys(o.format for o in outcomes if any(d.rows for d in o.drafts)))
    runs: list[RunRecord] = []
    measurements: list[MeasurementRecord] = []
    for index, draft in enumerate(drafts):  # freezing hands each draft's rows to its records
        if draft.test == "unknown" and op:
            draft.test = op
        run, rows = draft.freeze(origin, index)
        runs.append(run)
        measurements.extend(rows)
    return BenchFileRecord(
        path=origin,
        format=formats,
        runs=tuple(runs),
        measurements=tuple(measurements),
        warnings=warnings,
    )


def read_bench_file(path: str | os.PathLike[str], op: str | None = None) -> BenchFileRecord:
    """Read one benchmark file (any format in the module docstring).

    Raises :class:`InputFileError` (FP450-FP459) with the file and line when nothing can be read.
    """
    file = Path(path)
    if os.path.isdir(file):  # Path.is_dir raises on a name too long to look up
        raise InputFileError(
            "FP450",
            str(file),
            "is a directory",
            None,
            "name the log files (a shell glob such as logs/*.log works)",
        )
    lines = iter_lines(file, BENCH_FILE)
    head: list[str] = []
    probed = 0
    for line in lines:  # the first few KiB tell binary, JSON or text
        head.append(line)
        probed += len(line)
        if probed >= BINARY_PROBE_BYTES:
            break
    probe = "".join(head)
    if "\x00" in probe[:BINARY_PROBE_BYTES]:
        raise InputFileError(
            "FP455", str(file), "is a binary file, not a benchmark log", None, _FORMATS_HINT
        )
    if probe.lstrip()[:1] in {"{", "["} or not probe.strip():
        if os.stat(file).st_size <= MAX_JSON_WHOLE_BYTES:
            # JSON is one document (and an empty file is said so): read whole, within the cap.
            return read_bench_text(probe + "".join(lines), str(file), op)
        file_test = test_in_file_name(file.name)
        outcomes = _json_lines_outcomes(itertools.chain(head, lines), str(file), file_test)
        return _bench_record(outcomes, str(file), op, probe.strip().split("\n", 1)[0])
    numbered = enumerate((t.rstrip(_LINE_ENDS) for t in itertools.chain(head, lines)), 1)
    file_test = test_in_file_name(file.name)
    outcomes, first = _text_outcomes(numbered, str(file), file_test)
    return _bench_record(outcomes, str(file), op, first)
