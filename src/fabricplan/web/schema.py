"""The web API's request and response bodies.

Requests are checked here, at the edge: types, ranges and list lengths by pydantic (a bad field is
one 422 line naming it), the cluster spec by :mod:`fabricplan.spec` exactly as the CLI checks a spec
file. Responses are the CLI's ``--format json`` documents; their models below describe them in the
OpenAPI schema (the parts come from :mod:`fabricplan.model.results`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from fabricplan.lint.reading.config_file import DeviceType
from fabricplan.model.base import Frozen
from fabricplan.model.results import (
    AlgorithmName,
    CalibrationProfile,
    CollectiveName,
    CostBreakdown,
    GrowthResult,
    InfeasibleOption,
    OpsAssessment,
    PerformanceResult,
    Recommendation,
)
from fabricplan.model.results import RoutingName as PerfRoutingName
from fabricplan.model.scenario import TechnologyName
from fabricplan.sim.mechanism import RoutingName as SimRoutingName
from fabricplan.sim.run_options import PatternName, RunCongestionControl

MAX_SIZES = 64
"""Message sizes one ``perf`` request may ask for (nccl-tests' 8 B-8 GiB sweep has 31)."""
MAX_SIZE_BYTES = 2**40
"""The largest message size asked for (1 TiB; nccl-tests runs stop at a few GiB)."""
MAX_FILES = 64
"""Files in one lint, check-bench or calibrate request."""
MAX_FILE_NAME_CHARS = 200
MAX_SEED = 2**32 - 1

SPEC_DESCRIPTION = (
    "The cluster spec: the YAML file's structure as JSON (see `fabricplan init`). A request may"
    " instead carry the YAML text itself with content type application/yaml."
)


class WebModel(Frozen):
    """The base of the server's request and response models: built with their classes, when the
    server starts (FastAPI reads them then), not deferred to first use as the library's are
    (:class:`~fabricplan.model.base.Frozen`): a deferred model inside a route's body parameter
    makes pydantic warn that the parameter's alias is ignored."""

    model_config = ConfigDict(defer_build=False)


class SpecRequest(WebModel):
    """A cluster spec, for ``design``, ``cost`` and ``compare``."""

    spec: dict[str, Any] = Field(description=SPEC_DESCRIPTION)


class CompareRequest(SpecRequest):
    """``compare``: design, price, model and decide (the analytic model)."""

    calibration: CalibrationProfile | None = None
    """A profile from ``calibrate`` to use instead of the model defaults."""


class PerfRequestBody(SpecRequest):
    """``perf``: nccl-tests-like (or perftest-like with ``p2p``) predictions per technology."""

    collectives: tuple[CollectiveName, ...] = Field(
        default=("all_reduce",), min_length=1, max_length=6
    )
    sizes_bytes: list[int] | None = Field(default=None, min_length=1, max_length=MAX_SIZES)
    """Message sizes in bytes (default: 8 B to 8 GiB, or perftest's 2 B to 8 MiB with ``p2p``)."""
    gpus: int | None = Field(default=None, ge=1)
    p2p: bool = False
    routing: dict[TechnologyName, PerfRoutingName] = Field(default_factory=dict)
    algorithm: AlgorithmName | None = None
    sharp: bool | None = None
    hops: int | None = Field(default=None, ge=0, le=8)


class SimulateRequest(SpecRequest):
    """A simulation job: one traffic pattern on every technology's fabric (``simulate``)."""

    backend: Literal["flow", "packet"] = "flow"
    pattern: PatternName = "training_step"
    size_bytes: int | None = Field(default=None, ge=1, le=MAX_SIZE_BYTES)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    seeds: int = Field(default=1, ge=1, le=8)
    routing: SimRoutingName | None = None
    congestion_control: RunCongestionControl | None = None
    senders: int | None = Field(default=None, ge=1, le=4096)
    jobs: int = Field(default=1, ge=1, le=64)
    placement: Literal["packed", "fragmented"] = "packed"
    qps: int = Field(default=1, ge=1, le=16)
    background_load: float = Field(default=0.0, ge=0.0, le=1.0)
    background_us: float = Field(default=1000.0, ge=0.0, le=1e6)
    fail_links: int = Field(default=0, ge=0, le=1024)
    fail_switches: list[str] = Field(default_factory=list, max_length=16)
    tolerance: float = Field(default=0.02, ge=0.0, le=1.0)
    time_limit_s: float = Field(default=120.0, gt=0)
    """Wall-clock limit of the job; the server's own limit caps it (422 above)."""


class SweepRequest(SpecRequest):
    """A sweep job (analytic): the spec varied along ``vary`` as ``fabricplan sweep --vary`` does;
    the rows stay in the job's result (no results file on the server)."""

    vary: list[str] = Field(min_length=1, max_length=8)
    """``KEY=VALUES`` items, e.g. ``cluster.gpus=512..4096x2`` (docs/sweep.md)."""
    seeds: int = Field(default=1, ge=1, le=4)
    base_seed: int = Field(default=0, ge=0, le=MAX_SEED)
    size_bytes: int | None = Field(default=None, ge=1, le=MAX_SIZE_BYTES)
    """Message size of the collective columns (default: the sweep's)."""


class RoceConfigRequest(SpecRequest):
    """``roce-config``: the baseline lossless configuration of the spec's RoCE fabric."""

    vendor: Literal["sonic", "nvue", "eos"] = "sonic"


class UploadedFile(WebModel):
    """A file's name (used in messages only, never as a path) and its text."""

    name: str = Field(min_length=1, max_length=MAX_FILE_NAME_CHARS)
    text: str


class LintRequest(WebModel):
    """``lint``: configuration files checked as one fabric."""

    files: list[UploadedFile] = Field(min_length=1, max_length=MAX_FILES)
    device_type: DeviceType = "auto"
    pfc_priorities: list[int] | None = Field(default=None, max_length=8)
    roce_dscp: int | None = Field(default=None, ge=0, le=63)
    cnp_dscp: int | None = Field(default=None, ge=0, le=63)


class CheckBenchRequest(WebModel):
    """``check-bench``: benchmark logs, judged against the model when a spec is given."""

    files: list[UploadedFile] = Field(min_length=1, max_length=MAX_FILES)
    spec: dict[str, Any] | None = Field(default=None, description=SPEC_DESCRIPTION)
    technology: TechnologyName | None = None
    op: str | None = Field(default=None, max_length=40)
    gpus: int | None = Field(default=None, ge=1)
    calibration: CalibrationProfile | None = None
    band: float = Field(default=0.15, ge=0.0, le=0.9)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    min_busbw_GBps: float | None = Field(default=None, ge=0.0)  # noqa: N815  (GB/s, as nccl-tests)
    min_bw_gbps: float | None = Field(default=None, ge=0.0)
    min_size_bytes: int = Field(default=0, ge=0)


class CalibrateRequest(WebModel):
    """``calibrate``: the model's free parameters fitted to benchmark logs of one fabric."""

    files: list[UploadedFile] = Field(min_length=1, max_length=MAX_FILES)
    spec: dict[str, Any] = Field(description=SPEC_DESCRIPTION)
    technology: TechnologyName | None = None
    op: str | None = Field(default=None, max_length=40)
    gpus: int | None = Field(default=None, ge=1)
    parameters: list[str] | None = Field(default=None, min_length=1, max_length=8)


# --- responses ---


class Loose(WebModel):
    """A document with more keys than listed (the CLI's JSON grows; clients ignore the rest)."""

    model_config = ConfigDict(frozen=True, extra="allow")


class HardwareDocument(WebModel):
    node: str
    nics: dict[str, str]
    switches: dict[str, str]


class OptionDocument(WebModel):
    """One technology's option: the parts the command computed."""

    technology: TechnologyName
    design: dict[str, Any] | None = None
    growth: GrowthResult | None = None
    """The design with per-tier ``switches`` and ``links`` and their totals (docs/output.md)."""
    cost: CostBreakdown | None = None
    performance: PerformanceResult | None = None
    ops: OpsAssessment | None = None


class OptionsDocument(WebModel):
    """The answer of ``design``, ``cost`` and ``compare`` (``--format json``)."""

    schema_version: int
    workload: dict[str, Any] | None = None
    name: str
    spec: dict[str, Any]
    hardware: HardwareDocument
    assumptions: list[str]
    options: list[OptionDocument]
    infeasible: list[InfeasibleOption]
    recommendation: Recommendation | None = None


class PerfDocument(WebModel):
    """The answer of ``perf --format json``: one record per technology and point."""

    backend: str
    gpus: int
    results: list[dict[str, Any]]
    skipped: dict[str, str] | None = None


class SpecDocument(WebModel):
    """A spec as the user wrote it (JSON and YAML) and with every default filled in."""

    spec: dict[str, Any]
    yaml: str
    effective: dict[str, Any]
    assumptions: list[str]


class FilesDocument(WebModel):
    """Generated files by name (``roce-config``)."""

    files: dict[str, str]


class LintDocument(Loose):
    """The answer of ``lint --format json``."""

    findings: list[dict[str, Any]]
    devices: list[dict[str, Any]]
    intent: dict[str, Any]
    summary: dict[str, int]


class BenchDocument(Loose):
    """The answer of ``check-bench --format json``."""

    files: list[dict[str, Any]]
    measurements: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    summary: dict[str, Any]


class CalibrationDocument(Loose):
    """The answer of ``calibrate --format json``, with the profile's YAML instead of a path."""

    technology: TechnologyName
    profile: CalibrationProfile
    profile_yaml: str
    error_before_pct: float
    error_after_pct: float


class CatalogDocument(WebModel):
    """``catalog list --format json`` and the default price book."""

    items: list[dict[str, Any]]
    prices: list[dict[str, Any]]


JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]


class JobDocument(WebModel):
    """A background job: its state, progress and, once done, its result."""

    id: str
    kind: str
    label: str
    status: JobStatus
    progress: float = Field(ge=0.0, le=1.0)
    stage: str
    created_s: float
    elapsed_s: float
    error: str | None = None
    result: dict[str, Any] | None = None


class JobList(WebModel):
    jobs: list[JobDocument]


class ErrorDocument(WebModel):
    """Every refusal: one line, as the CLI prints it, and its code."""

    error: str
    code: str
