"""Compare the analytic performance model with published nccl-tests and perftest results.

The reference set (``tests/data/validation/reference.yaml``) holds public measurements, each with
its source, date, the quoted table row and the hardware it ran on. For every row this script builds
a cluster spec of that hardware, designs the fabric, asks the analytic backend for the same
collective (or perftest test) at the same size and rank count, and prints measured, predicted and
the error. Bounds (vendor pass thresholds) are checked as pass or fail instead of scored.

Like for like, through the public request (:class:`PerfRequest`): in-network reduction (SHARP)
only where the run enabled CollNet (``in_network_reduction``); a forced ``NCCL_ALGO`` asks the
model for that algorithm (``algorithm``); a perftest pair is two hosts one switch apart
(``p2p_switch_hops=1``).

Usage::

    .venv/bin/python benchmarks/validation.py                 # print the comparison table
    .venv/bin/python benchmarks/validation.py --write-doc     # also write docs/validation.md
    .venv/bin/python benchmarks/validation.py --write-bands   # regenerate the uncertainty bands

Rows are scored per regime (:mod:`fabricplan.analytic.uncertainty`): small-message latency
(collectives below 64 KiB, perftest ``*_lat``), mid-size (64 KiB to 64 MiB) and bandwidth (64 MiB
and up, perftest ``*_bw``). Goals (issue 11): median absolute error <= 10 % on bandwidth rows and
<= 20 % on small-message latency rows, over rows whose status is ``reference``. The test suite
gates the medians at :data:`BANDWIDTH_GATE_PCT` / :data:`LATENCY_GATE_PCT` (the model as it
stands, so a change that makes it worse fails). ``--write-bands`` stores the spread of
measured over predicted performance per regime in ``analytic/data/uncertainty_bands.yaml``; a
test checks the stored bands match the current model, so a model change reruns it.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabricplan.analytic.uncertainty import (
    BANDS_FILE,
    BANDS_FILES,
    BandLevel,
    BandTable,
    Regime,
    Residual,
    band_table,
    bands_yaml,
    regime_of_p2p,
    regime_of_size,
)
from fabricplan.cli.guard import write_atomic
from fabricplan.errors import FabricPlanError, SpecError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import AlgorithmName, PerformanceResult, PerfRequest
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.units import format_size

ROOT = Path(__file__).resolve().parents[1]
DATA_PATH = ROOT / "tests" / "data" / "validation" / "reference.yaml"
DOC_PATH = ROOT / "docs" / "validation.md"
BANDS_PATH = ROOT / "src" / "fabricplan" / "analytic" / "data" / BANDS_FILE
BANDS_PATHS: dict[BandLevel, Path] = {
    level: ROOT / "src" / "fabricplan" / "analytic" / "data" / name
    for level, name in BANDS_FILES.items()
}
"""Where ``--write-bands`` stores each level's bands (the flow level's from the same rows run
at the flow level)."""

BANDWIDTH_TARGET_PCT = 10.0
"""Goal for the median absolute error on bandwidth rows (issue 11)."""
LATENCY_TARGET_PCT = 20.0
"""Goal for the median absolute error on small-message latency rows (issue 11)."""
BANDWIDTH_GATE_PCT = 10.0
"""Regression gate of the test suite on the bandwidth median (tests/test_validation_data.py): the
goal; the model met it when the gate was set (6.1 % over 22 rows)."""
LATENCY_GATE_PCT = 17.0
"""Regression gate on the small-message latency median, just above the model as it stands
(16.3 % over 38 rows). History: 14.9 % on the first 20 latency rows (all A100 and ConnectX
perftest); 24.0 % over 33 once the H100 rows at 2 and 4 nodes (NVIDIA/nccl-tests #309) and the
GB200 rows (Oracle) joined; 20.2 % over 30 with LL and LL128 NVLink stages cut-through and the GCP
H200 run shown, not scored (a tuner plugin chose its algorithms); 16.1 % once the OCI A100 rows
ran on the AMD hosts their shape's NCCL topology file names (NCCL's AMD LL ceiling), trees ran
all 640 threads (2.22+) and the OCI GB200 run kept off NVLS as its manifest says
(``NCCL_NVLS_ENABLE=0``); 14.8 % over 32 once the 256-GPU A100 run (NVIDIA/nccl #652) was scored
under the rule every user report follows (hardware stated, nobody calls the run faulty); the
model was not changed; 15.0 % over 35 with three rows of a 2-node H100 run on Nebius VMs (dstack's
Nebius cluster example); 16.3 % over 38 with the first B200 small-message rows (2 x 8 B200 on a
Lambda cluster, dstack's Lambda example: the model and NCCL 2.26's tuner, which has no
Blackwell-specific latency, both 18-29 % under). The misses are reported per row in
docs/validation.md, beside NCCL's own estimate; no constant was fitted to them."""
MID_GATE_PCT = 9.0
"""Regression gate on the mid-size median (64 KiB to 64 MiB), just above the model as it stands
(7.7 % over 7 rows): 35.2 % before LL and LL128 NVLink stages were modelled cut-through, 27.2 %
after, 21.8 % with NCCL 2.25+'s ring LL128 per-channel cap, 7.7 % with NVLSTree's pipeline."""
FLOW_LATENCY_GATE_PCT = LATENCY_GATE_PCT
"""Regression gate on the flow level's small-message latency median (the same rows run at the
flow level): the analytic model's gate, since below 64 KiB the flow level keeps the analytic
model's protocol, algorithm and pipeline (``sim.performance.bound_time_us``). 28.5 % over 38 rows
before it did (every row at its 8-byte time plus the fabric's line-rate transfer), 16.3 % after."""
FLOW_MID_GATE_PCT = MID_GATE_PCT
"""Regression gate on the flow level's mid-size median: the analytic model's gate, since where
NCCL runs Simple the flow level keeps the analytic model's latency and pipeline and replaces only
its steady transfer (``sim.performance.simple_time_us``). 26.6 % over 7 rows before it did (the
8-byte time plus the simulated transfer), 6.8 % after, 7.9 % with NVLSTree's tree in place of
the ring it ran (``sim.performance.fabric_shape``)."""
FLOW_BANDWIDTH_GATE_PCT = BANDWIDTH_GATE_PCT
"""Regression gate on the flow level's bandwidth median: the goal. 6.4 % over 24 rows while its
rings crossed the network once per node (a GB200 tray: -76 % on one NVL72 rack), 4.0 % with
rings over NVLink domains bound by their NVLink edges, 5.8 % with each size's own algorithm (the
SHARP rows keep the analytic time, -4.5 to -7.6 %, where a ring's fabric time had put them
within 4 %; the 20-rack GB200 tree +27.9 %, its ring +66.1 %)."""
MIN_LATENCY_ROWS = 20
"""Small-message latency rows the scored set must keep (issue 11)."""
MIN_ROWS = 60
"""Rows the reference set must keep (issue 11)."""

PLACEHOLDER_NODE = "h100"
"""Node model used for perftest rows whose GPU is not in the catalog: perftest moves host (or
one GPU's) memory through one NIC, so the node's NVLink domain does not enter the result."""
GENERIC_SWITCH_PORTS = 64
"""Radix of the generic switch used when the catalog has no switch at a row's link speed."""

MODEL_MODULE = "fabricplan.analytic.performance"
NCCL_TESTS_TIERS = 2
"""Tiers of the fabric an nccl-tests row's job runs on: a leaf per rail and a spine layer, as the
rail-optimized clusters the rows come from are built (DGX SuperPOD reference architectures)."""

DESIGNER_MODULE = "fabricplan.topology.designer"

Technology = Literal["infiniband", "roce_v2"]
CollectiveTest = Literal[
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "sendrecv"
]
PerftestTest = Literal[
    "ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat"
]
Quantity = Literal["busbw", "time", "bandwidth", "latency"]
Unit = Literal["GB/s", "Gb/s", "us"]
Kind = Literal["measured", "expectation", "lower_bound", "upper_bound"]
Status = Literal["reference", "uncertain", "anomaly"]
SourceKind = Literal["vendor_repo", "vendor_doc", "maintainer", "user_report", "secondary"]
NcclAlgo = Literal["RING", "TREE", "COLLNETDIRECT", "COLLNETCHAIN", "NVLS", "NVLSTREE"]

MODEL_ALGORITHM_OF: dict[str, AlgorithmName] = {
    "RING": "ring",
    "TREE": "tree",
    "COLLNETDIRECT": "collnet_direct",
    "COLLNETCHAIN": "collnet_chain",
    "NVLS": "nvls",
    "NVLSTREE": "nvlstree",
}
"""``NCCL_ALGO`` value -> ``PerfRequest.algorithm``."""
ALGORITHM_UNAVAILABLE = "FP509"
"""The model's error code for a forced algorithm it cannot run on the row's hardware."""
PERFTEST_SWITCH_HOPS = 1
"""A perftest pair in the reference set is two hosts on one switch."""

COLLECTIVE_TESTS: frozenset[str] = frozenset(
    ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "sendrecv")
)
PERFTEST_P2P: dict[str, str] = {
    "ib_write_bw": "write_bw",
    "ib_read_bw": "read_bw",
    "ib_send_bw": "send_bw",
    "ib_write_lat": "write_lat",
    "ib_read_lat": "read_lat",
    "ib_send_lat": "send_lat",
}
"""perftest binary -> the model's P2PPoint.test name."""
UNIT_OF: dict[str, str] = {"busbw": "GB/s", "time": "us", "bandwidth": "Gb/s", "latency": "us"}
BANDWIDTH_QUANTITIES: frozenset[str] = frozenset(("busbw", "bandwidth"))
SCORED_KINDS: frozenset[str] = frozenset(("measured", "expectation"))


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HardwareSpec(_Record):
    """The system a reference row ran on."""

    gpu: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    """Catalog node id (``h100``, ``a100``, ...); rows whose node is not in the catalog are
    skipped, except perftest rows (see :data:`PLACEHOLDER_NODE`)."""
    gpu_name: str = Field(min_length=2)
    nodes: int = Field(gt=0)
    gpus_per_node: int = Field(gt=0)
    nics_per_node: int = Field(gt=0)
    nic: str = Field(min_length=2)
    nic_speed_gbps: float = Field(gt=0)
    switch: str = Field(min_length=2)
    nvlink_domain_gpus: int | None = Field(default=None, gt=0)
    """GPUs per NVLink domain as the run had it, where it is smaller than the node's (a GB200
    NVL72 rack holding fewer than 18 compute trays); ``None``: the catalog node's."""
    cpu_vendor: Literal["intel", "amd", "arm"] | None = None
    """The hosts' CPU as NCCL detects it (the ``vendor`` of the ``<cpu>`` elements of the shape's
    NCCL topology file, ``AuthenticAMD`` / ``GenuineIntel``), where a source states it; NCCL's
    tuner takes its LL ceiling across nodes and its cost per network post from it
    (``cluster.host.cpu_vendor``). ``None``: the spec's default (Intel)."""


