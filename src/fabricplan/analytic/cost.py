"""Capex, power, opex and TCO of one designed fabric.

- capex = sum over bill-of-materials lines of quantity x unit price (the scenario's price book,
  after the user's price book and inline ``cost.prices``); an item without a price counts 0 and
  says so in the assumptions;
- a fibre cord costs its base price plus its length x ``<fibre>-per-m`` (both in the price book);
- power = switches (system power without optics) + NICs + cables (power of the whole link, both
  ends) + transceivers (each module's power) from the hardware specs in the scenario, before
  PUE; fibre is passive;
- energy a year = power x PUE x 8,760 h x energy price;
- support a year = support fraction x capex (``cost.support_fraction_per_year``, else the price
  book's ``support-<switch family>`` item, else :data:`DEFAULT_SUPPORT_FRACTION_PER_YEAR`);
- operations a year = engineer-years a year (:mod:`fabricplan.analytic.operations_effort`) x
  ``cost.engineer_usd_per_year``;
- TCO = capex + years x (energy + support + operations), undiscounted.

Every figure used is written into ``CostBreakdown.assumptions`` with the spec key that changes it.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 16}, "cost": {"support_fraction_per_year": 0.1}})
>>> cost = fabric_cost(valid, _tiny_leaf_spine())
>>> cost.capex_usd == sum(line.total_usd for line in cost.lines)
True
>>> round(cost.support_usd_per_year / cost.capex_usd, 3)
0.1
"""

from __future__ import annotations

from fabricplan.analytic.config_risk import ConfigRisk
from fabricplan.analytic.operations_effort import effort_records, engineer_years_per_year
from fabricplan.errors import ModelError
from fabricplan.model.fabric import BomLine, FabricDesign, LinkGroup, TierDesign
from fabricplan.model.hardware import (
    FIBRE_PER_METRE_SUFFIX,
    Figure,
    PriceEntry,
    fibre_cord_usd,
)
from fabricplan.model.results import CostBreakdown, CostLine, StepTimeResult
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import HOURS_PER_YEAR, energy_kwh_per_year

DEFAULT_SUPPORT_FRACTION_PER_YEAR = 0.10
"""Yearly support contract as a fraction of network capex, used when neither the spec nor the
price book gives one. Estimate: hardware support contracts are commonly quoted at roughly 8-20 %
of list price a year; no citable figure was found (docs/refs.md E, F)."""

SUPPORT_ITEM_PREFIX = "support-"
"""Price-book items ``support-infiniband`` / ``support-ethernet`` hold a yearly fraction of capex
(in their ``price_usd`` field) for fabrics of that switch family."""

UNPRICED_WARNING = "WARNING: unpriced"

PASSIVE_FIBRE_W = Figure(value=0.0, basis="standard", note="passive fibre draws no power")
"""Start of the assumption written for each bill-of-materials item with no price."""


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _fibre_entry(valid: ValidScenario, line: BomLine) -> PriceEntry | None:
    """A fibre cord's price at its length: the cord plus length x ``<fibre>-per-m``."""
    base = valid.prices.get(line.item)
    if base is None or line.length_m is None:
        return base
    per_m = valid.prices.get(line.item + FIBRE_PER_METRE_SUFFIX)
    usd = fibre_cord_usd(valid.prices, line.item, line.length_m)
    rate = f" + {line.length_m:g} m x ${per_m.price_usd:g}/m" if per_m is not None else ""
    return base.model_copy(
        update={"price_usd": usd, "note": f"${base.price_usd:g} a cord{rate}; {base.note}"}
    )


def _priced_line(valid: ValidScenario, line: BomLine) -> tuple[CostLine, str]:
    """The priced line and its note. Built without validation (about 2,000 lines a 100k-GPU
    compare): every field comes from a validated ``BomLine`` or ``PriceEntry`` with its type
    (``quantity`` an int, the prices floats), so the line equals the validated one."""
    entry = _fibre_entry(valid, line) if line.kind == "fibre" else valid.prices.get(line.item)
    if entry is None:
        cost_line = CostLine.model_construct(
            item=line.item,
            kind=line.kind,
            quantity=line.quantity,
            unit_price_usd=0.0,
            total_usd=0.0,
            basis="unpriced",
        )
        note = (
            f"{UNPRICED_WARNING} {line.item} ({line.quantity} x {line.role}) has no price and"
            f" counts $0 in capex; set cost.prices.{line.item} or add it to cost.price_book"
        )
        return cost_line, note
    cost_line = CostLine.model_construct(
        item=line.item,
        kind=line.kind,
        quantity=line.quantity,
        unit_price_usd=entry.price_usd,
        total_usd=line.quantity * entry.price_usd,
        basis=entry.basis,
    )
    detail = f": {entry.note}" if entry.note else ""
    note = (
        f"price {line.item}: {_usd(entry.price_usd)} each x {line.quantity} ({line.role};"
        f" {entry.basis}{detail}); override with cost.prices.{line.item}"
    )
    return cost_line, note


