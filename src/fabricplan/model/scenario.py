"""The cluster spec as the user writes it (:class:`ScenarioSpec`) and as the rest of the code
trusts it (:class:`ValidScenario`).

Structural checks (types, ranges, unknown keys, arithmetic between fields) happen here; resolving
catalog ids happens in :mod:`fabricplan.catalog.resolve`, which returns a :class:`ValidScenario`.

>>> spec = ScenarioSpec.model_validate({
...     "cluster": {"gpus": 1024, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
...     "fabric": {"technologies": ["infiniband", "roce_v2"], "topology": "rail_optimized"},
...     "priorities": "balanced"})
>>> spec.cluster.nodes, spec.fabric.oversubscription, spec.cost.years
(128, 1.0, 5)
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from fabricplan.model.base import Frozen
from fabricplan.model.hardware import (
    CableSpec,
    GpuNicPath,
    NicSpec,
    NodeSpec,
    PcieLinkSpec,
    PriceEntry,
    SwitchSpec,
    TechnologySpec,
)

TechnologyName = Literal["infiniband", "roce_v2", "roce_v1", "spectrum_x", "ddc", "uec"]
TopologyName = Literal["fat_tree", "rail_optimized"]
TopologyChoice = Literal["auto", "fat_tree", "rail_optimized"]
"""``auto``: the design search tries both topologies and keeps the cheaper (money over the
horizon); a named topology pins it."""
Experience = Literal["none", "some", "expert"]
Deployment = Literal["on_premises", "cloud", "hybrid"]
PriorityPreset = Literal[
    "balanced", "max_performance", "cost_sensitive", "cloud_hybrid", "ethernet_team"
]
SharpMode = Literal["auto", "on", "off"]
"""In-network reduction (SHARP): ``auto`` is what NCCL does without extra setup (CollNet off;
NVLS and NVLSTree where NCCL picks them), ``on`` needs the SHARP plugin and aggregation manager
(``NCCL_COLLNET_ENABLE=1``), ``off`` forbids it."""
_ON_OFF: dict[bool, SharpMode] = {True: "on", False: "off"}
"""What YAML 1.1's ``on``/``off`` (read as booleans) stand for in ``fabric.sharp``."""
RoutingChoice = Literal["ecmp", "adaptive", "static"]
CongestionControlChoice = Literal["dcqcn", "none"]
CloudAvailability = Literal["none", "some", "wide"]


class GenericSwitchSpec(Frozen):
    """A switch given by its figures, for what-if and research topologies."""

    ports: int = Field(gt=1)
    port_speed_gbps: float = Field(gt=0)
    latency_ns: float = Field(default=500.0, gt=0)
    buffer_bytes: float | None = Field(default=None, gt=0)
    power_w: float | None = Field(default=None, ge=0)
    price_usd: float | None = Field(default=None, ge=0)


class GenericNicSpec(Frozen):
    """A NIC given by its figures."""

    speed_gbps: float = Field(gt=0)
    latency_ns: float = Field(default=350.0, gt=0)
    power_w: float | None = Field(default=None, ge=0)
    price_usd: float | None = Field(default=None, ge=0)


HostCpuVendor = Literal["intel", "amd", "arm"]
"""A host CPU family as NCCL tells them apart (``NCCL_TOPO_CPU_VENDOR_*``, ``_ARCH_ARM``)."""


class HostSpec(Frozen):
    """The servers' insides where they differ from the node's catalog entry."""

    nic_slot: PcieLinkSpec | None = None
    """PCIe link each NIC sits on (e.g. ``{generation: 3, lanes: 8}``); overrides the node's."""
    gpu_nic_path: GpuNicPath | None = None
    """Path from a GPU to its closest NIC (``pix``, ``pxb``, ``p2c``, ``pxn``, ``phb``, ``sys``
    as ``nvidia-smi topo -m`` / NCCL print it); overrides the node's."""
    nvlink_domain_gpus: int | None = Field(default=None, ge=1, le=100_000)
    """GPUs of one NVLink domain as deployed, where it is smaller than the node's (a GB200 NVL72
    rack holding 16 of its 18 compute trays is a 64-GPU domain); overrides the node's."""
    cpu_vendor: HostCpuVendor = "intel"
    """The hosts' CPU as NCCL detects it (``cpuVendor`` / ``cpuArch``): on AMD x86 hosts NCCL caps
    LL across nodes at its AMD row (``llMaxBws``: 22.5 / 19.0 GB/s on 2 / more nodes, against 39.0
    / 20.4 on Intel) and counts 2 us per network post instead of 1 (``getNetOverhead``,
    ``src/graph/tuning.cc`` v2.19-v2.30); Intel and Arm (Grace) hosts take the Intel figures."""