class ReferenceRow(_Record):
    """One published measurement (or vendor expectation / threshold) with its source."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")
    source: str = Field(pattern=r"^https://\S+$")
    source_kind: SourceKind
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    quote: str = Field(min_length=10)
    """The table row or sentence the value is read from, as the source prints it."""
    hardware: HardwareSpec
    technology: Technology
    test: CollectiveTest | PerftestTest
    size_bytes: int = Field(gt=0)
    ranks: int = Field(gt=0)
    quantity: Quantity
    unit: Unit
    value: float = Field(gt=0)
    value_low: float | None = Field(default=None, gt=0)
    value_high: float | None = Field(default=None, gt=0)
    derivation: str = ""
    """Arithmetic from the quoted figure to ``value`` when the quote does not print it as is."""
    kind: Kind
    status: Status
    anomaly: str = ""
    """Why the source says the run is below what the hardware should do (status ``anomaly``)."""
    uncertainty: str = ""
    """What is not pinned down (status ``uncertain``)."""
    algorithm: str = Field(min_length=3)
    """NCCL algorithm or perftest mode, as stated, or marked as inferred."""
    nccl_algo: NcclAlgo | None = None
    """``NCCL_ALGO`` the run forced; the model is then asked for that algorithm."""
    collnet: bool = False
    """The run enabled CollNet (``NCCL_COLLNET_ENABLE=1``): SHARP in-network reduction."""
    nvls_enable: bool = True
    """``False`` where the run set ``NCCL_NVLS_ENABLE=0`` (no NVLS or NVLSTree): the spec says
    so (``nccl.nvls_enable``)."""
    symmetric_memory: bool = False
    """``True`` where the run registered its buffers as symmetric windows (nccl-tests ``-R 2``):
    the spec says so (``nccl.symmetric_memory``)."""
    switch_hops: int | None = Field(default=None, ge=0)
    """Switches between a perftest pair as the source states it (0: back to back); ``None``
    is :data:`PERFTEST_SWITCH_HOPS`."""
    nccl_version: str | None = Field(default=None, pattern=r"^\d+\.\d+(\.\d+)?$")
    """NCCL release the run printed (``NCCL version 2.26.2``); the model then uses that
    release's tuning tables. ``None``: the model's default release."""
    assumptions: tuple[str, ...] = ()
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> ReferenceRow:
        where = f"row {self.id}"
        if UNIT_OF[self.quantity] != self.unit:
            raise ValueError(f"{where}: {self.quantity} is given in {UNIT_OF[self.quantity]}")
        perftest = self.test in PERFTEST_P2P
        if perftest != (self.quantity in ("bandwidth", "latency")):
            raise ValueError(f"{where}: perftest gives bandwidth/latency, nccl-tests busbw/time")
        if not perftest and self.ranks > self.hardware.nodes * self.hardware.gpus_per_node:
            raise ValueError(f"{where}: more ranks than GPUs")
        low = self.value_low if self.value_low is not None else self.value
        high = self.value_high if self.value_high is not None else self.value
        if not low <= self.value <= high:
            raise ValueError(f"{where}: value outside value_low..value_high")
        if self.status == "anomaly" and not self.anomaly:
            raise ValueError(f"{where}: an anomaly row says why in 'anomaly'")
        if self.status == "uncertain" and not self.uncertainty:
            raise ValueError(f"{where}: an uncertain row says what is unknown in 'uncertainty'")
        return self

    @property
    def is_perftest(self) -> bool:
        return self.test in PERFTEST_P2P

    @property
    def is_bandwidth(self) -> bool:
        return self.quantity in BANDWIDTH_QUANTITIES

    @property
    def regime(self) -> Regime:
        """Where the row's error is scored: latency, mid or bandwidth (module docstring)."""
        if self.is_perftest:
            return regime_of_p2p(PERFTEST_P2P[self.test])
        return regime_of_size(self.size_bytes)


