"""What a benchmark log holds once read: runs (one table each) and their measurements.

A *run* is one table of one program invocation (an ``all_reduce_perf`` sweep, an ``ib_write_bw -a``
sweep); a *measurement* is one row of it. Values keep the tool's own units in their names:
nccl-tests bandwidths in GB/s (10**9 B/s), perftest bandwidths in Gb/s (10**9 bit/s).

>>> m = MeasurementRecord(file="a.log", line=40, run=0, tool="nccl-tests", flavor="nccl-tests",
...     test="all_reduce", size_bytes=1 << 30, time_us=9000.0, algbw_GBps=119.3,
...     busbw_GBps=223.7)
>>> m.quantity, m.higher_is_better
('busbw_GBps', True)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabricplan.model.base import Frozen

Tool = Literal["nccl-tests", "perftest"]
Flavor = Literal["nccl-tests", "rccl-tests", "perftest"]
Placement = Literal["out_of_place", "in_place"]
TechnologyHint = Literal["infiniband", "roce", "roce_v1", "roce_v2", "socket"]
"""What a log says about the fabric: perftest ``Link type``, NCCL's ``NET/IB ... /RoCE`` device
list, ``NCCL_IB_GID_INDEX``; ``socket`` when NCCL fell back to TCP."""


class MeasurementRecord(Frozen):
    """One row of a benchmark table."""

    file: str
    line: int
    """1-based line of the row (0 for JSON files without line structure)."""
    run: int
    """Index of the run (table) within its file."""
    tool: Tool
    flavor: Flavor
    test: str
    """``all_reduce`` ... (fabricplan's collective names: nccl-tests ``alltoall`` is ``all_to_all``)
    or perftest ``write_bw``, ``read_lat`` ...; ``unknown`` when the log does not say."""
    size_bytes: int
    time_us: float
    """nccl-tests: time of one operation. perftest: latency, or size / average bandwidth."""
    placement: Placement = "out_of_place"
    """Which nccl-tests columns the main values come from (in-place only when there is no other)."""
    algbw_GBps: float | None = None  # noqa: N815 - nccl-tests unit
    busbw_GBps: float | None = None  # noqa: N815
    in_place_time_us: float | None = None
    in_place_busbw_GBps: float | None = None  # noqa: N815
    wrong: float | None = None
    """nccl-tests ``#wrong`` (wrong elements); ``None`` when not checked or an older format."""
    bw_gbps: float | None = None
    """perftest average bandwidth."""
    bw_peak_gbps: float | None = None
    msg_rate_mpps: float | None = None
    latency_us: float | None = None
    """perftest typical (median) latency; ``t_avg`` for duration runs."""
    latency_min_us: float | None = None
    latency_p99_us: float | None = None
    bidirectional: bool = False
    ranks: int | None = None
    nodes: int | None = None
    dtype: str | None = None
    redop: str | None = None

    @property
    def quantity(self) -> str:
        """The field a comparison with the model looks at."""
        if self.tool == "nccl-tests":
            return "busbw_GBps"
        return "latency_us" if self.latency_us is not None else "bw_gbps"

    @property
    def value(self) -> float:
        """The measured value of :attr:`quantity`."""
        found = getattr(self, self.quantity)
        return float(found) if found is not None else float("nan")

    @property
    def higher_is_better(self) -> bool:
        return self.quantity != "latency_us"


class RunRecord(Frozen):
    """One table of one program run, with what the log said around it."""

    index: int
    tool: Tool
    flavor: Flavor
    test: str
    line: int
    """Line of the table's header (0 for JSON)."""
    ranks: int | None = None
    nodes: int | None = None
    hosts: tuple[str, ...] = ()
    technology_hint: TechnologyHint | None = None
    hint_reason: str = ""
    env: dict[str, str] = Field(default_factory=dict)
    """``NCCL_*`` settings the log shows (``set by environment`` lines, ``-x`` flags, JSON env)."""
    complete: bool = True
    """False when the table has no closing footer (the run crashed or the log was cut)."""
    avg_busbw_GBps: float | None = None  # noqa: N815 - the footer nccl-tests prints
    mtu_bytes: int | None = None
    device: str | None = None
    qps: int | None = None


class BenchFileRecord(Frozen):
    """Everything read from one benchmark file."""

    path: str
    format: str
    """``nccl-tests text``, ``nccl-tests json``, ``rccl-tests json``, ``rccl-tests csv``,
    ``perftest text``, ``perftest json``, or several joined by ``+``."""
    runs: tuple[RunRecord, ...]
    measurements: tuple[MeasurementRecord, ...]
    warnings: tuple[str, ...] = ()
    """``file:line: what`` for what was skipped or looks wrong (NCCL WARN, #wrong, truncation)."""