class ClusterSpec(Frozen):
    """What is being connected."""

    gpus: int = Field(gt=0, le=10_000_000)
    gpus_per_node: int = Field(default=8, gt=0, le=1024)
    nics_per_node: int = Field(default=8, gt=0, le=64)
    nic_speed_gbps: float = Field(default=400.0, gt=0)
    gpu: str = "h100"
    """Node model id in the catalog (``a100``, ``h100``, ``h200``, ``b200``)."""
    nic: str | GenericNicSpec = "auto"
    """NIC catalog id, ``auto`` (the node's default NIC at ``nic_speed_gbps``), or figures."""
    host: HostSpec = HostSpec()

    @model_validator(mode="after")
    def _check_counts(self) -> ClusterSpec:
        if self.gpus % self.gpus_per_node:
            lower = self.gpus - self.gpus % self.gpus_per_node
            raise ValueError(
                f"cluster.gpus: must be a multiple of cluster.gpus_per_node={self.gpus_per_node}"
                f" ({self.gpus}); use {lower or self.gpus_per_node} or"
                f" {lower + self.gpus_per_node}"
            )
        if isinstance(self.nic, GenericNicSpec) and self.nic.speed_gbps != self.nic_speed_gbps:
            raise ValueError(
                f"cluster.nic.speed_gbps: differs from cluster.nic_speed_gbps"
                f" ({self.nic.speed_gbps} vs {self.nic_speed_gbps}); make them equal"
            )
        return self

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    @property
    def endpoints(self) -> int:
        """Fabric ports on the host side (one per NIC)."""
        return self.nodes * self.nics_per_node


class CableReachSpec(Frozen):
    """Cable length per tier boundary, in metres (sets the cable class and propagation delay)."""

    node_leaf_m: float = Field(default=3.0, gt=0, le=10_000)
    leaf_spine_m: float = Field(default=30.0, gt=0, le=10_000)
    spine_core_m: float = Field(default=100.0, gt=0, le=10_000)


class LosslessSpec(Frozen):
    """The lossless Ethernet (RoCE) configuration as deployed: the settings the lint rules check
    (``compare --config`` reads them from real switch and NIC configurations)."""

    pfc: bool = True
    """PFC on the RoCE priority on every hop (lint L01, L17)."""
    ecn: bool = True
    """ECN marking on the RoCE queue (lint L03, L04)."""
    congestion_control: CongestionControlChoice = "dcqcn"
    """NIC rate control reacting to ECN (lint L02, L12); ``none`` leaves only PFC."""
    pfc_headroom_bytes: Annotated[int, Field(le=1_000_000_000)] | Literal["auto"] = "auto"
    """Per-port lossless headroom: ``auto`` sizes it from cable, speed and MTU (lint L06, L07)."""
    pfc_watchdog: bool = True
    """PFC storm watchdog (lint L05)."""

    @model_validator(mode="after")
    def _check(self) -> LosslessSpec:
        if isinstance(self.pfc_headroom_bytes, int) and self.pfc_headroom_bytes <= 0:
            raise ValueError(
                f"fabric.lossless.pfc_headroom_bytes: must be positive ({self.pfc_headroom_bytes});"
                " give bytes or auto"
            )
        return self


