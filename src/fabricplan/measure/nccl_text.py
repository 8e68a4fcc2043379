"""nccl-tests and rccl-tests text output.

Columns are found by their names in the table header, so every layout the tools have printed reads
the same way:

- 2017: ``bytes N type op time algbw busbw res`` twice, time in milliseconds, no units line;
- 2019-2022: ``size count type redop time algbw busbw error`` (``all_gather`` without ``redop``,
  ``broadcast`` with ``root``), ``error`` holding the largest difference, not a count;
- 2022 on: ``size count type redop root time algbw busbw #wrong`` for every collective; ``-I``
  adds ``i_min i_max i_p99 i_cv%`` per group, ``-C`` says ``cputime``, timestamps may follow;
- rccl-tests: the same, or one ``in-place`` group when out-of-place is disabled.

The operation comes from ``# Collective test starting: all_reduce_perf`` (2025 on), else from the
command line echoed before the table (``./all_reduce_perf -b 8 ...``), else from the file name.
Ranks and nodes come from the ``#  Rank N ... on HOST device`` lines.

>>> text = '''# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor)
... #  Rank  0 Group  0 Pid  101 on node1 device  0 [0000:18:00] NVIDIA H100
... #                               out-of-place                in-place
... #    size    count  type redop root  time  algbw  busbw #wrong  time  algbw  busbw #wrong
... #     (B) (elements)                 (us) (GB/s) (GB/s)         (us) (GB/s) (GB/s)
...  1073741824 268435456 float sum -1 5123.0 209.59 366.79  0  5120.1 209.71 367.00  0
... # Out of bounds values : 0 OK
... # Avg bus bandwidth    : 366.9
... '''
>>> outcome = parse_nccl_text(list(enumerate(text.splitlines(), 1)), "x.log", "all_reduce")
>>> row = outcome.drafts[0].rows[0]
>>> row["size_bytes"], row["time_us"], row["busbw_GBps"], row["in_place_busbw_GBps"]
(1073741824, 5123.0, 366.79, 367.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from fabricplan.measure.draft import ParseOutcome, RunDraft, finite, whole
from fabricplan.measure.logline import (
    LogContext,
    is_run_end,
    problem_in,
    strip_prefix,
    test_in_text,
)
from fabricplan.measure.measurement import Placement
from fabricplan.units import ms_to_us

MAX_PROBLEMS_PER_FILE = 20
"""NCCL WARN and failure lines quoted one by one; the rest are counted."""

_ROW_RE = re.compile(r"^\s*\d+\s+\d+\s")
_RANK_RE = re.compile(r"^#\s*Rank\s+(\d+)\b.*?\bon\s+(\S+)\s+device\b")
_AVG_RE = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")
_BOUNDS_RE = re.compile(r"Out of bounds values\s*:\s*(\d+)")
_FOOTER_RE = re.compile(r"^\s*(?:Out of bounds values|Avg bus bandwidth)\s*:")
_RCCL_RE = re.compile(r"rccl-tests|RCCL version|\bRCCL\b|librccl")
_TIME_NAMES = ("time", "cputime")
_WRONG_NAMES = {"#wrong": "count", "error": "delta", "res": "delta"}

WrongKind = Literal["count", "delta"]


@dataclass
class _Layout:
    """Where the values of a row are, from the table header."""

    lead: dict[str, int]
    groups: list[tuple[Placement, int]]
    algbw: int
    busbw: int
    wrong: int | None
    wrong_kind: WrongKind | None
    ms: bool
    """Times in milliseconds (the 2017 layout)."""


def _layout(header: str, label: str) -> _Layout | None:
    """The layout a header line describes, or ``None`` when it is not an nccl-tests header."""
    names = header.lstrip("#").lower().split()
    starts = [i for i, name in enumerate(names) if name in _TIME_NAMES]
    if (
        not starts
        or "busbw" not in names
        or "algbw" not in names
        or names[0] not in {"size", "bytes"}
    ):
        return None
    first = starts[0]
    group = names[first : starts[1]] if len(starts) > 1 else names[first:]
    if "busbw" not in group or "algbw" not in group:
        return None
    wrong_name = next((n for n in group if n in _WRONG_NAMES), None)
    if len(starts) > 1:
        groups: list[tuple[Placement, int]] = [("out_of_place", first), ("in_place", starts[1])]
    else:
        only_in = "in-place" in label and "out-of-place" not in label
        groups = [("in_place" if only_in else "out_of_place", first)]
    lead_names = {
        "size": "size",
        "bytes": "size",
        "count": "count",
        "n": "count",
        "type": "type",
        "redop": "redop",
        "op": "redop",
        "root": "root",
    }
    lead = {lead_names[n]: i for i, n in enumerate(names[:first]) if n in lead_names}
    return _Layout(
        lead=lead,
        groups=groups,
        algbw=group.index("algbw"),
        busbw=group.index("busbw"),
        wrong=group.index(wrong_name) if wrong_name else None,
        wrong_kind=_WRONG_NAMES[wrong_name] if wrong_name else None,  # type: ignore[arg-type]
        ms=names[0] == "bytes",
    )


def _group_values(
    tokens: list[str], start: int, layout: _Layout
) -> tuple[float, float, float, float | None] | None:
    need = start + max(layout.algbw, layout.busbw)
    if len(tokens) <= need:
        return None
    time, algbw, busbw = (
        finite(tokens[start]),
        finite(tokens[start + layout.algbw]),
        finite(tokens[start + layout.busbw]),
    )
    if time is None or algbw is None or busbw is None:
        return None
    wrong = None
    if layout.wrong is not None and start + layout.wrong < len(tokens):
        wrong = finite(tokens[start + layout.wrong])
    if layout.ms:
        time = ms_to_us(time)
    return time, algbw, busbw, wrong


def _row(tokens: list[str], layout: _Layout, line: int) -> tuple[dict[str, Any] | None, str]:
    """The values of one data row, or ``None`` and why not."""
    size = whole(tokens[layout.lead.get("size", 0)])
    if size is None:
        return None, "size is not a whole number"
    values = [(place, _group_values(tokens, start, layout)) for place, start in layout.groups]
    first_place, first = values[0]
    if first is None:
        return None, "time/algbw/busbw are missing or not numbers"
    row: dict[str, Any] = {"line": line, "size_bytes": size, "placement": first_place}
    row["time_us"], row["algbw_GBps"], row["busbw_GBps"], wrong = first
    if layout.wrong_kind == "count":
        row["wrong"] = wrong
    note = ""
    if len(values) > 1:
        second = values[1][1]
        if second is None:
            note = "row is cut after the out-of-place columns"
        else:
            row["in_place_time_us"], _, row["in_place_busbw_GBps"], wrong_in = second
            if layout.wrong_kind == "count" and wrong_in:
                row["wrong"] = (row.get("wrong") or 0.0) + wrong_in
    for key in ("type", "redop"):
        index = layout.lead.get(key)
        if index is not None and index < len(tokens):
            row["dtype" if key == "type" else key] = tokens[index]
    return row, note


@dataclass
class _State:
    """The reader's position in the log."""

    origin: str
    file_test: str | None
    outcome: ParseOutcome
    context: LogContext = field(default_factory=LogContext)
    pending_test: str | None = None
    ranks: set[int] = field(default_factory=set)
    hosts: list[str] = field(default_factory=list)
    label: str = ""
    layout: _Layout | None = None
    draft: RunDraft | None = None
    last: RunDraft | None = None
    wrong_rows: int = 0
    problems: int = 0
    units_pending: bool = False

    def close(self, complete: bool) -> None:
        draft = self.draft
        if draft is not None:
            draft.complete = complete
            draft.technology_hint = self.context.technology_hint
            draft.hint_reason = self.context.hint_reason
            draft.env = dict(self.context.env)
            if self.wrong_rows:
                self.outcome.warn(
                    f"{self.origin}:{draft.line}",
                    f"{self.wrong_rows} rows report wrong elements (#wrong > 0): data corruption",
                )
            self.outcome.drafts.append(draft)
            self.last = draft
        self.draft = None
        self.layout = None
        self.wrong_rows = 0

    def end_run(self) -> None:
        self.ranks.clear()
        self.hosts = []
        self.pending_test = None

    def problem(self, line: int, text: str) -> None:
        self.problems += 1
        if self.problems <= MAX_PROBLEMS_PER_FILE:
            self.outcome.warn(f"{self.origin}:{line}", text)