def load_reference(path: Path = DATA_PATH) -> list[ReferenceRow]:
    """Read and validate the reference set; ids must be unique.

    >>> rows = load_reference()
    >>> len({row.id for row in rows}) == len(rows)
    True
    """
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: the reference set is a list of rows")
    rows = [ReferenceRow.model_validate(item) for item in data]
    seen: set[str] = set()
    for row in rows:
        if row.id in seen:
            raise ValueError(f"{path}: id {row.id} appears twice")
        seen.add(row.id)
    return rows


class ComparisonRecord(_Record):
    """A reference row beside the model's prediction."""

    row: ReferenceRow
    predicted: float | None = None
    error_pct: float | None = None
    """(predicted - measured) / measured, in percent; scored rows only."""
    verdict: str
    """``scored``, ``bound met``, ``bound missed``, ``unscored: ...`` (the model has no like
    for like), ``skipped: ...`` or ``model error: ...``."""
    model_algorithm: str = ""
    assumptions: tuple[str, ...] = ()
    """Choices the comparison made beyond the row's own assumptions (generic parts)."""
    tuner_time_us: float | None = None
    """NCCL's own estimate for a collective time row: the tuner's alpha-beta line
    (``ncclTopoGetAlgoTime``, latency + size / bandwidth) of the pair it picks, with this
    fabric's path in the network step; ``None`` for other rows."""

    @property
    def tuner_error_pct(self) -> float | None:
        """(NCCL's estimate - measured) / measured, in percent."""
        if self.tuner_time_us is None or self.error_pct is None:
            return None
        return (self.tuner_time_us - self.row.value) / self.row.value * 100.0


class ValidationStats(_Record):
    """Median errors over the scored reference rows, per regime."""

    bandwidth_median_abs_error_pct: float | None
    bandwidth_rows: int
    latency_median_abs_error_pct: float | None
    latency_rows: int
    mid_median_abs_error_pct: float | None = None
    mid_rows: int = 0
    bounds_met: int
    bounds_total: int
    unscored: int
    skipped: int


