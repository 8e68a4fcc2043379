"""A run being read: the parsers fill a :class:`RunDraft`, then freeze it into records.

>>> draft = RunDraft(tool="perftest", flavor="perftest", test="write_bw", line=12)
>>> draft.rows.append({"size_bytes": 65536, "time_us": 1.4, "bw_gbps": 374.5, "line": 20})
>>> run, rows = draft.freeze("a.log", 0)
>>> run.test, rows[0].bw_gbps
('write_bw', 374.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from fabricplan.measure.measurement import (
    Flavor,
    MeasurementRecord,
    RunRecord,
    TechnologyHint,
    Tool,
)

_BUSBW_FACTOR = {"all_reduce": 2.0, "reduce_scatter": 1.0, "all_gather": 1.0, "all_to_all": 1.0}
"""busbw/algbw = k(n-1)/n (nccl-tests doc/PERFORMANCE.md): ``k`` per collective."""
RANK_INFERENCE_TOLERANCE = 0.15
"""How close k/(k - busbw/algbw) must be to an integer to trust it as the rank count."""
MAX_INFERRED_RANKS = 64
"""Beyond this, busbw/algbw printed with two decimals no longer tells n from n+1."""
MAX_WARNINGS = 200
"""Warnings one parser keeps per file; the rest are counted (:attr:`ParseOutcome.unlisted`)."""
MAX_WHOLE = 2**63
"""Counts and sizes at or above this are not a benchmark's (and overflow its int64)."""


@dataclass
class RunDraft:
    """A run while its lines are read."""

    tool: Tool
    flavor: Flavor
    test: str
    line: int
    ranks: int | None = None
    hosts: list[str] = field(default_factory=list)
    technology_hint: TechnologyHint | None = None
    hint_reason: str = ""
    env: dict[str, str] = field(default_factory=dict)
    complete: bool = True
    avg_busbw_GBps: float | None = None  # noqa: N815 - the footer nccl-tests prints
    mtu_bytes: int | None = None
    device: str | None = None
    qps: int | None = None
    bidirectional: bool = False
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def nodes(self) -> int | None:
        return len(set(self.hosts)) or None

    def infer_ranks(self) -> int | None:
        """Ranks from busbw/algbw of the row with the largest algbw (logs without device lines)."""
        factor = _BUSBW_FACTOR.get(self.test)
        rows = [r for r in self.rows if (r.get("algbw_GBps") or 0) > 0 and r.get("busbw_GBps")]
        if factor is None or not rows:
            return None
        best = max(rows, key=lambda r: float(r["algbw_GBps"]))
        ratio = float(best["busbw_GBps"]) / float(best["algbw_GBps"])
        if not 0 < ratio < factor:
            return None
        ranks = factor / (factor - ratio)
        if ranks > MAX_INFERRED_RANKS or abs(ranks - round(ranks)) > RANK_INFERENCE_TOLERANCE:
            return None
        return max(round(ranks), 2)

    def freeze(self, path: str, index: int) -> tuple[RunRecord, list[MeasurementRecord]]:
        """The run and its measurements as frozen records."""
        run = RunRecord(
            index=index,
            tool=self.tool,
            flavor=self.flavor,
            test=self.test,
            line=self.line,
            ranks=self.ranks,
            nodes=self.nodes,
            hosts=tuple(dict.fromkeys(self.hosts)),
            technology_hint=self.technology_hint,
            hint_reason=self.hint_reason,
            env=dict(self.env),
            complete=self.complete,
            avg_busbw_GBps=self.avg_busbw_GBps,
            mtu_bytes=self.mtu_bytes,
            device=self.device,
            qps=self.qps,
        )
        common: dict[str, Any] = {
            "file": path,
            "run": index,
            "tool": self.tool,
            "flavor": self.flavor,
            "test": self.test,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "bidirectional": self.bidirectional,
        }
        rows: list[MeasurementRecord] = []
        shape: frozenset[str] | None = None
        given: set[str] = set()
        for row in self.rows:
            if shape is None or frozenset(row) != shape:
                # The first row of a shape is validated whole (names, types, bounds); the rest
                # share its keys and every value comes from finite() / whole() / the reader's
                # own names, so they are built without validating each again (a million-row
                # log would spend most of its time there), sharing one set of given fields
                # (2 KiB a row otherwise).
                first = MeasurementRecord(**common, **row)
                rows.append(first)
                shape, given = frozenset(row), set(first.model_fields_set)
            else:
                rows.append(MeasurementRecord.model_construct(_fields_set=given, **common, **row))
        self.rows = []  # the records hold the values now
        return run, rows


@dataclass
class ParseOutcome:
    """What one parser found in one file."""

    format: str
    drafts: list[RunDraft] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tables_seen: list[int] = field(default_factory=list)
    """Lines of table headers, rows or not (to tell "no table" from "a table with no rows")."""

    unlisted: int = 0
    """Warnings beyond :data:`MAX_WARNINGS` (counted, not kept: a log of a million bad lines
    must not hold a million messages)."""

    def warn(self, where: str, what: str) -> None:
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(f"{where}: {what}")
        else:
            self.unlisted += 1


def finite(value: Any) -> float | None:
    """A finite, non-negative float from a token or JSON value; ``None`` otherwise.

    >>> finite("12.5"), finite("N/A"), finite("nan"), finite(-1)
    (12.5, None, None, None)
    """
    if isinstance(value, bool):
        return None
    try:
        number = float(str(value).strip().rstrip("*"))
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    return number


def whole(value: Any) -> int | None:
    """A non-negative integer from a token or JSON value; ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < MAX_WHOLE else None
    if isinstance(value, float):
        ok = math.isfinite(value) and value.is_integer() and 0 <= value < MAX_WHOLE
        return int(value) if ok else None
    text = str(value).strip()
    ok = text.isascii() and text.isdigit() and len(text) <= 19
    return int(text) if ok and int(text) < MAX_WHOLE else None
