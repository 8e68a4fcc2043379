"""What the models compute: cost, performance, operations, the evaluation and the decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabricplan.model.base import Frozen
from fabricplan.model.fabric import FabricDesign, Finding
from fabricplan.model.scenario import TechnologyName

BackendName = Literal["analytic", "flow", "packet", "fake"]
CollectiveName = Literal[
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "sendrecv"
]
P2PTest = Literal["write_lat", "read_lat", "send_lat", "write_bw", "read_bw", "send_bw"]
RoutingName = Literal["static", "ecmp", "adaptive"]
AlgorithmName = Literal["ring", "tree", "nvls", "nvlstree", "collnet_direct", "collnet_chain"]
"""A collective algorithm as ``NCCL_ALGO`` names it (lower case)."""


DEFAULT_SIZES_BYTES: tuple[int, ...] = tuple(2**k for k in range(3, 34))
"""8 B to 8 GiB in steps of 2x, as an ``nccl-tests -b 8 -e 8G -f 2`` sweep prints."""
P2P_DEFAULT_SIZES_BYTES: tuple[int, ...] = tuple(2**k for k in range(1, 24))
"""2 B to 8 MiB in powers of two, as ``ib_write_bw -a`` sweeps."""


class CalibrationProfile(Frozen):
    """Model parameters fitted to a real cluster's measurements (``fabricplan calibrate``).

    ``None`` keeps the catalog or model default. The analytic backend honours every field.
    """

    nic_latency_ns: float | None = Field(default=None, gt=0)
    """One adapter's latency (per side)."""
    switch_latency_ns: float | None = Field(default=None, gt=0)
    """Port-to-port latency of one switch hop."""
    nic_bw_efficiency: float | None = Field(default=None, gt=0, le=1)
    """Achieved share of the payload line rate on a large point-to-point transfer."""
    nvlink_bw_efficiency: float | None = Field(default=None, gt=0, le=1)
    """Achieved share of the NVLink bandwidth inside a node."""
    collective_efficiency: float | None = Field(default=None, gt=0, le=1)
    """Achieved share of the algorithm's bound for large collectives (protocol, kernels)."""
    collective_latency_us: float | None = Field(default=None, ge=0)
    """Fixed software cost per collective step (kernel launch, protocol handshakes)."""
    source: str = ""
    """What it was fitted from (files, date)."""


class PerfRequest(Frozen):
    """What a backend is asked to compute for one fabric."""

    collectives: tuple[CollectiveName, ...] = ("all_reduce", "all_gather", "all_to_all")
    sizes_bytes: tuple[int, ...] = DEFAULT_SIZES_BYTES
    gpus: int | None = None
    """Ranks taking part (default: the whole cluster)."""
    p2p: bool = True
    step: bool = True
    seed: int = 0
    calibration: CalibrationProfile | None = None
    routing: dict[TechnologyName, RoutingName] = Field(default_factory=dict)
    """Routing per technology instead of its default (e.g. ``{"roce_v2": "adaptive"}`` on switches
    that support it); technologies not named keep their catalog default."""
    algorithm: AlgorithmName | None = None
    """Force one algorithm for every collective, as ``NCCL_ALGO`` does (NCCL then still picks the
    protocol); ``None`` lets the model pick as NCCL's tuner would. all_to_all and sendrecv are
    point-to-point and ignore it."""
    in_network_reduction: bool | None = None
    """Use the switches' in-network reduction (SHARP: NCCL's CollNet algorithms and NVLS across
    domains). ``None`` uses it wherever the technology and the switch have it, as a tuned SuperPOD
    runs (``NCCL_COLLNET_ENABLE=1``); ``False`` turns it off, as a plain NCCL run (the default of
    ``NCCL_COLLNET_ENABLE`` is off); ``True`` requires it."""
    p2p_switch_hops: int | None = Field(default=None, ge=0)
    """Switches between the two perftest hosts (1: two hosts on one leaf); ``None`` takes the
    longest path inside the requested ``gpus`` (the design's worst case for the whole cluster)."""


class CostLine(Frozen):
    """One priced line of the bill of materials."""

    item: str
    kind: str
    quantity: int
    unit_price_usd: float
    total_usd: float
    basis: str
    """Where the unit price came from (price book basis or ``user``)."""