ModelFunctions = tuple[
    Callable[[ValidScenario, TechnologyName], FabricDesign],
    Callable[[ValidScenario, FabricDesign, PerfRequest], PerformanceResult],
]


def model_functions(level: BandLevel = "analytic") -> ModelFunctions | None:
    """``(design_fabric, perform)`` when the modules exist, else ``None``: ``perform`` is the
    analytic model, or the flow level (``sim.run.simulated_backend("flow", ...)``: its fabric time
    simulated, latency and perftest from the analytic model)."""
    try:
        designer = importlib.import_module(DESIGNER_MODULE)
        model = importlib.import_module(MODEL_MODULE)
    except ImportError:
        return None
    design = cast(Callable[[ValidScenario, TechnologyName], FabricDesign], designer.design_fabric)
    perform = cast(
        Callable[[ValidScenario, FabricDesign, PerfRequest], PerformanceResult],
        model.analytic_performance,
    )
    if level == "flow":
        from fabricplan.sim.run import simulated_backend

        def perform(
            valid: ValidScenario, design: FabricDesign, request: PerfRequest
        ) -> PerformanceResult:
            return simulated_backend("flow", valid, design, request)

    return design, perform


def spec_data(
    row: ReferenceRow, node: str, generic_nic: bool, switch: dict[str, Any] | None
) -> dict[str, Any]:
    """The cluster spec (as a mapping) for a row's hardware at the tested node count.

    perftest rows are two hosts on one switch (a one-leaf fat tree); nccl-tests rows use a
    two-tier rail-optimized fabric: the published jobs ran on a few nodes of a larger cluster,
    whose leaves are rail-aligned (one port per node on each leaf), not on one switch holding
    every rail of the job (where SHARP's two aggregation flows per switch would bind). ``switch``
    replaces the catalog switch with a generic one given by its figures (where the catalog has
    none at the row's speed).
    """
    hw = row.hardware
    speed = hw.nic_speed_gbps
    topology = "fat_tree" if row.is_perftest else "rail_optimized"
    fabric: dict[str, Any] = {"technologies": [row.technology], "topology": topology}
    if not row.is_perftest:
        fabric["tiers"] = NCCL_TESTS_TIERS
    if row.collnet:  # the run set NCCL_COLLNET_ENABLE=1 with the SHARP plugin
        fabric["sharp"] = "on"
    if switch is not None:
        fabric["switch"] = {row.technology: switch}
    cluster: dict[str, Any] = {
        "gpus": hw.nodes * hw.gpus_per_node,
        "gpus_per_node": hw.gpus_per_node,
        "nics_per_node": hw.nics_per_node,
        "nic_speed_gbps": speed,
        "gpu": node,
        "nic": {"speed_gbps": speed} if generic_nic else "auto",
    }
    host: dict[str, Any] = {}
    if hw.nvlink_domain_gpus is not None:
        host["nvlink_domain_gpus"] = hw.nvlink_domain_gpus
    if hw.cpu_vendor is not None:
        host["cpu_vendor"] = hw.cpu_vendor
    if host:
        cluster["host"] = host
    data: dict[str, Any] = {"name": row.id, "cluster": cluster, "fabric": fabric}
    nccl: dict[str, Any] = {}
    if row.nccl_version is not None:
        nccl["version"] = row.nccl_version
    if not row.nvls_enable:
        nccl["nvls_enable"] = False
    if row.symmetric_memory:
        nccl["symmetric_memory"] = True
    if nccl:
        data["nccl"] = nccl
    return data


def valid_scenario(row: ReferenceRow) -> tuple[ValidScenario, tuple[str, ...]]:
    """Resolve a row's spec against the catalog, as the measured run had it.

    Falls back to generic parts where the catalog has no NIC or switch at the row's speed; each
    such choice is named in the returned assumptions. The switch keeps its in-network reduction:
    whether a run used it is the request's business (:func:`perf_request`).

    Raises :class:`SpecError` when the row's node model is not in the catalog (nccl-tests rows).
    """
    node, generic_nic = row.hardware.gpu, False
    switch: dict[str, Any] | None = None
    notes: list[str] = []
    speed = f"{row.hardware.nic_speed_gbps:g}G"
    while True:
        try:
            valid = parse_spec(spec_data(row, node, generic_nic, switch))
        except SpecError as exc:
            if exc.code == "FP109" and row.is_perftest and node != PLACEHOLDER_NODE:
                node = PLACEHOLDER_NODE
                notes.append(f"node {row.hardware.gpu} not in catalog: {node} as host placeholder")
            elif exc.code == "FP111" and not generic_nic:
                generic_nic = True
                notes.append(f"no catalog NIC at {speed}: generic NIC (spec defaults)")
            elif exc.code == "FP110" and switch is None:
                switch = {
                    "ports": GENERIC_SWITCH_PORTS,
                    "port_speed_gbps": row.hardware.nic_speed_gbps,
                }
                notes.append(f"no catalog switch at {speed}: generic {GENERIC_SWITCH_PORTS}-port")
            else:
                raise
            continue
        return valid, tuple(notes)