def _header(state: _State, number: int, text: str) -> bool:
    layout = _layout(text, state.label)
    if layout is None:
        return False
    if state.draft is not None:
        state.outcome.warn(
            f"{state.origin}:{state.draft.line}",
            "the table ends without its footer; a new table starts",
        )
        state.close(complete=False)
    state.outcome.tables_seen.append(number)
    state.layout = layout
    state.units_pending = True
    state.draft = RunDraft(
        tool="nccl-tests",
        flavor="nccl-tests",
        test=state.pending_test or state.file_test or "unknown",
        line=number,
        ranks=len(state.ranks) or None,
        hosts=list(state.hosts),
    )
    return True


def _comment(state: _State, number: int, text: str) -> None:
    """A ``#`` line: rank list, header, units, footer."""
    rank = _RANK_RE.match(text)
    if rank is not None:
        state.ranks.add(int(rank.group(1)))
        state.hosts.append(rank.group(2))
        return
    if _header(state, number, text):
        return
    if state.units_pending and state.layout is not None and "(ms)" in text:
        state.layout.ms = True
    state.units_pending = False
    bounds = _BOUNDS_RE.search(text)
    if bounds is not None:
        if state.draft is not None:
            state.close(complete=True)
        if int(bounds.group(1)) > 0:
            state.outcome.warn(
                f"{state.origin}:{number}",
                f"nccl-tests found {bounds.group(1)} out-of-bounds values (FAILED)",
            )
        return
    avg = _AVG_RE.search(text)
    if avg is not None:
        if state.draft is not None:
            state.close(complete=True)
        if state.last is not None:
            state.last.avg_busbw_GBps = finite(avg.group(1))
        state.end_run()
        return
    if is_run_end(text):
        state.end_run()
        return
    if "out-of-place" in text or "in-place" in text:
        state.label = text
    found = test_in_text(text)
    if found is not None:
        state.pending_test = found