class UecLinkSpec(Frozen):
    """Ultra Ethernet's optional link-layer features as deployed on the ``uec`` fabric (UE
    Specification 1.0, 2025-06-11: link-level retry and credit-based flow control are optional
    link-layer profiles, negotiated per link; the catalog's ``uec`` entry has both off).

    The spec's values replace the catalog entry's (:func:`deployed_technology`); one turned on
    becomes part of the technology: the design
    search then tries only switches that state it (``link_level_retry``,
    ``credit_flow_control`` in the catalog), and every level runs it by its mechanism."""

    link_level_retry: bool = False
    """LLR: every link keeps sent frames in a replay buffer and replays one that arrived with a
    bad FCS (or an uncorrectable FEC codeword) itself, one link round trip later, so a link
    error never reaches the transport (lint L24 checks that both ends agree)."""
    credit_flow_control: bool = False
    """CBFC: a link sends a frame only against credits for the receiver's buffer, so no queue
    overflows (lossless without PFC; nothing is trimmed, congestion spreads back as with IB
    credits); lint L24 checks that both ends agree."""


MAX_FRAME_ERROR_RATIO = 1e-3
"""Largest ``fabric.frame_error_ratio`` a spec may give: one frame in a thousand corrupted is
a link to take out of service (IEEE 802.3 specifies links at a bit error ratio of 1e-12 or
better, of the order of 1e-8 per 4 kB frame), not one to plan a fabric on."""


MAX_PLANES = 16
"""Most fabric planes a spec may ask for (DeepSeek's MPFT uses 8; a bound on input, not a
hardware limit)."""


class LayoutSpec(Frozen):
    """The physical layout cable lengths come from: racks in rows, trays above them.

    A run between racks is its Manhattan distance through the trays (rows apart x
    ``row_pitch_m`` plus racks apart x ``rack_width_m``) plus ``tray_drop_m`` (up from one port
    and down to the other) plus ``slack_m``; a run that stays in one rack is ``in_rack_m``.
    Rail-optimized leaves sit in a network rack in the middle of their scalable unit's node
    racks; fat-tree leaves sit in the rack of their nodes (top of rack) when those nodes fit one
    rack; spines and cores in a central network block; a three-tier pod's aggregation switches
    in the pod's middle. Defaults: see docs/models.md (designer, "Layout")."""

    nodes_per_rack: Annotated[int, Field(ge=1, le=256)] | Literal["auto"] = "auto"
    """``auto``: 4 nodes of up to 8 GPUs (the DGX H100 SuperPOD RA's 4 systems per rack,
    40.8 kW); the trays of a rack-scale NVLink domain fill its rack (18 GB200 NVL72 trays); a
    larger node fills a rack alone."""
    rack_width_m: float = Field(default=0.6, gt=0, le=5)
    row_length_racks: Annotated[int, Field(ge=1, le=10_000)] | Literal["auto"] = "auto"
    """Racks per row; ``auto``: a roughly square hall (rows x ``row_pitch_m`` about equal to
    the row length x ``rack_width_m``), between 16 and 64 racks a row."""
    row_pitch_m: float = Field(default=2.4, gt=0, le=20)
    tray_drop_m: float = Field(default=3.0, ge=0, le=20)
    slack_m: float = Field(default=1.0, ge=0, le=20)
    in_rack_m: float = Field(default=2.0, gt=0, le=10)