def perf_request(row: ReferenceRow) -> PerfRequest:
    """The question a row asks the model: one collective (or the p2p tests) at one size, with
    the run's ``NCCL_ALGO``, with SHARP only if the run enabled CollNet (``NCCL_COLLNET_ENABLE``
    is off by default), and a perftest pair one switch apart.

    >>> row = next(r for r in load_reference() if r.id == "cw-h100-ib-sharp-8g")
    >>> request = perf_request(row)
    >>> request.algorithm, request.in_network_reduction
    ('collnet_chain', None)
    """
    collectives = () if row.is_perftest else (cast(CollectiveTest, row.test),)
    return PerfRequest(
        collectives=collectives,
        sizes_bytes=(row.size_bytes,),
        gpus=None if row.is_perftest else row.ranks,
        p2p=row.is_perftest,
        step=False,
        algorithm=None if row.nccl_algo is None else MODEL_ALGORITHM_OF[row.nccl_algo],
        in_network_reduction=None if row.collnet else False,
        p2p_switch_hops=(
            (PERFTEST_SWITCH_HOPS if row.switch_hops is None else row.switch_hops)
            if row.is_perftest
            else None
        ),
    )


def predicted_value(row: ReferenceRow, result: PerformanceResult) -> tuple[float, str]:
    """The model's figure for the row's quantity (nearest size if the exact one is absent)."""
    if row.is_perftest:
        test = PERFTEST_P2P[row.test]
        points = [p for p in result.p2p if p.test == test]
        if not points:
            raise LookupError(f"no {test} point in the model's p2p results")
        point = min(points, key=lambda p: abs(p.size_bytes - row.size_bytes))
        value = point.bw_gbps if row.quantity == "bandwidth" else point.latency_us
        return value, f"p2p {test} @ {format_size(point.size_bytes)}"
    points_c = [c for c in result.collectives if c.collective == row.test]
    if not points_c:
        raise LookupError(f"no {row.test} point in the model's collective results")
    cpoint = min(points_c, key=lambda c: abs(c.size_bytes - row.size_bytes))
    value = cpoint.busbw_GBps if row.quantity == "busbw" else cpoint.time_us
    return value, cpoint.algorithm


def _judged(
    row: ReferenceRow, predicted: float, algorithm: str, extra: tuple[str, ...]
) -> ComparisonRecord:
    if row.kind in ("lower_bound", "upper_bound"):
        met = predicted >= row.value if row.kind == "lower_bound" else predicted <= row.value
        return ComparisonRecord(
            row=row,
            predicted=predicted,
            verdict="bound met" if met else "bound missed",
            model_algorithm=algorithm,
            assumptions=extra,
        )
    return ComparisonRecord(
        row=row,
        predicted=predicted,
        error_pct=(predicted - row.value) / row.value * 100.0,
        verdict="scored",
        model_algorithm=algorithm,
        assumptions=extra,
    )


def compare_row(row: ReferenceRow, functions: ModelFunctions) -> ComparisonRecord:
    """Run the analytic model for one row and judge it."""
    design_fabric, analytic_performance = functions
    try:
        valid, extra = valid_scenario(row)
    except SpecError as exc:
        return ComparisonRecord(row=row, verdict=f"skipped: {exc.what} ({exc.value})")
    try:
        design = design_fabric(valid, row.technology)
        result = analytic_performance(valid, design, perf_request(row))
        predicted, algorithm = predicted_value(row, result)
    except FabricPlanError as exc:
        if getattr(exc, "code", None) == ALGORITHM_UNAVAILABLE:
            return ComparisonRecord(
                row=row,
                verdict=f"unscored: NCCL_ALGO={row.nccl_algo} is not among the model's algorithms",
                assumptions=(*extra, str(exc)),
            )
        return ComparisonRecord(row=row, verdict=f"model error: {exc}", assumptions=extra)
    except LookupError as exc:
        return ComparisonRecord(row=row, verdict=f"model error: {exc}", assumptions=extra)
    return _judged(row, predicted, algorithm, extra)


def tuner_time_us(row: ReferenceRow) -> float | None:
    """NCCL's own estimate of a collective time row (:attr:`ComparisonRecord.tuner_time_us`):
    what NCCL's tuner rates the pair it picks at, before any pipeline (where a symmetric kernel
    runs, NCCL's estimate of that kernel); ``None`` for perftest, bandwidth rows and rows the
    model cannot build.

    >>> row = next(r for r in load_reference() if r.id == "nccl-tests-309-h100-ib-2n-16b")
    >>> round(tuner_time_us(row), 1)    # 6.8 + 2 x (7 x 0.6 + 1 x 5.0) us, with the fabric's path
    25.3
    """
    if row.is_perftest or row.quantity != "time":
        return None
    from fabricplan.analytic.collective import (
        collective_candidates,
        forced_candidates,
        symmetric_kernel_estimate,
    )
    from fabricplan.analytic.profile import fabric_profile
    from fabricplan.analytic.traffic import group_for
    from fabricplan.topology.designer import design_fabric

    try:
        valid, _ = valid_scenario(row)
        design = design_fabric(valid, row.technology)
        request = perf_request(row)
        profile = fabric_profile(valid, design, request)
        group = group_for(profile, row.ranks)
        test = cast(CollectiveTest, row.test)
        symmetric = symmetric_kernel_estimate(profile, group, test, row.size_bytes)
        if symmetric is not None:
            return symmetric.time_us
        candidates = forced_candidates(
            collective_candidates(profile, group, test, row.size_bytes), test, request.algorithm
        )
    except FabricPlanError:
        return None
    return min(c.time_us(row.size_bytes) for c in candidates)


def with_tuner_times(records: Sequence[ComparisonRecord]) -> list[ComparisonRecord]:
    """Scored collective time rows with NCCL's own estimate beside the model's."""
    return [
        r.model_copy(update={"tuner_time_us": tuner_time_us(r.row)})
        if r.error_pct is not None
        else r
        for r in records
    ]


