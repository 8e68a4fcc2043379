"""perftest text output (``ib_write_bw``, ``ib_read_lat`` ... from linux-rdma/perftest).

A run starts with the block perftest prints before measuring (``RDMA_Write BW Test``, ``Link type
: IB|Ethernet``, ``Mtu : 4096[B]``, ...), then one table. Columns are found by their names:

- bandwidth: ``#bytes #iterations BW peak[U] BW average[U] MsgRate[Mpps]`` where ``U`` is ``Gb/sec``
  with ``--report_gbits``, else ``MB/sec`` (before 2024) or ``MiB/sec`` (both 2**20 bytes/s);
  ``--report-per-port`` and ``--cpu_util`` add columns, raw-Ethernet QoS adds ``#sl``;
- latency: ``#bytes #iterations t_min t_max t_typical`` and, since 2016, ``t_avg t_stdev`` and the
  99 % / 99.9 % percentiles, all in usec (``-C`` prints cycles, which cannot be converted);
- latency with ``-D``: ``#bytes #iterations t_avg[usec] tps average``.

``bw_gbps`` is the average column in Gb/s; ``latency_us`` is ``t_typical`` (the median perftest
prints), or ``t_avg`` when that is all there is. perftest's latencies are half the round trip for
send/write and the whole round trip for read (an RDMA read is a request and its response).

>>> text = '''                    RDMA_Write BW Test
...  Link type       : IB
...  #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
...  65536      5000             390.12             389.95                0.743782
... ---------------------------------------------------------------------------------------
... '''
>>> outcome = parse_perftest_text(list(enumerate(text.splitlines(), 1)), "bw.log")
>>> d = outcome.drafts[0]
>>> d.test, d.technology_hint, d.rows[0]["bw_gbps"]
('write_bw', 'infiniband', 389.95)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fabricplan.measure.draft import ParseOutcome, RunDraft, finite, whole
from fabricplan.measure.logline import (
    PERFTEST_VERBS,
    perftest_name,
    problem_in,
    strip_prefix,
    test_in_text,
)
from fabricplan.measure.measurement import TechnologyHint
from fabricplan.units import mib_per_s_to_gbps, ns_to_us, serialization_ns

_TEST_RE = re.compile(
    r"^\s*(" + "|".join(sorted(PERFTEST_VERBS, key=len, reverse=True)) + r")\s+(.*)\bTest\s*$"
)
_LINK_RE = re.compile(r"Link type\s*:\s*(\w+)")
_MTU_RE = re.compile(r"\bMtu\s*:\s*(\d+)")
_DEVICE_RE = re.compile(r"\bDevice\s*:\s*(\S+)")
_QPS_RE = re.compile(r"Number of qps\s*:\s*(\d+)")
_GID_RE = re.compile(r"\bGID index\s*:\s*\d+")
_ROW_RE = re.compile(r"^\s*\d+\s+\d+")
_RULE_RE = re.compile(r"^\s*-{20,}\s*$")
_COLUMNS = (
    ("bytes", re.compile(r"#bytes")),
    ("sl", re.compile(r"#sl\b")),
    ("iterations", re.compile(r"#iterations")),
    ("bw_peak", re.compile(r"BW peak\[([^\]]*)\]")),
    ("bw_avg", re.compile(r"BW average\[([^\]]*)\]")),
    ("msg_rate", re.compile(r"MsgRate\[")),
    ("t_min", re.compile(r"t_min\[([^\]]*)\]")),
    ("t_max", re.compile(r"t_max\[")),
    ("t_typical", re.compile(r"t_typical\[([^\]]*)\]")),
    ("t_avg", re.compile(r"t_avg\[([^\]]*)\]")),
    ("t_stdev", re.compile(r"t_stdev\[")),
    ("p99", re.compile(r"(?<![\d.])99% percentile")),
    ("p999", re.compile(r"99\.9% percentile")),
)
_LINK_HINTS: dict[str, TechnologyHint] = {"IB": "infiniband", "Ethernet": "roce"}


@dataclass
class _Table:
    columns: dict[str, int]
    bw_unit: str | None
    time_unit: str | None


def _table(header: str) -> _Table | None:
    """Column positions of a perftest result header."""
    found: list[tuple[int, str, str | None]] = []
    for name, pattern in _COLUMNS:
        match = pattern.search(header)
        if match is not None:
            unit = match.group(1) if match.groups() else None
            found.append((match.start(), name, unit))
    names = [name for _, name, _ in sorted(found)]
    if "bytes" not in names or not ({"bw_avg", "t_typical", "t_avg"} & set(names)):
        return None
    units = {name: unit for _, name, unit in found}
    time_unit = units.get("t_typical") or units.get("t_avg") or units.get("t_min")
    return _Table({name: i for i, name in enumerate(names)}, units.get("bw_avg"), time_unit)


def _gbps(value: float | None, unit: str | None) -> float | None:
    if value is None:
        return None
    if unit is not None and unit.startswith("Gb"):
        return value
    return mib_per_s_to_gbps(value)


def _row(tokens: list[str], table: _Table, line: int) -> tuple[dict[str, Any] | None, str]:
    cols = table.columns

    def get(name: str) -> float | None:
        index = cols.get(name)
        return finite(tokens[index]) if index is not None and index < len(tokens) else None

    size = whole(tokens[0])
    if size is None:
        return None, "size is not a whole number"
    row: dict[str, Any] = {"line": line, "size_bytes": size}
    if "bw_avg" in cols:
        bw = _gbps(get("bw_avg"), table.bw_unit)
        if bw is None or bw <= 0:
            return None, "BW average is missing or zero"
        row["bw_gbps"] = bw
        row["bw_peak_gbps"] = _gbps(get("bw_peak"), table.bw_unit)
        row["msg_rate_mpps"] = get("msg_rate")
        row["time_us"] = ns_to_us(serialization_ns(size, bw))
        return row, ""
    if table.time_unit != "usec":
        return None, f"latency is in {table.time_unit} (run without -C to get usec)"
    latency = get("t_typical") if "t_typical" in cols else get("t_avg")
    if latency is None:
        return None, "latency is missing or not a number"
    row.update(
        latency_us=latency, time_us=latency, latency_min_us=get("t_min"), latency_p99_us=get("p99")
    )
    return row, ""


@dataclass
class _State:
    origin: str
    file_test: str | None
    outcome: ParseOutcome
    test: str | None = None
    bidirectional: bool = False
    hint: TechnologyHint | None = None
    hint_reason: str = ""
    mtu_bytes: int | None = None
    device: str | None = None
    qps: int | None = None
    table: _Table | None = None
    draft: RunDraft | None = None

    def close(self, complete: bool) -> None:
        if self.draft is not None and self.draft.rows:
            self.draft.complete = complete
            self.outcome.drafts.append(self.draft)
        self.draft = None
        self.table = None

    def block(self, verb: str, rest: str) -> None:
        """A new ``... Test`` block: forget the previous run's context."""
        if self.draft is not None and self.draft.rows:
            self.outcome.warn(
                f"{self.origin}:{self.draft.line}",
                "the table ends without perftest's closing rule; a new test starts",
            )
        self.close(complete=False)
        kind = "BW" if re.search(r"\bBW\b", rest) else "Latency"
        self.test = perftest_name(verb, kind)
        self.bidirectional = "Bidirectional" in rest
        self.hint, self.hint_reason = None, ""
        self.mtu_bytes = self.device = self.qps = None

    def learn(self, text: str) -> None:
        link = _LINK_RE.search(text)
        if link is not None and link.group(1) in _LINK_HINTS:
            self.hint = _LINK_HINTS[link.group(1)]
            self.hint_reason = f"perftest Link type : {link.group(1)}"
        elif _GID_RE.search(text) is not None and self.hint is None:
            self.hint, self.hint_reason = "roce", "perftest uses a GID index (RoCE)"
        for pattern, key in ((_MTU_RE, "mtu_bytes"), (_QPS_RE, "qps")):
            match = pattern.search(text)
            if match is not None:
                setattr(self, key, whole(match.group(1)))
        device = _DEVICE_RE.search(text)
        if device is not None:
            self.device = device.group(1)