class CostBreakdown(Frozen):
    """Capex, power and TCO of one fabric."""

    capex_usd: float
    lines: tuple[CostLine, ...]
    power_w: float
    """Scale-out network power: switches, NICs and optics (before PUE)."""
    power_lines: dict[str, float] = Field(default_factory=dict)
    energy_usd_per_year: float
    support_usd_per_year: float
    operations_usd_per_year: float
    opex_usd_per_year: float
    years: int
    tco_usd: float
    per_gpu_usd: float
    """TCO per GPU."""
    capex_per_bisection_tbps_usd: float
    assumptions: tuple[str, ...] = ()
    gpu_idle_usd: float | None = None
    """Value of the GPU time spent waiting on exposed communication over the horizon (GPU-hours
    lost a year x years x the price book's ``gpu-hour-<node>``); ``None`` when unknown."""
    tco_with_gpu_idle_usd: float | None = None
    """``tco_usd + gpu_idle_usd``: what the network choice costs, counting the GPUs it idles."""


class P2PPoint(Frozen):
    """One row of a perftest-like table."""

    test: P2PTest
    size_bytes: int
    latency_us: float
    bw_gbps: float


class CollectivePoint(Frozen):
    """One row of an nccl-tests-like table (out-of-place)."""

    collective: CollectiveName
    size_bytes: int
    algorithm: str
    time_us: float
    algbw_GBps: float  # noqa: N815 - nccl-tests unit
    busbw_GBps: float  # noqa: N815


class StepTimeResult(Frozen):
    """A training step split into compute and the communication left exposed."""

    compute_s: float
    comm_total_s: float
    comm_exposed_s: float
    step_s: float
    comm_by_dimension_s: dict[str, float]
    """Communication time per parallel dimension (tp, pp, dp, ep) before overlap."""
    exposed_fraction: float
    gpu_hours_lost_per_year: float
    """GPU-hours a year spent waiting on exposed communication at 100 % utilisation."""
    assumptions: tuple[str, ...] = ()


class PerformanceResult(Frozen):
    """Performance of one fabric from one backend."""

    backend: BackendName
    technology: TechnologyName
    base_latency_us: float
    """Small-message one-way latency across the worst-case path (write_lat, 2 bytes)."""
    p2p: tuple[P2PPoint, ...] = ()
    collectives: tuple[CollectivePoint, ...] = ()
    step: StepTimeResult | None = None
    notes: tuple[str, ...] = ()


class OpsAssessment(Frozen):
    """What running this fabric asks of the team."""

    tasks: tuple[str, ...]
    """What must be configured and kept right."""
    findings: tuple[Finding, ...] = ()
    burden: float = Field(ge=0, le=1)
    """0 = nothing special to run, 1 = hardest; weighted by the team's experience."""
    engineer_years_per_year: float = Field(ge=0)
    vendors: int = Field(ge=1)
    ecosystem_fit: float = Field(ge=0, le=1)


class InfeasibleOption(Frozen):
    """A technology for which no fabric could be designed, and why (a design error's words)."""

    technology: TechnologyName
    code: str
    message: str


class Evaluation(Frozen):
    """Everything known about one candidate fabric."""

    technology: TechnologyName
    design: FabricDesign
    cost: CostBreakdown
    performance: PerformanceResult
    ops: OpsAssessment


class CriterionScore(Frozen):
    criterion: str
    raw: float
    """The criterion's own figure (seconds, dollars, ...)."""
    unit: str
    score: float = Field(ge=0, le=1)
    """1 = best among the candidates."""
    weight: float


class RankedOption(Frozen):
    technology: TechnologyName
    total: float
    scores: tuple[CriterionScore, ...]


class FlipPoint(Frozen):
    """The smallest change that would change the winner."""

    kind: Literal["weight", "price", "cluster_size", "team"]
    description: str
    value: float | None = None


class Recommendation(Frozen):
    technology: TechnologyName
    ranking: tuple[RankedOption, ...]
    reasons: tuple[str, ...]
    flips: tuple[FlipPoint, ...] = ()
    weights: dict[str, float] = Field(default_factory=dict)
    infeasible: tuple[InfeasibleOption, ...] = ()
    """Technologies of the spec that could not be designed (not ranked)."""