class NcclTextReader:
    """Reads nccl-tests / rccl-tests tables one line at a time (:meth:`feed`), holding only the
    tables' rows; :meth:`finish` gives the :class:`ParseOutcome`."""

    def __init__(self, origin: str, file_test: str | None = None) -> None:
        self.origin = origin
        self.state = _State(
            origin=origin, file_test=file_test, outcome=ParseOutcome("nccl-tests text")
        )
        self.rccl = False

    def feed(self, number: int, raw: str) -> None:
        """Read line ``number`` as the log has it."""
        self.feed_text(number, strip_prefix(raw).rstrip())

    def feed_text(self, number: int, text: str) -> None:
        """Read line ``number`` once launcher prefixes are stripped (:func:`strip_prefix`)."""
        state, origin = self.state, self.origin
        if not text.strip():
            return
        self.rccl = self.rccl or ("rccl" in text.lower() and _RCCL_RE.search(text) is not None)
        state.context.update(text)
        # The 2017 layout prints its footer without "#".
        if text.lstrip().startswith("#") or _FOOTER_RE.search(text) is not None:
            _comment(state, number, text.lstrip())
            return
        state.units_pending = False
        if state.layout is not None and state.draft is not None and _ROW_RE.match(text):
            row, note = _row(text.split(), state.layout, number)
            if row is None:
                state.outcome.warn(f"{origin}:{number}", f"row skipped: {note}")
                return
            if note:
                state.outcome.warn(f"{origin}:{number}", note)
            if row.get("wrong"):
                state.wrong_rows += 1
            if row["size_bytes"] > 0:
                state.draft.rows.append(row)
            return
        if _ROW_RE.match(text):  # a row of another tool's table (perftest): nothing for us
            return
        problem = problem_in(text)
        if problem is not None:
            state.problem(number, problem)
            return
        found = test_in_text(text)
        if found is not None:
            state.pending_test = found
        if is_run_end(text):
            state.end_run()

    def finish(self) -> ParseOutcome:
        """The tables read (a table still open is closed as cut)."""
        state, origin = self.state, self.origin
        if state.draft is not None:
            state.outcome.warn(
                f"{origin}:{state.draft.line}",
                f"the table ends without its footer after {len(state.draft.rows)} rows"
                " (the run stopped or the log is cut)",
            )
            state.close(complete=False)
        if state.problems > MAX_PROBLEMS_PER_FILE:
            state.outcome.warn(
                origin, f"{state.problems - MAX_PROBLEMS_PER_FILE} more problem lines"
            )
        if self.rccl:
            state.outcome.format = "rccl-tests text"
        for draft in state.outcome.drafts:
            draft.flavor = "rccl-tests" if self.rccl else "nccl-tests"
            if draft.ranks is None:
                draft.ranks = draft.infer_ranks()
                if draft.ranks is not None:
                    state.outcome.warn(
                        f"{origin}:{draft.line}",
                        f"no device list; {draft.ranks} ranks inferred from busbw/algbw",
                    )
        return state.outcome


def parse_nccl_text(
    lines: Iterable[tuple[int, str]], origin: str, file_test: str | None = None
) -> ParseOutcome:
    """Read every nccl-tests / rccl-tests table in a log.

    Parameters
    ----------
    lines
        ``(line number, raw line)`` pairs, read once, in order (a generator streams).
    origin
        The file name used in warnings.
    file_test
        The test the file name suggests (used when the log itself does not say).
    """
    reader = NcclTextReader(origin, file_test)
    for number, raw in lines:
        reader.feed(number, raw)
    return reader.finish()