def tuner_median_line(records: Sequence[ComparisonRecord]) -> str:
    """The median |error| of NCCL's own estimate over the scored latency rows it covers, beside
    the model's over the same rows: how much of the miss is NCCL's model itself."""
    rows = [
        r
        for r in scored_records(records)
        if r.row.regime == "latency" and r.tuner_error_pct is not None
    ]
    if not rows:
        return "NCCL's own tuner estimate: no scored collective latency rows"
    tuner = statistics.median(abs(r.tuner_error_pct or 0.0) for r in rows)
    model = statistics.median(abs(r.error_pct or 0.0) for r in rows)
    return (
        f"NCCL's own tuner estimate (latency + size / bandwidth of the pair it picks) on the"
        f" {len(rows)} collective latency rows: median |error| {tuner:.1f} % (the model:"
        f" {model:.1f} % on the same rows)"
    )


def pending_records(rows: Sequence[ReferenceRow]) -> list[ComparisonRecord]:
    """Records without predictions (the model is not available)."""
    return [ComparisonRecord(row=row, verdict="prediction pending") for row in rows]


def scored_records(records: Sequence[ComparisonRecord]) -> list[ComparisonRecord]:
    """Records that count: scored, status ``reference``, a measurement or an expectation."""
    return [
        r
        for r in records
        if r.error_pct is not None and r.row.status == "reference" and r.row.kind in SCORED_KINDS
    ]


def performance_ratio(record: ComparisonRecord) -> float:
    """Measured over predicted performance (bandwidth ratio, or predicted over measured time).

    >>> row = next(r for r in load_reference() if r.quantity == "time")
    >>> performance_ratio(ComparisonRecord(row=row, predicted=row.value / 2, error_pct=-50.0,
    ...     verdict="scored"))
    0.5
    """
    if record.predicted is None:
        raise ValueError(f"row {record.row.id}: no prediction")
    measured, predicted = record.row.value, record.predicted
    return measured / predicted if record.row.is_bandwidth else predicted / measured


def residual_bands(records: Sequence[ComparisonRecord]) -> BandTable:
    """The uncertainty bands the current model's residuals give (``--write-bands`` stores
    them)."""
    scored = scored_records(records)
    residuals = [
        Residual(
            regime=r.row.regime,
            technology=r.row.technology,
            ratio=performance_ratio(r),
            abs_error_pct=abs(r.error_pct or 0.0),
        )
        for r in scored
    ]
    source = f"{len(scored)} scored rows of tests/data/validation/reference.yaml"
    return band_table(residuals, source)


def _median(errors: Sequence[float]) -> float | None:
    return statistics.median(errors) if errors else None


def validation_stats(records: Sequence[ComparisonRecord]) -> ValidationStats:
    """Median absolute errors per regime over scored rows whose status is ``reference``.

    >>> validation_stats([]).bandwidth_rows
    0
    """
    scored = [(r.row.regime, abs(r.error_pct or 0.0)) for r in scored_records(records)]
    bandwidth = [error for regime, error in scored if regime == "bandwidth"]
    latency = [error for regime, error in scored if regime == "latency"]
    mid = [error for regime, error in scored if regime == "mid"]
    bounds = [r for r in records if r.verdict in ("bound met", "bound missed")]
    return ValidationStats(
        bandwidth_median_abs_error_pct=_median(bandwidth),
        bandwidth_rows=len(bandwidth),
        latency_median_abs_error_pct=_median(latency),
        latency_rows=len(latency),
        mid_median_abs_error_pct=_median(mid),
        mid_rows=len(mid),
        bounds_met=sum(r.verdict == "bound met" for r in bounds),
        bounds_total=len(bounds),
        unscored=sum(r.verdict.startswith("unscored") for r in records),
        skipped=sum(r.verdict.startswith(("skipped", "model error")) for r in records),
    )


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.1f}"


def _error(record: ComparisonRecord) -> str:
    return "-" if record.error_pct is None else f"{record.error_pct:+.1f} %"


def _tuner(record: ComparisonRecord) -> str:
    if record.tuner_time_us is None or record.tuner_error_pct is None:
        return "-"
    return f"{_number(record.tuner_time_us)} ({record.tuner_error_pct:+.1f} %)"


def _measured(row: ReferenceRow) -> str:
    prefix = {"lower_bound": ">= ", "upper_bound": "<= "}.get(row.kind, "")
    text = f"{prefix}{row.value:g}"
    if row.value_low is not None and row.value_high is not None:
        text += f" ({row.value_low:g}-{row.value_high:g})"
    return text


def table_text(records: Sequence[ComparisonRecord]) -> str:
    """A fixed-width table for the terminal."""
    header = (
        f"{'id':38} {'test':14} {'size':>6} {'ranks':>5} {'tech':10} {'measured':>14} "
        f"{'predicted':>9} {'unit':4} {'error':>8}  {'model algorithm':22} status / verdict"
    )
    lines = [header, "-" * len(header)]
    for rec in records:
        row = rec.row
        lines.append(
            f"{row.id:38} {row.test:14} {format_size(row.size_bytes):>6} {row.ranks:>5} "
            f"{row.technology:10} {_measured(row):>14} {_number(rec.predicted):>9} {row.unit:4} "
            f"{_error(rec):>8}  {rec.model_algorithm:22} {row.status} / {rec.verdict}"
        )
    return "\n".join(lines)


def _median_line(name: str, value: float | None, rows: int, target: float | None) -> str:
    if value is None:
        return f"{name}: no scored rows"
    line = f"{name}: median |error| {value:.1f} % over {rows} rows"
    if target is None:
        return line
    met = "meets" if value <= target else "misses"
    return f"{line} ({met} the goal <= {target:g} %)"