class FabricSpec(Frozen):
    """How the fabric should be built."""

    technologies: tuple[TechnologyName, ...] = Field(
        default=("infiniband", "roce_v2"), min_length=1
    )
    topology: TopologyChoice = "auto"
    """``auto`` searches rail-optimized and fat tree; a name pins it."""
    oversubscription: float = Field(default=1.0, ge=1.0, le=64.0)
    """Downlinks : uplinks at the leaf (1 = non-blocking), built to the port."""
    tiers: Literal["auto", 2, 3] = "auto"
    """``auto`` searches the fewest tiers that fit and three; a number pins it."""
    planes: int | Literal["auto"] = "auto"
    """Independent fabric planes (each NIC port of a node on one plane); ``auto`` searches the
    divisors of ``cluster.nics_per_node``; a number pins it."""
    switch: dict[TechnologyName, str | GenericSwitchSpec] = Field(default_factory=dict)
    """Switch per technology: a catalog id (pins it), ``auto`` (the design search tries every
    catalog switch of the family with ports at the NIC speed), or a generic switch's figures."""
    cable_reach: CableReachSpec = CableReachSpec()
    """Fixed run lengths per tier boundary; when set in the spec they replace the lengths the
    layout gives (the defaults are used only for what reads them without a design)."""
    management_ports: Annotated[int, Field(ge=0, le=1_000_000)] | Literal["auto"] = "auto"
    """Fabric ports for management appliances (UFM on InfiniBand); ``auto`` follows the RA."""
    sharp: SharpMode | dict[TechnologyName, SharpMode] = "auto"
    """In-network reduction, for every technology or per technology (see :data:`SharpMode`)."""
    lossless: LosslessSpec = LosslessSpec()
    """The lossless Ethernet configuration (technologies with PFC flow control only)."""
    routing: dict[TechnologyName, RoutingChoice] = Field(default_factory=dict)
    """Routing per technology instead of its catalog default."""
    uec: UecLinkSpec = UecLinkSpec()
    """Ultra Ethernet's optional link-layer features (technology ``uec`` only)."""
    frame_error_ratio: float = Field(default=0.0, ge=0.0, le=MAX_FRAME_ERROR_RATIO)
    """Share of data frames that arrive corrupted on each link (bit errors FEC did not
    correct), for every technology; 0: error-free links. A corrupted frame is dropped at the
    FCS check and recovered end to end by the transport, or replayed by the link under
    ``fabric.uec.link_level_retry``."""

    @field_validator("sharp", mode="before")
    @classmethod
    def _yaml_on_off(cls, value: object) -> object:
        """YAML 1.1 (PyYAML) reads a bare ``on``/``off`` as ``true``/``false``: take them as the
        words the user wrote, for every technology or per technology."""
        if isinstance(value, bool):
            return _ON_OFF[value]
        if isinstance(value, dict):
            return {k: _ON_OFF[v] if isinstance(v, bool) else v for k, v in value.items()}
        return value

    def sharp_for(self, technology: TechnologyName) -> SharpMode:
        """The SHARP mode of one technology (``auto`` where not given)."""
        if isinstance(self.sharp, dict):
            return self.sharp.get(technology, "auto")
        return self.sharp

    @model_validator(mode="after")
    def _check(self) -> FabricSpec:
        if isinstance(self.planes, int) and not 1 <= self.planes <= MAX_PLANES:
            raise ValueError(
                f"fabric.planes: must be between 1 and {MAX_PLANES} ({self.planes}); use a"
                " divisor of cluster.nics_per_node or auto"
            )
        if len(set(self.technologies)) != len(self.technologies):
            raise ValueError(
                f"fabric.technologies: lists a technology twice ({list(self.technologies)});"
                " name each once"
            )
        uec_on = self.uec.link_level_retry or self.uec.credit_flow_control
        if uec_on and "uec" not in self.technologies:
            raise ValueError(
                f"fabric.uec: sets Ultra Ethernet link features, but uec is not in"
                f" fabric.technologies ({list(self.technologies)}); add uec there or remove"
                " this key"
            )
        for tech in self.switch:
            if tech not in self.technologies:
                raise ValueError(
                    f"fabric.switch.{tech}: names a technology not in fabric.technologies"
                    f" ({list(self.technologies)}); add it there or remove this key"
                )
        return self


class CostSpec(Frozen):
    """How the fabric is priced."""

    years: int = Field(default=5, ge=1, le=20)
    energy_usd_per_kwh: float = Field(default=0.12, ge=0, le=10)
    pue: float = Field(default=1.3, ge=1.0, le=3.0)
    support_fraction_per_year: float | None = Field(default=None, ge=0, le=1)
    """Yearly support contract as a fraction of network capex; ``None`` = the price book's."""
    price_book: str | None = None
    """Path to the user's own price book (YAML), overriding the default estimates."""
    prices: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)
    """Inline price overrides: catalog id -> USD."""
    engineer_usd_per_year: float = Field(default=200_000.0, ge=0)
    """Fully loaded cost of one network engineer-year."""
    operations_engineer_years: dict[TechnologyName, float] = Field(default_factory=dict)
    """Engineer-years per year to run each technology's fabric, replacing the estimate of
    :mod:`fabricplan.analytic.operations_effort` (e.g. ``{roce_v2: 2.5}``)."""

    @model_validator(mode="after")
    def _check_operations(self) -> CostSpec:
        for tech, years in self.operations_engineer_years.items():
            if years < 0:
                raise ValueError(
                    f"cost.operations_engineer_years.{tech}: must not be negative ({years});"
                    " give 0 or more engineer-years per year"
                )
        return self