def _power_figure(valid: ValidScenario, line: BomLine) -> Figure | None:
    """The power of one unit of ``line`` (a cable's figure is for the whole link)."""
    if line.kind == "switch":
        for switch in (*valid.switches.values(), *valid.fabric_elements.values()):
            if switch.id == line.item:
                return switch.power_w
    elif line.kind == "nic":
        for nic in valid.nics.values():
            if nic.id == line.item:
                return nic.power_w
    elif line.kind == "cable":
        for cable in valid.cables:
            if cable.id == line.item:
                return cable.power_w
    elif line.kind == "transceiver":
        for cable in valid.cables:
            for module in (*cable.switch_modules, *cable.host_modules):
                if module.item == line.item:
                    return module.power_w
    elif line.kind == "fibre":
        return PASSIVE_FIBRE_W
    return None


def _power(valid: ValidScenario, design: FabricDesign) -> tuple[dict[str, float], list[str]]:
    """Watts per BOM kind, and one assumption per item saying where its figure came from."""
    by_kind: dict[str, float] = {}
    notes: list[str] = []
    for line in design.bom:
        figure = _power_figure(valid, line)
        if figure is None:
            notes.append(
                f"power {line.item}: no power figure in the scenario ({line.kind}); counted as 0 W"
            )
            continue
        by_kind[line.kind] = by_kind.get(line.kind, 0.0) + line.quantity * figure.value
        detail = f": {figure.note}" if figure.note else ""
        unit = {"cable": "per link", "fibre": "per cord"}.get(line.kind, "each")
        notes.append(
            f"power {line.item}: {figure.value:g} W {unit} x {line.quantity} ({figure.basis}"
            f"{detail})"
        )
    return by_kind, notes


def _support_fraction(valid: ValidScenario, design: FabricDesign) -> tuple[float, str]:
    """The yearly support fraction of capex, and the assumption saying where it came from."""
    given = valid.spec.cost.support_fraction_per_year
    if given is not None:
        return given, f"support: {given:.1%} of capex a year (cost.support_fraction_per_year)"
    family = valid.technologies[design.technology].switch_family
    item = f"{SUPPORT_ITEM_PREFIX}{family}"
    entry = valid.prices.get(item)
    if entry is None:
        return DEFAULT_SUPPORT_FRACTION_PER_YEAR, (
            f"support: {DEFAULT_SUPPORT_FRACTION_PER_YEAR:.1%} of capex a year (default estimate;"
            f" no {item} in the price book); set cost.support_fraction_per_year"
        )
    if entry.price_usd > 1:
        raise ModelError(
            "FP560",
            f"price book: {item}",
            "a support item is a yearly fraction of capex and must be at most 1",
            entry.price_usd,
            "write e.g. 0.1 for 10 % a year, or set cost.support_fraction_per_year",
        )
    return entry.price_usd, (
        f"support: {entry.price_usd:.1%} of capex a year (price book {item}, {entry.basis});"
        " set cost.support_fraction_per_year to override"
    )


def _operations_notes(valid: ValidScenario, design: FabricDesign, years: float) -> list[str]:
    usd = valid.spec.cost.engineer_usd_per_year
    override = valid.spec.cost.operations_engineer_years.get(design.technology)
    if override is not None:
        return [
            f"operations: {years:.2f} engineer-years a year x {_usd(usd)}"
            f" (cost.operations_engineer_years.{design.technology}; cost.engineer_usd_per_year)"
        ]
    records = effort_records(valid, design)
    notes = [
        f"operations: {years:.2f} engineer-years a year x {_usd(usd)} (estimate from the"
        f" technology's mechanisms, {records[0].switches} switches, team experience"
        f" {records[0].experience!r}; set cost.operations_engineer_years.{design.technology}"
        " and cost.engineer_usd_per_year to override)"
    ]
    notes += [
        f"operations task ({record.engineer_years_per_year:.3f} engineer-years/yr,"
        f" {record.hours_per_year:,.0f} h/yr): {record.task}"
        for record in records
    ]
    return notes