def summary_lines(stats: ValidationStats) -> list[str]:
    """The medians and bound checks in words."""
    return [
        _median_line(
            "bandwidth",
            stats.bandwidth_median_abs_error_pct,
            stats.bandwidth_rows,
            BANDWIDTH_TARGET_PCT,
        ),
        _median_line(
            "small-message latency",
            stats.latency_median_abs_error_pct,
            stats.latency_rows,
            LATENCY_TARGET_PCT,
        ),
        _median_line("mid-size", stats.mid_median_abs_error_pct, stats.mid_rows, None),
        f"vendor bounds: {stats.bounds_met} of {stats.bounds_total} met",
        f"rows without a like-for-like model figure: {stats.unscored}",
        f"rows skipped or failed in the model: {stats.skipped}",
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def bands_section(table: BandTable) -> list[str]:
    """The regimes' bands as docs/validation.md shows them."""
    out = [
        "## Uncertainty bands",
        "",
        f"The central {table.coverage:.0%} of measured over predicted performance per regime"
        f" ({table.source}), widened to at least +-{table.noise_floor:.0%}; every predicted"
        " number carries its regime's band (`*_low` / `*_high`, docs/output.md). A bandwidth"
        " `b` reads `b x low .. b x high`, a time `t` reads `t / high .. t / low`. Stored in"
        f" `src/fabricplan/analytic/data/{BANDS_FILE}` by `--write-bands`.",
        "",
        r"| regime | technology | rows | ratio low | ratio high | median \|error\| | basis |",
        "|---|---|---|---|---|---|---|",
    ]
    for band in table.bands:
        error = "-" if band.median_abs_error_pct is None else f"{band.median_abs_error_pct:.1f} %"
        out.append(
            f"| {band.regime} | {band.technology or 'all'} | {band.rows} | {band.ratio_low:.3f} |"
            f" {band.ratio_high:.3f} | {error} | {_cell(band.basis)} |"
        )
    return out


def flow_section(records: Sequence[ComparisonRecord]) -> list[str]:
    """The flow level's own scores and bands (the same rows run at the flow level)."""
    table = residual_bands(records)
    worst = sorted(scored_records(records), key=lambda r: abs(r.error_pct or 0.0), reverse=True)[:5]
    out = [
        "## Flow level",
        "",
        "The same rows run at the flow level (`compare --backend flow`): the fabric time of each"
        " collective simulated on the designed fabric (the flows of the algorithm NCCL runs:"
        " rings, or its double binary tree for Tree and NVLSTree, over NVLink domains, bound by"
        " their NVLink part and a tree by NCCL's per-channel cap, and pairwise exchanges; where"
        " NCCL reduces in the switches, CollNet or NVLS, the analytic time), perftest from the"
        " analytic model; where NCCL runs Simple, the analytic time with the simulated transfer"
        " in place of its own (NCCL's latency and pipeline kept); where it runs LL or LL128, at"
        " least the analytic time at the size (the protocol, algorithm and pipeline the"
        " simulation does not model). Its values carry these"
        " bands, not the analytic model's; the packet level carries them too (its runs agree"
        " with the flow level within 5 %, tests/test_levels_agree.py, and the rows are too large"
        " to run packet by packet). Stored in"
        f" `src/fabricplan/analytic/data/{BANDS_FILES['flow']}`.",
        "",
        *[f"- {line}" for line in summary_lines(validation_stats(records))[:3]],
        "- largest errors: "
        + ", ".join(f"{r.row.id} {r.error_pct:+.1f} % ({r.model_algorithm})" for r in worst),
        "",
        *bands_section(table)[4:],
    ]
    return out


def markdown_doc(
    records: Sequence[ComparisonRecord],
    model_available: bool,
    flow_records: Sequence[ComparisonRecord] = (),
) -> str:
    """docs/validation.md: the reference table, sources with quotes, and the comparison."""
    stats = validation_stats(records)
    out = [
        "# Validation against public measurements",
        "",
        "<!-- generated by benchmarks/validation.py --write-doc; edit"
        " tests/data/validation/reference.yaml, not this file -->",
        "",
        "The analytic model is compared with published nccl-tests and perftest results. Each row"
        " comes from a source that was read (the quote is reproduced below); what the source does"
        " not state but the comparison needs is listed as an assumption. Goals: median absolute"
        f" error <= {BANDWIDTH_TARGET_PCT:g} % on bandwidth and <= {LATENCY_TARGET_PCT:g} % on"
        " small-message latency, over rows whose status is `reference`; the test suite gates the"
        f" medians at {BANDWIDTH_GATE_PCT:g} % and {LATENCY_GATE_PCT:g} %. Rows are scored per"
        " regime: small-message latency (collectives below 64 KiB, perftest `*_lat`), mid-size"
        " (64 KiB to 64 MiB) and bandwidth (64 MiB and up, perftest `*_bw`). `anomaly` rows are"
        " runs the source itself calls too slow; they are shown, never used to tune the model."
        " `uncertain` rows lack a hardware detail. Bounds are vendor pass thresholds, checked as"
        " met or missed.",
        "",
        "Reproduce: `.venv/bin/python benchmarks/validation.py --write-doc`.",
        "",
        "The flow-level simulator is validated against the packet-level one, scenario by"
        " scenario, in [cross_validation.md](cross_validation.md).",
        "",
        "## Method",
        "",
        "- Each row becomes a cluster spec of the tested hardware at the tested node count"
        " (rail-optimized) and the analytic model is asked, through its public `PerfRequest`,"
        " for the same collective, size and rank count; a perftest pair is two hosts one switch"
        " apart (`p2p_switch_hops=1`), or as many switches as the source states"
        " (`switch_hops`, 0 for a back-to-back cable).",
        "- In-network reduction (SHARP) only where the run enabled CollNet"
        " (`NCCL_COLLNET_ENABLE=1`): `in_network_reduction=false` otherwise, because NCCL does"
        " not use SHARP unless asked. (The model's own default, for a tuned SuperPOD, is to use"
        " it wherever the switch has it.)",
        "- Where the run forced `NCCL_ALGO`, the request forces the same algorithm"
        " (`PerfRequest.algorithm`) and the model picks its protocol as NCCL's tuner would; if"
        " the model cannot run that algorithm on the hardware the row is unscored.",
        "- Where the catalog has no NIC or switch at a row's speed, a generic part at that speed is"
        " used and named under the row.",
        "",
        "## Summary",
        "",
    ]
    if model_available:
        out += [f"- {line}" for line in summary_lines(stats)]
        out.append(f"- {tuner_median_line(records)}")
        out += ["", *bands_section(residual_bands(records))]
    if flow_records:
        out += ["", *flow_section(flow_records)]
    else:
        out.append(
            "- predictions pending: the analytic model"
            f" (`{MODEL_MODULE}`, `{DESIGNER_MODULE}`) is not available yet."
        )
    out += [
        "",
        "## Rows",
        "",
        "`NCCL tuner` is NCCL's own estimate of a collective time row (its alpha-beta line for"
        " the pair it picks, with this fabric's path), and its error: where both miss alike,"
        " the residual is NCCL's model's, not a departure from it.",
        "",
        "| id | test | size | ranks (nodes x GPUs) | hardware | tech | regime | algorithm |"
        " measured | predicted | error | NCCL tuner | status / verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rec in records:
        row, hw = rec.row, rec.row.hardware
        hardware = f"{hw.gpu_name}; {hw.nics_per_node} x {hw.nic_speed_gbps:g}G ({hw.nic})"
        predicted = "pending" if rec.verdict == "prediction pending" else _number(rec.predicted)
        out.append(
            f"| {row.id} | {row.test} | {format_size(row.size_bytes)} |"
            f" {row.ranks} ({hw.nodes} x {hw.gpus_per_node}) | {_cell(hardware)} |"
            f" {row.technology} | {row.regime} | {_cell(row.algorithm)} |"
            f" {_measured(row)} {row.unit} |"
            f" {predicted} | {_error(rec)} | {_tuner(rec)} | {row.status} / {_cell(rec.verdict)} |"
        )
    out += ["", "## Sources, quotes and assumptions", ""]
    for rec in records:
        row = rec.row
        out.append(f"### {row.id}")
        out.append("")
        out.append(f"- source: <{row.source}> ({row.source_kind}, {row.date})")
        out.append(f"- switch: {row.hardware.switch}")
        for assumption in (*row.assumptions, *rec.assumptions):
            out.append(f"- assumption: {assumption}")
        if row.anomaly:
            out.append(f"- anomaly: {row.anomaly}")
        if row.uncertainty:
            out.append(f"- uncertain: {row.uncertainty}")
        if row.notes:
            out.append(f"- note: {row.notes}")
        if rec.model_algorithm:
            out.append(f"- model: {rec.model_algorithm}")
        out += ["", "```text", row.quote.rstrip(), "```", ""]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA_PATH, help="reference YAML")
    parser.add_argument("--write-doc", action="store_true", help=f"write {DOC_PATH}")
    parser.add_argument("--doc", type=Path, default=DOC_PATH, help="where --write-doc writes")
    parser.add_argument(
        "--write-bands", action="store_true", help=f"regenerate {BANDS_PATH.name} from residuals"
    )
    parser.add_argument("--bands", type=Path, default=BANDS_PATH, help="where --write-bands writes")
    parser.add_argument(
        "--flow", action="store_true", help="also score the rows at the flow level (~20 s)"
    )
    args = parser.parse_args(argv)
    rows = load_reference(args.data)
    functions = model_functions()
    if functions is None:
        print(
            f"validation: the analytic model is not available yet ({MODEL_MODULE} or"
            f" {DESIGNER_MODULE} missing); {len(rows)} reference rows loaded, predictions pending",
            file=sys.stderr,
        )
        if args.write_doc:
            write_atomic(args.doc, markdown_doc(pending_records(rows), model_available=False))
            print(f"wrote {args.doc} (predictions pending)")
            return 0
        return 1
    records = with_tuner_times([compare_row(row, functions) for row in rows])
    print(table_text(records))
    print()
    for line in summary_lines(validation_stats(records)):
        print(line)
    print(tuner_median_line(records))
    flow_records: list[ComparisonRecord] = []
    if args.write_bands or args.write_doc or args.flow:
        flow_functions = model_functions("flow")
        assert flow_functions is not None  # the analytic modules exist, so do the simulators
        flow_records = [compare_row(row, flow_functions) for row in rows]
        for line in summary_lines(validation_stats(flow_records))[:3]:
            print(f"flow level: {line}")
    if args.write_bands:
        write_atomic(args.bands, bands_yaml(residual_bands(records)))
        print(f"wrote {args.bands}")
        write_atomic(BANDS_PATHS["flow"], bands_yaml(residual_bands(flow_records)))
        print(f"wrote {BANDS_PATHS['flow']}")
    if args.write_doc:
        write_atomic(
            args.doc, markdown_doc(records, model_available=True, flow_records=flow_records)
        )
        print(f"wrote {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
