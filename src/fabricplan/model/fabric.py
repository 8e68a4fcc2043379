"""A designed fabric: what the topology builders return and everything downstream reads.

The design is compact (counts per tier, link groups, a bill of materials), so that a 100k-GPU
fabric costs nothing to hold. The flow and packet simulators expand it into a graph with
:func:`fabricplan.topology.graph.fabric_graph`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabricplan.model.base import Frozen
from fabricplan.model.hardware import SwitchSpec
from fabricplan.model.scenario import TechnologyName, TopologyName

Severity = Literal["info", "warning", "error"]
TierName = Literal["leaf", "spine", "core"]
LinkGroupName = Literal["node_leaf", "leaf_spine", "spine_core", "management"]


class Finding(Frozen):
    """Something the user should know about a design or configuration (not a crash)."""

    code: str
    severity: Severity
    message: str


class TierDesign(Frozen):
    """One switch tier (summed over planes and groups)."""

    name: TierName
    switches: int = Field(ge=0)
    radix: int = Field(gt=0)
    """Ports per switch at the fabric's port speed."""
    down_ports: int = Field(ge=0)
    """Ports per switch facing down (hosts for a leaf)."""
    up_ports: int = Field(ge=0)
    """Ports per switch facing up (0 at the top tier)."""
    ports_used: int = Field(ge=0)
    """Cabled ports, summed over the tier's switches (not per switch)."""
    ports_free: int = Field(ge=0)
    """``switches * radix - ports_used``: unused ports summed over the tier's switches."""

    @property
    def oversubscription(self) -> float:
        """Downlinks : uplinks of this tier (1.0 at the top tier)."""
        return self.down_ports / self.up_ports if self.up_ports else 1.0


class LinkGroup(Frozen):
    """All links between two tiers, with their cable class."""

    name: LinkGroupName
    count: int = Field(ge=0)
    speed_gbps: float = Field(gt=0)
    reach_m: float = Field(gt=0)
    cable_id: str


class CableRun(Frozen):
    """Links of one group that share a length class and a cable or optic class."""

    group: LinkGroupName
    count: int = Field(ge=0)
    length_m: float = Field(gt=0)
    """Orderable length (the run rounded up to :data:`fabricplan.topology.layout` steps)."""
    cable_id: str


class BomLine(Frozen):
    """One line of the bill of materials."""

    item: str
    """Catalog or price-book id (or ``generic-...`` for figures the user gave)."""
    kind: Literal["switch", "nic", "cable", "transceiver", "fibre", "router", "appliance"]
    quantity: int = Field(ge=0)
    role: str
    length_m: float | None = None
    """Length of each cable or fibre cord on this line (copper and fibre are bought by length)."""


class DesignChoice(Frozen):
    """One point of the design space: what the designer is told to build."""

    switch: SwitchSpec
    topology: TopologyName
    tiers: int | None = None
    """``None`` for the fewest tiers that fit."""
    planes: int = Field(default=1, ge=1)

    @property
    def label(self) -> str:
        tiers = "fewest tiers" if self.tiers is None else f"{self.tiers} tiers"
        return f"{self.switch.id} {self.topology}, {tiers}, {self.planes} plane(s)"


class DesignAlternative(Frozen):
    """A design the search considered and did not keep, with its money and why it lost."""

    switch: str
    topology: TopologyName
    tiers: int | None
    """Tiers built (``None`` when it could not be built)."""
    planes: int
    spine_groups: int | None = None
    switches_total: int | None = None
    capex_usd: float | None = None
    tco_usd: float | None = None
    """Capex plus the horizon's opex (energy, support, operations)."""
    gpu_idle_usd: float | None = None
    """Value of the GPU time its exposed communication idles over the horizon, when ranked on
    it (the cheapest few by TCO are)."""
    money_usd: float | None = None
    """What the search minimised: ``tco_usd`` plus ``gpu_idle_usd`` when known."""
    more_usd: float | None = None
    """How much more than the chosen design it costs (money, or capex for a design priced on
    capex only); ``None`` when it cannot be built."""
    lost_because: str


class FabricDesign(Frozen):
    """One technology's fabric for the cluster."""

    technology: TechnologyName
    topology: TopologyName
    switch_id: str
    port_speed_gbps: float
    radix: int
    tiers: int = Field(ge=1, le=3)
    planes: int = Field(ge=1)
    spine_groups: int = Field(ge=1)
    """Independent spine groups per plane (rails, when a rail-optimized design keeps each rail
    on its own spines)."""
    nodes: int
    gpus: int
    endpoints: int
    """Host-side fabric ports (NIC ports)."""
    management_ports: int = 0
    hosts_per_leaf: int
    """Host ports one leaf serves (a scalable unit's nodes, for a rail-optimized leaf)."""
    leaves_per_pod: int
    """Leaves that share one set of spines without crossing the core (a whole group at 2 tiers)."""
    rail_aligned: bool
    """True when the NICs of one rail across nodes share leaves (rail-optimized)."""
    tier_designs: tuple[TierDesign, ...]
    link_groups: tuple[LinkGroup, ...]
    bisection_tbps: float
    """Bisection bandwidth (one direction) in Tb/s."""
    worst_case_switch_hops: int
    max_endpoints: int
    """Host ports this design's tiers, radix and oversubscription can take before another tier or
    a different switch is needed."""
    headroom_gpus: int
    """More GPUs that fit (same node model) before the design must change."""
    findings: tuple[Finding, ...] = ()
    bom: tuple[BomLine, ...] = ()
    cable_runs: tuple[CableRun, ...] = ()
    """Every link by group, orderable length and cable class, from the physical layout."""
    alternatives: tuple[DesignAlternative, ...] = ()
    """The other designs the search considered, best first, each with why it lost (empty when
    every choice was pinned or the design did not come from the search)."""

    @property
    def switches(self) -> dict[str, int]:
        """Switch count per tier name (``leaf``, ``spine``, ``core``; 0 where absent)."""
        counts = {"leaf": 0, "spine": 0, "core": 0}
        for tier in self.tier_designs:
            counts[tier.name] = tier.switches
        return counts

    @property
    def links(self) -> dict[str, int]:
        """Link count per group name."""
        return {group.name: group.count for group in self.link_groups}

    def tier(self, name: TierName) -> TierDesign | None:
        for tier in self.tier_designs:
            if tier.name == name:
                return tier
        return None