def fabric_cost(valid: ValidScenario, design: FabricDesign) -> CostBreakdown:
    """Capex, power, opex and TCO of ``design``, with every assumption in words.

    Parameters
    ----------
    valid
        The scenario: prices, hardware power figures, cost settings, team experience.
    design
        The designed fabric and its bill of materials.

    Returns
    -------
    CostBreakdown
        Priced BOM lines, power per kind, yearly opex, TCO, per-GPU and per-Tb/s figures.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "cost": {"years": 3}})
    >>> cost = fabric_cost(valid, _tiny_leaf_spine())
    >>> cost.tco_usd == cost.capex_usd + 3 * cost.opex_usd_per_year
    True
    """
    spec = valid.spec.cost
    lines: list[CostLine] = []
    assumptions: list[str] = []
    for bom_line in design.bom:
        cost_line, note = _priced_line(valid, bom_line)
        lines.append(cost_line)
        assumptions.append(note)
    capex_usd = sum(line.total_usd for line in lines)

    power_lines, power_notes = _power(valid, design)
    assumptions += power_notes
    power_w = sum(power_lines.values())
    energy_usd_per_year = energy_kwh_per_year(power_w) * spec.pue * spec.energy_usd_per_kwh
    assumptions.append(
        f"energy: {power_w:,.0f} W x PUE {spec.pue:g} x {HOURS_PER_YEAR:,.0f} h x"
        f" ${spec.energy_usd_per_kwh:g}/kWh (cost.pue, cost.energy_usd_per_kwh)"
    )

    support_fraction, support_note = _support_fraction(valid, design)
    support_usd_per_year = support_fraction * capex_usd
    assumptions.append(support_note)

    engineer_years = engineer_years_per_year(valid, design)
    operations_usd_per_year = engineer_years * spec.engineer_usd_per_year
    assumptions += _operations_notes(valid, design, engineer_years)

    opex_usd_per_year = energy_usd_per_year + support_usd_per_year + operations_usd_per_year
    tco_usd = capex_usd + spec.years * opex_usd_per_year
    assumptions.append(
        f"TCO: capex + {spec.years} years x opex, undiscounted, scale-out network only (cost.years)"
    )
    if design.bisection_tbps > 0:
        capex_per_bisection_tbps_usd = capex_usd / design.bisection_tbps
    else:
        capex_per_bisection_tbps_usd = 0.0
        assumptions.append("capex per Tb/s of bisection: bisection is 0, shown as 0")
    return CostBreakdown(
        capex_usd=capex_usd,
        lines=tuple(lines),
        power_w=power_w,
        power_lines=power_lines,
        energy_usd_per_year=energy_usd_per_year,
        support_usd_per_year=support_usd_per_year,
        operations_usd_per_year=operations_usd_per_year,
        opex_usd_per_year=opex_usd_per_year,
        years=spec.years,
        tco_usd=tco_usd,
        per_gpu_usd=tco_usd / design.gpus if design.gpus else 0.0,
        capex_per_bisection_tbps_usd=capex_per_bisection_tbps_usd,
        assumptions=tuple(assumptions),
    )


GPU_HOUR_ITEM_PREFIX = "gpu-hour-"
"""Price-book items ``gpu-hour-<node id>``: what one GPU-hour of that node costs its owner."""