def _start_table(state: _State, number: int, table: _Table) -> None:
    state.close(complete=True)
    state.outcome.tables_seen.append(number)
    state.table = table
    test = state.test or state.file_test or "unknown"
    state.draft = RunDraft(
        tool="perftest",
        flavor="perftest",
        test=test,
        line=number,
        technology_hint=state.hint,
        hint_reason=state.hint_reason,
        mtu_bytes=state.mtu_bytes,
        device=state.device,
        qps=state.qps,
        bidirectional=state.bidirectional,
    )


class PerftestTextReader:
    """Reads perftest result tables one line at a time (:meth:`feed`); :meth:`finish` gives
    the :class:`ParseOutcome`."""

    def __init__(self, origin: str, file_test: str | None = None) -> None:
        self.origin = origin
        self.state = _State(
            origin=origin, file_test=file_test, outcome=ParseOutcome("perftest text")
        )

    def feed(self, number: int, raw: str) -> None:
        """Read line ``number`` as the log has it."""
        self.feed_text(number, strip_prefix(raw).rstrip())

    def feed_text(self, number: int, text: str) -> None:
        """Read line ``number`` once launcher prefixes are stripped (:func:`strip_prefix`)."""
        state, origin = self.state, self.origin
        if not text.strip():
            return
        block = _TEST_RE.match(text)
        if block is not None:
            state.block(block.group(1), block.group(2))
            return
        if "#bytes" in text:
            table = _table(text)
            if table is not None:
                _start_table(state, number, table)
                return
        if state.table is not None and state.draft is not None and _ROW_RE.match(text):
            row, note = _row(text.split(), state.table, number)
            if row is None:
                state.outcome.warn(f"{origin}:{number}", f"row skipped: {note}")
            elif row["size_bytes"] > 0:
                state.draft.rows.append(row)
            return
        if _ROW_RE.match(text) and text.lstrip()[:1].isdigit() and "#" not in text:
            return  # a row of another tool's table (nccl-tests): no settings, no problem in it
        if _RULE_RE.match(text):
            if state.draft is not None and state.draft.rows:
                state.close(complete=True)
            return
        problem = problem_in(text)
        if problem is not None:
            state.outcome.warn(f"{origin}:{number}", problem)
            return
        state.learn(text)
        if state.test is None:
            state.test = test_in_text(text)

    def finish(self) -> ParseOutcome:
        """The tables read (a table still open is closed as cut)."""
        state = self.state
        if state.draft is not None and state.draft.rows:
            state.outcome.warn(
                f"{self.origin}:{state.draft.line}",
                f"the table ends without perftest's closing rule after {len(state.draft.rows)}"
                " rows (the run stopped or the log is cut)",
            )
        state.close(complete=False)
        return state.outcome


def parse_perftest_text(
    lines: Iterable[tuple[int, str]], origin: str, file_test: str | None = None
) -> ParseOutcome:
    """Read every perftest result table in a log (see the module docstring for the layouts);
    ``lines`` is read once, in order (a generator streams)."""
    reader = PerftestTextReader(origin, file_test)
    for number, raw in lines:
        reader.feed(number, raw)
    return reader.finish()