class TeamSpec(Frozen):
    """The operating team's experience."""

    infiniband: Experience = "some"
    ethernet_dcb: Experience = "some"


class GrowthSpec(Frozen):
    """The size the cluster is planned to grow to; its cost counts in the decision."""

    target_gpus: int = Field(gt=0, le=10_000_000)


class RequireSpec(Frozen):
    """Hard constraints on the fabric (what cannot be money)."""

    min_vendors: int | None = Field(default=None, ge=1, le=1000)
    """At least this many switch vendors sell the technology (second source)."""
    cloud_availability: Literal["some", "wide"] | None = None
    """The technology is offered in public clouds at least this widely (same fabric on premises
    and in the cloud)."""


class DecisionSpec(Frozen):
    """How the decision weighs what cannot be money, and the floors of the presets."""

    performance_floor: float = Field(default=0.10, ge=0, le=10)
    """``cost_sensitive``: a candidate's step may be at most this fraction longer than the
    fastest candidate's."""
    require: RequireSpec = RequireSpec()
    worth_usd: dict[TechnologyName, Annotated[float, Field(ge=-1e12, le=1e12)]] = Field(
        default_factory=dict
    )
    """Money-equivalents the user sets per technology over the horizon (vendor diversity, cloud
    portability, a team's wish): subtracted from that candidate's total, shown apart."""


class WorkloadSpec(Frozen):
    """The training job whose step time is the performance criterion."""

    model: str = "llama3-70b"
    """A preset name (see ``fabricplan catalog list``) or ``custom``."""
    params_b: float | None = Field(default=None, gt=0)
    """Parameters in billions (overrides the preset)."""
    layers: int | None = Field(default=None, gt=0)
    hidden: int | None = Field(default=None, gt=0)
    experts: int | None = Field(default=None, gt=0)
    active_experts: int | None = Field(default=None, gt=0)
    active_params_b: float | None = Field(default=None, gt=0)
    """Parameters one token passes through, in billions (mixture of experts; overrides the
    preset)."""
    sequence_length: int = Field(default=8192, gt=0)
    global_batch_tokens: int | None = Field(default=None, gt=0)
    """Tokens per optimizer step; default 4M tokens (rounded to whole sequences)."""
    precision: Literal["bf16", "fp8"] = "bf16"
    mfu: float = Field(default=0.40, gt=0, le=1)
    tp: int = Field(default=8, ge=1)
    pp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    dp: int | Literal["auto"] = "auto"
    fsdp: bool = False
    overlap: float = Field(default=0.5, ge=0, le=1)
    """Share of data-parallel communication hidden behind compute."""


