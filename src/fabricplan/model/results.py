"""What the models compute: cost, performance, operations, the evaluation and the decision."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabricplan.model.base import Frozen
from fabricplan.model.collective_name import AlgorithmName as AlgorithmName
from fabricplan.model.collective_name import CollectiveName as CollectiveName
from fabricplan.model.fabric import FabricDesign, Finding
from fabricplan.model.scenario import TechnologyName

BackendName = Literal["analytic", "flow", "packet", "fake"]
P2PTest = Literal["write_lat", "read_lat", "send_lat", "write_bw", "read_bw", "send_bw"]
RoutingName = Literal["static", "ecmp", "adaptive"]


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
    technology: TechnologyName | None = None
    """The fabric the measurements ran on; the profile applies to that technology only
    (``None``: a hand-written profile for every technology)."""
    nic: str | None = None
    """Catalog NIC the measurements ran on; the profile applies only where the spec has it."""
    switch: str | None = None
    """Catalog switch the measurements ran on; the profile applies only where the spec has it."""

    def applies_to(self, technology: str, nic: str | None, switch: str | None) -> bool:
        """Whether the profile was fitted on this technology, NIC and switch (a field left
        ``None`` matches any).

        >>> CalibrationProfile(technology="roce_v2").applies_to("infiniband", "cx7", "qm9700")
        False
        """
        return (
            (self.technology is None or self.technology == technology)
            and (self.nic is None or self.nic == nic)
            and (self.switch is None or self.switch == switch)
        )


class ParameterChange(Frozen):
    """One model parameter a calibration profile set: the model's value and the profile's."""

    name: str
    default: float | None
    """The catalog or model default (``None``: the model has no fixed default, e.g. a cost it
    leaves out)."""
    calibrated: float


class CalibrationEffect(Frozen):
    """A profile applied to one fabric: which parameters it changed and by how much."""

    source: str
    technology: str
    changes: tuple[ParameterChange, ...]
    base_latency_us_before: float | None = None
    """``base_latency_us`` without the profile (``None``: not recomputed)."""
    step_s_before: float | None = None
    """``step.step_s`` without the profile (``None``: not recomputed or no step)."""


class Estimate(Frozen):
    """A predicted value with its uncertainty band (``low <= value <= high``)."""

    value: float
    low: float
    high: float


class PerfRequest(Frozen):
    """What a backend is asked to compute for one fabric."""

    collectives: tuple[CollectiveName, ...] = ("all_reduce", "all_gather", "all_to_all")
    sizes_bytes: tuple[int, ...] = DEFAULT_SIZES_BYTES
    gpus: int | None = None
    """Ranks taking part (default: the whole cluster)."""
    p2p: bool = True
    step: bool = True
    seed: int = 0
    seeds: int | None = Field(default=None, ge=1, le=16)
    """Simulation runs per point at the flow and packet levels: the run of ``seed`` and children
    of it (:func:`fabricplan.sim.seed.spawn_seeds`); the point keeps the first run's value and
    the range over all of them (``time_us_seed_low`` / ``_high``). ``None``: the level's default
    (3 at the flow level where ECMP hashes flows, where the draw moves a ring by up to half; 1
    otherwise)."""
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
    gpu_idle_in_domain_usd: float | None = None
    """Value of the GPU time idled by NVLink-only communication: the same on every fabric,
    shown, never a difference between candidates."""
    config_risk_gpu_hours: float = 0.0
    """Expected GPU-hours lost to lossless misconfigurations over the horizon
    (:mod:`fabricplan.analytic.config_risk`)."""
    config_risk_staff_usd: float = 0.0
    config_risk_basis: str = ""


class P2PPoint(Frozen):
    """One row of a perftest-like table.

    ``*_low`` / ``*_high`` bound each predicted value by the validation residuals of its regime
    (:mod:`fabricplan.analytic.uncertainty`); ``None`` where no band was applied.
    """

    test: P2PTest
    size_bytes: int
    latency_us: float
    bw_gbps: float
    latency_us_low: float | None = None
    latency_us_high: float | None = None
    bw_gbps_low: float | None = None
    bw_gbps_high: float | None = None


class CollectivePoint(Frozen):
    """One row of an nccl-tests-like table (out-of-place)."""

    collective: CollectiveName
    size_bytes: int
    algorithm: str
    time_us: float
    algbw_GBps: float  # noqa: N815 - nccl-tests unit
    busbw_GBps: float  # noqa: N815
    time_us_low: float | None = None
    """Band of the prediction from the validation residuals of its regime (``None``: none)."""
    time_us_high: float | None = None
    algbw_GBps_low: float | None = None  # noqa: N815
    algbw_GBps_high: float | None = None  # noqa: N815
    busbw_GBps_low: float | None = None  # noqa: N815
    busbw_GBps_high: float | None = None  # noqa: N815
    time_us_seed_low: float | None = None
    """Fastest of the simulation runs over seeds (flow and packet levels with more than one
    seed, ``PerfRequest.seeds``); the band around the value covers it. ``None``: one run."""
    time_us_seed_high: float | None = None
    """Slowest of those runs."""


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
    comm_exposed_in_domain_s: float = 0.0
    """The part of ``comm_exposed_s`` whose groups never leave one NVLink domain (tensor
    parallelism on NVLink): the same on every fabric, so it is shown but not a difference."""
    assumptions: tuple[str, ...] = ()
    step_s_low: float | None = None
    """Band of ``step_s`` from the validation residuals of the communication's regimes
    (:func:`fabricplan.analytic.uncertainty.step_band`); ``None`` where no band was applied."""
    step_s_high: float | None = None
    comm_exposed_s_low: float | None = None
    comm_exposed_s_high: float | None = None
    exposed_fraction_low: float | None = None
    exposed_fraction_high: float | None = None
    gpu_hours_lost_per_year_low: float | None = None
    gpu_hours_lost_per_year_high: float | None = None
    comm_exposed_fabric_s_low: float | None = None
    """Band of :attr:`comm_exposed_fabric_s` alone (the scale-out part, the only part that
    differs between fabrics); ``None`` where no band was applied."""
    comm_exposed_fabric_s_high: float | None = None

    @property
    def comm_exposed_fabric_s(self) -> float:
        """Exposed communication that crosses the scale-out fabric."""
        return max(0.0, self.comm_exposed_s - self.comm_exposed_in_domain_s)


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
    base_latency_us_low: float | None = None
    base_latency_us_high: float | None = None
    uncertainty: str = ""
    """Where the ``*_low`` / ``*_high`` bands come from (empty: no band applied)."""
    calibration: CalibrationEffect | None = None
    """The calibration profile applied to this fabric and what it changed (``None``: none)."""


class OpsAssessment(Frozen):
    """What running this fabric asks of the team."""

    tasks: tuple[str, ...]
    """What must be configured and kept right (the lint rules and fabric services)."""
    findings: tuple[Finding, ...] = ()
    engineer_years_per_year: float = Field(ge=0)
    """The one operations model (:mod:`fabricplan.analytic.operations_effort`)."""
    hours_per_year: float = Field(default=0.0, ge=0)
    """The same effort in engineer-hours a year."""
    vendors: int = Field(ge=1)
    """Switch vendors selling the technology (not money: a constraint the user can set)."""
    cloud_availability: Literal["none", "some", "wide"] = "none"
    """How widely public clouds offer the technology (not money: a constraint)."""


class InfeasibleOption(Frozen):
    """A technology for which no fabric could be designed, and why (a design error's words)."""

    technology: TechnologyName
    code: str
    message: str


class GrowthResult(Frozen):
    """What growing one design to the spec's ``growth.target_gpus`` costs."""

    target_gpus: int
    reachable: bool
    """The same choices (technology, switch, topology, planes) build the target size."""
    added_capex_usd: float | None
    """Hardware bought for the target (items beyond today's quantities) and recabling; ``None``
    when unreachable."""
    added_items: dict[str, int] = Field(default_factory=dict)
    """Bill-of-materials items bought beyond today's quantities."""
    recabled_links: int = 0
    notes: tuple[str, ...] = ()


class GrowthRiskRecord(Frozen):
    """The growth and configuration-risk terms of a design the search priced and did not keep
    (:func:`fabricplan.evaluate.searched_growth_risk`): what a candidate's total carries in place
    of its kept design's ``growth_usd`` and ``config_risk_usd`` when the search would keep this
    design instead (the decision's price and GPU-hour flips)."""

    growth_usd: float | None
    """Added capex to reach ``growth.target_gpus`` with this design's own choices (0 without a
    growth target; ``None`` when they cannot reach it)."""
    config_risk_gpu_hours: float
    """Expected GPU-hours lost to configuration mistakes over the horizon."""
    config_risk_staff_usd: float
    """Expected staff money of configuration mistakes over the horizon."""
    growth_items: dict[str, int] = Field(default_factory=dict)
    """Items its growth buys beyond today's quantities."""


class Evaluation(Frozen):
    """Everything known about one candidate fabric."""

    technology: TechnologyName
    design: FabricDesign
    cost: CostBreakdown
    performance: PerformanceResult
    ops: OpsAssessment
    growth: GrowthResult | None = None


class MoneyLine(Frozen):
    """One term of a candidate's money over the horizon."""

    term: Literal[
        "capex", "energy", "support", "staff", "gpu_time", "growth", "config_risk", "worth"
    ]
    usd: float
    basis: str


class OptionMoney(Frozen):
    """A candidate on the one economic scale (dollars over ``years``)."""

    technology: TechnologyName
    years: int
    capex_usd: float
    energy_usd: float
    support_usd: float
    staff_usd: float
    gpu_time_usd: float
    """Value of the GPU time the fabric idles (exposed communication across the fabric)."""
    gpu_time_in_domain_usd: float = 0.0
    """Value of the GPU time idled by NVLink-only communication: the same on every fabric,
    shown, not part of the total."""
    gpu_hours: float = 0.0
    """GPU-hours over the horizon behind ``gpu_time_usd``."""
    gpu_hour_usd: float = 0.0
    growth_usd: float = 0.0
    config_risk_usd: float = 0.0
    config_risk_gpu_hours: float = 0.0
    """GPU-hours behind the configuration risk (the rest of it is staff)."""
    worth_usd: float = 0.0
    """User-set money-equivalent (subtracted from the total)."""
    total_usd: float
    """capex + energy + support + staff + GPU time + growth + configuration risk - worth."""
    step_s: float
    step_low_s: float
    step_high_s: float
    fabric_s: float = 0.0
    """Exposed communication across the scale-out fabric (the part of the step that differs
    between options; compute and NVLink-only time are the same on every fabric)."""
    fabric_low_s: float = 0.0
    """Band of ``fabric_s`` (what the max_performance tie test combines between options)."""
    fabric_high_s: float = 0.0
    lines: tuple[MoneyLine, ...] = ()


class StepDifference(Frozen):
    """One option's step against the fastest's, and whether the model can tell them apart
    (:func:`fabricplan.analytic.uncertainty.difference_inside`)."""

    versus: TechnologyName
    """The fastest option meeting every constraint."""
    difference_s: float
    """This option's step minus the fastest's."""
    difference_pct: float
    """The difference in percent of the fastest's step (how much longer this option's is)."""
    band_s: float
    """Half-width of the band of the difference: the two options' scale-out bands combined as
    independent errors (square root of the sum of squared half-widths)."""
    band_pct: float
    """``band_s`` in percent of the fastest's step."""
    inside: bool
    """The difference is inside its band: level with the fastest on performance."""


class RankedOption(Frozen):
    technology: TechnologyName
    money: OptionMoney
    objective: float
    """What the preset ranks by (seconds for max_performance, dollars otherwise)."""
    unmet: tuple[str, ...] = ()
    """Constraints the candidate does not meet (it ranks after every candidate that does)."""
    versus_fastest: StepDifference | None = None
    """max_performance: the step against the fastest option's (``None`` for the fastest itself
    and under the other presets)."""


class FlipPoint(Frozen):
    """The smallest change that would change the winner."""

    kind: Literal["gpu_hour", "price", "growth", "cluster_size", "team", "sharp", "configuration"]
    description: str
    value: float | None = None


class Recommendation(Frozen):
    technology: TechnologyName
    preset: str
    objective: str
    """What the preset minimises, in words."""
    ranking: tuple[RankedOption, ...]
    reasons: tuple[str, ...]
    flips: tuple[FlipPoint, ...] = ()
    not_money: tuple[str, ...] = ()
    """What the decision did not price (vendor choice, cloud availability), with its basis."""
    infeasible: tuple[InfeasibleOption, ...] = ()
    """Technologies of the spec that could not be designed (not ranked)."""