def with_gpu_idle_cost(
    valid: ValidScenario, cost: CostBreakdown, step: StepTimeResult | None
) -> CostBreakdown:
    """``cost`` with the value of the GPU time the fabric leaves idle over the horizon.

    ``gpu_idle_usd = step.gpu_hours_lost_per_year x (fabric share of the exposed time) x years x
    price(gpu-hour-<node>)``: the GPUs wait on communication across the fabric that compute does
    not hide. NVLink-only communication idles them the same way on every fabric: its value is
    ``gpu_idle_in_domain_usd``, shown and never a difference. Unchanged when there is no step
    time or no GPU-hour price.

    Examples
    --------
    >>> from fabricplan.model.results import StepTimeResult
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "cost": {"years": 2,
    ...                     "prices": {"gpu-hour-h100": 2.0}}})
    >>> cost = fabric_cost(valid, _tiny_leaf_spine())
    >>> step = StepTimeResult(compute_s=1.0, comm_total_s=0.2, comm_exposed_s=0.1, step_s=1.1,
    ...     comm_by_dimension_s={}, exposed_fraction=0.1 / 1.1, gpu_hours_lost_per_year=1000.0,
    ...     comm_exposed_in_domain_s=0.025)
    >>> idle = with_gpu_idle_cost(valid, cost, step)
    >>> round(idle.gpu_idle_usd, 6), round(idle.gpu_idle_in_domain_usd, 6)  # 4000 USD split 3:1
    (3000.0, 1000.0)
    """
    item = f"{GPU_HOUR_ITEM_PREFIX}{valid.node.id}"
    price = valid.prices.get(item)
    if step is None or price is None:
        return cost
    years = valid.spec.cost.years
    share = step.comm_exposed_fabric_s / step.comm_exposed_s if step.comm_exposed_s else 0.0
    all_usd = step.gpu_hours_lost_per_year * years * price.price_usd
    idle_usd = all_usd * share
    note = (
        f"GPU time idled by exposed communication across the fabric:"
        f" {step.gpu_hours_lost_per_year * share:,.0f} GPU-hours a year x {years} years x"
        f" ${price.price_usd:.2f}/GPU-hour ({price.basis}: {price.note}) = {_usd(idle_usd)};"
        f" NVLink-only communication adds {_usd(all_usd - idle_usd)} on every fabric (not a"
        f" difference); override with cost.prices.{item}"
    )
    return cost.model_copy(
        update={
            "gpu_idle_usd": idle_usd,
            "gpu_idle_in_domain_usd": all_usd - idle_usd,
            "tco_with_gpu_idle_usd": cost.tco_usd + idle_usd,
            "assumptions": (*cost.assumptions, note),
        }
    )


def with_config_risk(valid: ValidScenario, cost: CostBreakdown, risk: ConfigRisk) -> CostBreakdown:
    """``cost`` with the expected configuration-risk cost (:mod:`.config_risk`) recorded."""
    return cost.model_copy(
        update={
            "config_risk_gpu_hours": risk.gpu_hours,
            "config_risk_staff_usd": risk.staff_usd,
            "config_risk_basis": risk.basis,
            "assumptions": (*cost.assumptions, risk.basis),
        }
    )


def _tiny_leaf_spine() -> FabricDesign:
    """A tiny InfiniBand leaf-spine for the examples: 2 nodes x 8 NICs, 2 leaves, 1 spine; each
    leaf has 8 host ports and 8 uplinks to the one spine (non-blocking)."""
    leaf = TierDesign(
        name="leaf", switches=2, radix=64, down_ports=8, up_ports=8, ports_used=16, ports_free=48
    )
    spine = TierDesign(
        name="spine", switches=1, radix=64, down_ports=16, up_ports=0, ports_used=16, ports_free=48
    )
    return FabricDesign(
        technology="infiniband",
        topology="fat_tree",
        switch_id="qm9700",
        port_speed_gbps=400,
        radix=64,
        tiers=2,
        planes=1,
        spine_groups=1,
        nodes=2,
        gpus=16,
        endpoints=16,
        hosts_per_leaf=8,
        leaves_per_pod=2,
        rail_aligned=False,
        tier_designs=(leaf, spine),
        link_groups=(
            LinkGroup(name="node_leaf", count=16, speed_gbps=400, reach_m=2, cable_id="dac-400g"),
            LinkGroup(
                name="leaf_spine", count=16, speed_gbps=400, reach_m=30, cable_id="optic-400g-dr4"
            ),
        ),
        bisection_tbps=3.2,
        worst_case_switch_hops=3,
        max_endpoints=2048,
        headroom_gpus=2032,
        bom=(
            BomLine(item="qm9700", kind="switch", quantity=3, role="leaf and spine switches"),
            BomLine(item="cx7", kind="nic", quantity=16, role="host NICs"),
            BomLine(item="dac-400g", kind="cable", quantity=16, role="node-leaf links"),
            BomLine(item="optic-400g-dr4", kind="cable", quantity=16, role="leaf-spine links"),
        ),
    )