class NcclSpec(Frozen):
    """The NCCL the cluster runs (its tuning tables change between releases)."""

    version: str = "2.30"
    """NCCL release, ``major.minor[.patch]`` (``"2.27"``); the analytic model uses the tuning
    tables of the newest stored release line not after it
    (:mod:`fabricplan.analytic.nccl_tuning`)."""
    qps_per_connection: int | None = Field(default=None, ge=1, le=128)
    """``NCCL_IB_QPS_PER_CONNECTION``: queue pairs per connection (``None``: NCCL's default, 1);
    each is hashed onto its own ECMP path."""
    nvls_enable: bool = True
    """``NCCL_NVLS_ENABLE``: ``false`` (``=0``) keeps NCCL off NVLink SHARP (NVLS and NVLSTree)
    even where the NVSwitch has it; ``true``: NCCL's default (``2``, on where supported)."""
    symmetric_memory: bool = False
    """The application registers its buffers as symmetric windows (``ncclCommWindowRegister``
    with ``NCCL_WIN_COLL_SYMMETRIC``; nccl-tests ``-R 2``): from NCCL 2.27 all_reduce,
    all_gather and reduce_scatter inside one NVLink domain then run NCCL's symmetric kernels
    (:mod:`fabricplan.analytic.symmetric_kernel`). ``false``: a plain run, which registers
    nothing."""

    @field_validator("version", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(
                f"nccl.version: is a number ({value}), which loses trailing zeros (2.30 reads"
                f' as 2.3); quote it, e.g. "{value}"'
            )
        return value

    @model_validator(mode="after")
    def _check_version(self) -> NcclSpec:
        if re.fullmatch(r"\d+\.\d+(\.\d+)?", self.version.strip()) is None:
            raise ValueError(
                f"nccl.version: is not an NCCL release number ({self.version!r});"
                ' give major.minor or major.minor.patch, e.g. "2.27"'
            )
        return self


class ScenarioSpec(Frozen):
    """The whole cluster spec (what a YAML file holds)."""

    name: str = "cluster"
    cluster: ClusterSpec
    fabric: FabricSpec = FabricSpec()
    cost: CostSpec = CostSpec()
    team: TeamSpec = TeamSpec()
    deployment: Deployment = "on_premises"
    priorities: PriorityPreset = "balanced"
    workload: WorkloadSpec = WorkloadSpec()
    growth: GrowthSpec | None = None
    nccl: NcclSpec = NcclSpec()
    decision: DecisionSpec = DecisionSpec()
    layout: LayoutSpec = LayoutSpec()
    """Racks and rows the cable lengths of the bill of materials come from."""

    @model_validator(mode="before")
    @classmethod
    def _no_weights(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("priorities"), dict):
            raise ValueError(
                "priorities: explicit criterion weights are no longer used (the decision is one"
                " money scale, docs/models.md 'The decision'); use a preset and set"
                " decision.worth_usd or decision.require for what is not money"
            )
        return data

    @model_validator(mode="after")
    def _check_growth(self) -> ScenarioSpec:
        if self.growth is None:
            return self
        target, per_node = self.growth.target_gpus, self.cluster.gpus_per_node
        if target < self.cluster.gpus or target % per_node:
            raise ValueError(
                f"growth.target_gpus: must be at least cluster.gpus ({self.cluster.gpus}) and a"
                f" multiple of cluster.gpus_per_node={per_node} ({target}); give the size the"
                " cluster will grow to"
            )
        return self


class ValidScenario(Frozen):
    """A spec whose catalog references are resolved; everything after trusts it."""

    spec: ScenarioSpec
    node: NodeSpec
    nics: dict[TechnologyName, NicSpec]
    switches: dict[TechnologyName, SwitchSpec]
    technologies: dict[TechnologyName, TechnologySpec]
    cables: tuple[CableSpec, ...]
    """Every cable and optic the designer may choose from (catalog order)."""
    fabric_elements: dict[TechnologyName, SwitchSpec] = Field(default_factory=dict)
    """The cell switch of a scheduled fabric's spine, per technology with
    ``fabric_element_asics`` (``ddc``); absent for every other technology."""
    switch_candidates: dict[TechnologyName, tuple[SwitchSpec, ...]] = Field(default_factory=dict)
    """Switches the design search tries per technology: the pinned one alone, or every catalog
    switch of the family with a port mode at the NIC speed (``switches`` holds the default pick,
    and after the search the chosen one)."""
    prices: dict[str, PriceEntry]
    assumptions: tuple[str, ...] = ()
    """Defaults the resolver chose, said in words (shown in every output)."""


def deployed_technology(
    tech: TechnologySpec, name: TechnologyName, fabric: FabricSpec
) -> TechnologySpec:
    """The technology as the spec deploys it: the catalog entry with the optional features the
    spec turns on (``fabric.uec`` on ``uec``: link-level retry, and credit-based link flow
    control in place of none).

    >>> from fabricplan.catalog.loader import load_catalog
    >>> uec = load_catalog().get_typed("uec", TechnologySpec)
    >>> fabric = FabricSpec(technologies=("uec",), uec={"credit_flow_control": True})
    >>> deployed = deployed_technology(uec, "uec", fabric)
    >>> uec.link_flow_control, deployed.link_flow_control, deployed.link_level_retry
    ('none', 'credit', False)
    """
    if name != "uec":
        return tech
    link = fabric.uec
    flow_control = "credit" if link.credit_flow_control else tech.link_flow_control
    return tech.model_copy(
        update={"link_level_retry": link.link_level_retry, "link_flow_control": flow_control}
    )
