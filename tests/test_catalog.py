"""The hardware catalog: every figure sourced and based, switch arithmetic consistent, a full cable
ladder per speed, a price for everything the designer can buy, and the ``catalog`` CLI."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from fabricplan.catalog.loader import (
    Catalog,
    _check_references,
    load_catalog,
    parse_entries,
    parse_price_book,
)
from fabricplan.cli.app import create_app
from fabricplan.errors import CatalogError
from fabricplan.model.hardware import (
    FIBRE_PER_METRE_SUFFIX,
    Basis,
    CableSpec,
    Figure,
    NicSpec,
    NodeSpec,
    SwitchSpec,
    TechnologySpec,
)
from fabricplan.spec import parse_spec
from fabricplan.topology.cable import link_price_usd

CATALOG = load_catalog()
BASES = set(Basis.__args__)  # type: ignore[attr-defined]
LINK_SPEEDS_GBPS = (100.0, 200.0, 400.0, 800.0)
LONGEST_REACH_M = 2000.0
PRICE_ONLY_ITEMS = {"ib-router", "ufm-appliance", "support-infiniband", "support-ethernet"}
NODES = set(CATALOG.ids("node"))
REACH_CLASS_ORDER = {"dac": 0, "acc": 1, "aoc": 2, "optic": 3}


def _figures(model: BaseModel, path: str = "") -> list[tuple[str, Figure]]:
    found: list[tuple[str, Figure]] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        where = f"{path}.{name}" if path else name
        if isinstance(value, Figure):
            found.append((where, value))
        elif isinstance(value, BaseModel):
            found.extend(_figures(value, where))
    return found


# ---------------------------------------------------------------- every entry and figure


@pytest.mark.parametrize("item", list(CATALOG), ids=lambda item: item.id)
def test_every_entry_has_a_source_and_a_date(item: Any) -> None:
    assert len(item.source.strip()) >= 10, "a source must say where the figures come from"
    year = int(item.date[:4])
    assert 1990 <= year <= 2030


@pytest.mark.parametrize("item", list(CATALOG), ids=lambda item: item.id)
def test_every_figure_has_a_basis_and_estimates_say_why(item: Any) -> None:
    figures = _figures(item)
    assert figures, "every entry carries figures"
    for where, figure in figures:
        assert figure.basis in BASES, f"{item.id}.{where}"
        if figure.basis in ("estimate", "derived"):
            assert figure.note.strip(), f"{item.id}.{where}: an {figure.basis} needs its basis"


def test_no_latency_is_claimed_as_a_vendor_figure_without_a_source() -> None:
    # The reference found no vendor port-to-port latency for any of these systems.
    for switch in CATALOG.of_kind(SwitchSpec):
        assert switch.latency_ns.basis != "vendor" or switch.latency_ns.source


# ---------------------------------------------------------------- switches


@pytest.mark.parametrize("switch", CATALOG.of_kind(SwitchSpec), ids=lambda s: s.id)
def test_capacity_is_the_largest_port_mode_bandwidth(switch: SwitchSpec) -> None:
    expected_tbps = max(m.ports * m.speed_gbps for m in switch.port_modes) / 1000
    assert switch.capacity_tbps.value == pytest.approx(expected_tbps, rel=1e-9)


@pytest.mark.parametrize("switch", CATALOG.of_kind(SwitchSpec), ids=lambda s: s.id)
def test_breakouts_conserve_bandwidth_and_native_mode_comes_first(switch: SwitchSpec) -> None:
    native = switch.port_modes[0]
    for mode in switch.port_modes:
        assert mode.ports * mode.speed_gbps == native.ports * native.speed_gbps
    assert native.speed_gbps == switch.max_port_speed_gbps
    speeds = [m.speed_gbps for m in switch.port_modes]
    assert len(set(speeds)) == len(speeds), "one mode per speed (port_mode_for relies on it)"


def test_required_switch_classes_are_present() -> None:
    radix = {
        s.id: {m.speed_gbps: m.ports for m in s.port_modes} for s in CATALOG.of_kind(SwitchSpec)
    }
    assert radix["qm8700"] == {200.0: 40, 100.0: 80}
    assert radix["qm9700"] == {400.0: 64, 200.0: 128}
    assert radix["q3400"] == {800.0: 144}
    assert radix["sn5600"] == {800.0: 64, 400.0: 128, 200.0: 256}
    tomahawk5 = [s for s in CATALOG.of_kind(SwitchSpec) if s.asic == "Tomahawk 5"]
    assert tomahawk5 and tomahawk5[0].port_mode_for(400) is not None


def test_every_nic_speed_and_family_has_a_switch() -> None:
    # Otherwise `switch: auto` fails for a NIC the catalog offers.
    for nic in CATALOG.of_kind(NicSpec):
        for family in nic.families:
            assert any(
                s.family == family and s.port_mode_for(nic.speed_gbps) is not None
                for s in CATALOG.of_kind(SwitchSpec)
            ), f"{nic.id}: no {family} switch with {nic.speed_gbps:g}G ports"


@pytest.mark.parametrize("speed", LINK_SPEEDS_GBPS)
@pytest.mark.parametrize("family", ["infiniband", "ethernet"])
def test_every_link_speed_has_a_nic_and_a_switch_of_each_family(speed: float, family: str) -> None:
    assert any(family in n.families and n.speed_gbps == speed for n in CATALOG.of_kind(NicSpec))
    assert any(
        s.family == family and s.port_mode_for(speed) is not None
        for s in CATALOG.of_kind(SwitchSpec)
    )


# ---------------------------------------------------------------- cables


def _lanes_of(cable: CableSpec) -> set[float]:
    """The electrical lane rates of a class's ends at a switch."""
    if cable.composed:
        return {m.lane_gbps for m in cable.switch_modules if m.lane_gbps is not None}
    return set(cable.lane_gbps)


def _ladder(speed_gbps: float, lane_gbps: float | None = None) -> list[CableSpec]:
    """The classes of one speed that plug into a cage of one or two links (every switch but a
    1.6T-cage box at 4 x 400G, whose own classes are checked apart), by reach; of devices up to
    100G lanes, or of ``lane_gbps`` only (the 200G-lane classes, a ladder of their own)."""
    cables = [
        c
        for c in CATALOG.of_kind(CableSpec)
        if c.speed_gbps == speed_gbps
        and (not c.composed or c.single_module is not None or c.twin_module is not None)
        and (
            _lanes_of(c) == {lane_gbps}
            if lane_gbps is not None
            else not _lanes_of(c) or min(_lanes_of(c)) <= 100
        )
    ]
    return sorted(cables, key=lambda c: c.max_reach_m)


@pytest.mark.parametrize("speed", [400.0, 800.0])
def test_the_200g_lane_classes_are_copper_short_then_single_mode_optics(speed: float) -> None:
    # 200G-PAM4 (IEEE 802.3dj): passive copper to 1 m, active copper to 3 m, then single-mode
    # optics; no AOC or multimode (NVIDIA's XDR line: lasers not available yet).
    four_link = speed == 400  # a 1.6T cage at 4 x 400G: its optics are quad modules
    ladder = [
        c
        for c in CATALOG.of_kind(CableSpec)
        if c.speed_gbps == speed
        and _lanes_of(c) == {200.0}
        and (not c.composed or (c.quad_module if four_link else c.twin_module) is not None)
    ]
    ladder.sort(key=lambda c: c.max_reach_m)
    assert [c.cable_kind for c in ladder][:3] == ["dac", "acc", "optic"]
    assert (ladder[0].max_reach_m, ladder[1].max_reach_m) == (1, 3)
    assert all(c.cable_kind != "aoc" for c in ladder)
    per_cage = 4 if four_link else 2

    def usd(c: CableSpec) -> float:
        return link_price_usd(c, CATALOG.prices, False, per_cage, c.max_reach_m)

    for shorter, longer in itertools.pairwise(ladder):
        assert usd(shorter) < usd(longer), (shorter.id, longer.id)


def test_a_four_link_cage_class_shares_its_module_four_ways() -> None:
    dr2 = CATALOG.get_typed("optic-400g-dr2", CableSpec)
    assert dr2.quad_module is not None and dr2.quad_module.links == 4
    assert link_price_usd(dr2, CATALOG.prices, False, 2, 50.0) == math.inf  # no twin-port part
    module = CATALOG.prices[dr2.quad_module.item].price_usd
    fibre = CATALOG.prices["fibre-smf-mpo12"].price_usd
    per_m = CATALOG.prices["fibre-smf-mpo12-per-m"].price_usd
    assert link_price_usd(dr2, CATALOG.prices, False, 4, 50.0) == pytest.approx(
        2 * module / 4 + fibre + 50 * per_m
    )


def _link_usd(cable: CableSpec) -> float:
    """One switch-to-switch link of the class at its own reach: a whole cable, or its modules
    (a twin-port share where the class has one) and its fibre cord."""
    per_cage = 2 if cable.twin_module is not None else 1
    return link_price_usd(cable, CATALOG.prices, False, per_cage, cable.max_reach_m)


def _cheapest_that_reaches(speed_gbps: float, reach_m: float) -> CableSpec:
    fits = [c for c in _ladder(speed_gbps) if c.max_reach_m >= reach_m]
    return min(fits, key=_link_usd)


@pytest.mark.parametrize("speed", LINK_SPEEDS_GBPS)
def test_each_speed_has_a_full_reach_ladder(speed: float) -> None:
    ladder = _ladder(speed)
    assert {c.cable_kind for c in ladder} == set(REACH_CLASS_ORDER)
    assert ladder[-1].max_reach_m >= LONGEST_REACH_M
    classes = [REACH_CLASS_ORDER[c.cable_kind] for c in ladder]
    assert classes == sorted(classes), "copper reaches less than active optics, optics the most"


@pytest.mark.parametrize("speed", LINK_SPEEDS_GBPS)
def test_power_and_price_grow_with_reach_class(speed: float) -> None:
    ladder = _ladder(speed)
    for shorter, longer in itertools.pairwise(ladder):
        if REACH_CLASS_ORDER[shorter.cable_kind] < REACH_CLASS_ORDER[longer.cable_kind]:
            assert shorter.power_w.value <= longer.power_w.value, (shorter.id, longer.id)
        assert _link_usd(shorter) < _link_usd(longer), (shorter.id, longer.id)
    # Passive copper draws almost nothing; an optical link draws watts at each end.
    assert ladder[0].power_w.value < 1 < ladder[-1].power_w.value


@pytest.mark.parametrize("speed", LINK_SPEEDS_GBPS)
def test_the_cheapest_cable_that_reaches_is_copper_short_and_optics_long(speed: float) -> None:
    assert _cheapest_that_reaches(speed, 1.0).cable_kind == "dac"
    assert _cheapest_that_reaches(speed, 1000.0).cable_kind == "optic"
    # Every reach up to 2 km has a cable: the designer never runs out of ladder.
    for reach_m in (0.5, 3, 7, 30, 50, 100, 500, LONGEST_REACH_M):
        assert _cheapest_that_reaches(speed, reach_m).max_reach_m >= reach_m


def test_fibre_delay_follows_from_its_group_index() -> None:
    speed_of_light_m_per_ns = 0.299792458
    group_index = 1.47
    for cable in CATALOG.of_kind(CableSpec):
        if cable.cable_kind in ("aoc", "optic"):
            expected = group_index / speed_of_light_m_per_ns
            assert cable.ns_per_m.value == pytest.approx(expected, abs=0.05)


# ---------------------------------------------------------------- nodes and technologies


def test_spec_node_ids_exist_with_their_default_nics() -> None:
    for node_id in ("a100", "h100", "h200", "b200"):
        node = CATALOG.get_typed(node_id, NodeSpec)
        nic = CATALOG.get_typed(node.default_nic, NicSpec)
        assert nic.speed_gbps >= 200
    assert CATALOG.get_typed("a100", NodeSpec).default_nic == "cx6"
    # NVLink per direction is half the bidirectional figure: 600, 900, 900, 1800 GB/s.
    bidirectional = {"a100": 600, "h100": 900, "h200": 900, "b200": 1800}
    for node_id, both_ways_gbps in bidirectional.items():
        assert CATALOG.get_typed(node_id, NodeSpec).nvlink_GBps.value == both_ways_gbps / 2


def test_header_bytes_are_the_sum_of_the_headers() -> None:
    lrh, bth, icrc, vcrc = 8, 12, 4, 2
    preamble_sfd, ethernet, fcs, gap, vlan = 8, 14, 4, 12, 4
    ipv4, udp, grh = 20, 8, 40
    header = {t.id: t.header_bytes.value for t in CATALOG.of_kind(TechnologySpec)}
    assert header["infiniband"] == lrh + bth + icrc + vcrc
    assert header["roce_v2"] == preamble_sfd + ethernet + ipv4 + udp + bth + icrc + fcs + gap
    assert header["roce_v1"] == preamble_sfd + ethernet + vlan + grh + bth + icrc + fcs + gap


def test_infiniband_subnet_holds_the_unicast_lid_range() -> None:
    first_unicast_lid, last_unicast_lid = 0x0001, 0xBFFF
    infiniband = CATALOG.get_typed("infiniband", TechnologySpec)
    assert infiniband.max_endpoints_per_domain is not None
    assert infiniband.max_endpoints_per_domain.value == last_unicast_lid - first_unicast_lid + 1


# ---------------------------------------------------------------- prices


def _parts() -> set[str]:
    """Modules and fibre (base and per metre) that composed optical classes are built from."""
    parts: set[str] = set()
    for cable in CATALOG.of_kind(CableSpec):
        for module in (*cable.switch_modules, *cable.host_modules):
            parts.add(module.item)
        if cable.fibre:
            parts |= {cable.fibre, cable.fibre + FIBRE_PER_METRE_SUFFIX}
    return parts


def test_everything_the_designer_can_buy_has_a_price() -> None:
    whole = [c.id for c in CATALOG.of_kind(CableSpec) if not c.composed]
    for item_id in CATALOG.ids("switch") + CATALOG.ids("nic") + whole + sorted(_parts()):
        assert item_id in CATALOG.prices, f"{item_id} has no default price"
    assert set(CATALOG.prices) >= PRICE_ONLY_ITEMS


def test_a_composed_optical_class_is_not_also_priced_whole() -> None:
    for cable in CATALOG.of_kind(CableSpec):
        if cable.composed:
            assert cable.id not in CATALOG.prices, cable.id
            assert cable.fibre, f"{cable.id}: an optical link needs its fibre"


def test_default_prices_are_estimates_with_their_basis() -> None:
    for item, entry in CATALOG.prices.items():
        assert entry.basis == "estimate", f"{item}: a default price is never a vendor figure"
        assert len(entry.note) >= 10, f"{item}: say what the estimate rests on"
        known = item in CATALOG.ids() or item in PRICE_ONLY_ITEMS or item in _parts()
        gpu_hour = item.startswith("gpu-hour-") and item.removeprefix("gpu-hour-") in NODES
        assert known or gpu_hour, f"{item}: priced but unknown"


def test_every_node_has_a_gpu_hour_price() -> None:
    for node in CATALOG.ids("node"):
        entry = CATALOG.prices[f"gpu-hour-{node}"]
        # USD per GPU-hour: a node's price over 4 years of hours per GPU is a few dollars at most.
        assert 0.1 < entry.price_usd < 10, node


def test_support_items_are_fractions_of_capex() -> None:
    for family in ("infiniband", "ethernet"):
        assert 0 < CATALOG.prices[f"support-{family}"].price_usd < 1


def test_a_user_price_book_overrides_the_estimates(tmp_path: Path) -> None:
    book = tmp_path / "prices.yaml"
    book.write_text("qm9700: 27500\n", encoding="utf-8")
    valid = parse_spec({"cluster": {"gpus": 64}, "cost": {"price_book": str(book)}})
    assert valid.prices["qm9700"].price_usd == 27500
    assert valid.prices["qm9700"].basis == "measured"
    assert valid.prices["sn5600"] == CATALOG.prices["sn5600"]


# ---------------------------------------------------------------- parsing errors

CABLE_ENTRY = """\
- id: {id}
  name: Cable {id}
  source: a test source
  date: "2024"
  cable_kind: dac
  speed_gbps: 400
  max_reach_m: {reach}
  power_w: {{value: 0.2, basis: derived, note: two ends}}
  ns_per_m: {{value: 4.5, basis: vendor}}
"""
CABLE_ENTRY_LINES = CABLE_ENTRY.count("\n")
REACH_LINE = 7


@given(count=st.integers(1, 6), data=st.data())
def test_an_invalid_entry_is_reported_at_its_file_and_line(count: int, data: Any) -> None:
    bad = data.draw(st.integers(0, count - 1))
    text = "".join(
        CABLE_ENTRY.format(id=f"c{i}", reach=-1 if i == bad else 2) for i in range(count)
    )
    with pytest.raises(CatalogError) as info:
        parse_entries(text, CableSpec, "cables.yaml")
    expected_line = bad * CABLE_ENTRY_LINES + REACH_LINE
    assert info.value.code == "FP206"
    assert info.value.where == f"cables.yaml:{expected_line} c{bad}.max_reach_m"


def test_broken_yaml_is_reported_at_its_line() -> None:
    text = CABLE_ENTRY.format(id="a", reach=2) + "- id: [unclosed\n"
    with pytest.raises(CatalogError) as info:
        parse_entries(text, CableSpec, "cables.yaml")
    assert info.value.code == "FP204"
    assert info.value.where.startswith("cables.yaml:1")


def test_a_typo_in_a_field_name_is_reported_with_the_key_line() -> None:
    text = CABLE_ENTRY.format(id="a", reach=2).replace("max_reach_m", "max_reach")
    with pytest.raises(CatalogError) as info:
        parse_entries(text, CableSpec, "cables.yaml")
    assert "cables.yaml:7" in str(info.value) and "[FP206]" in str(info.value)


def test_a_bad_price_is_reported_at_its_file_and_line() -> None:
    with pytest.raises(CatalogError) as info:
        parse_price_book("qm9700: 30000\nsn5600: forty\n", "mine.yaml")
    assert info.value.code == "FP208"
    assert info.value.where == "mine.yaml:2 sn5600.price_usd"
    listed = "- {item: a, price_usd: 1, basis: estimate}\n- {item: b, price_usd: 2, basis: guess}\n"
    with pytest.raises(CatalogError) as info:
        parse_price_book(listed, "book.yaml")
    assert info.value.code == "FP208" and info.value.where == "book.yaml:2 b.basis"


def test_an_item_priced_twice_is_an_error() -> None:
    listed = (
        "- {item: a, price_usd: 1, basis: estimate}\n- {item: a, price_usd: 2, basis: estimate}\n"
    )
    with pytest.raises(CatalogError) as info:
        parse_price_book(listed, "book.yaml")
    assert info.value.code == "FP211" and info.value.where == "book.yaml:2 a"


def test_a_price_book_must_be_a_list_or_a_mapping() -> None:
    with pytest.raises(CatalogError) as info:
        parse_price_book("just words", "book.yaml")
    assert info.value.code == "FP207"


@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9\-]{0,20}", fullmatch=True),
        st.floats(0, 1e7, allow_nan=False, allow_infinity=False),
        max_size=8,
    )
)
def test_a_user_mapping_round_trips(prices: dict[str, float]) -> None:
    book = parse_price_book(yaml.safe_dump(prices), "mine.yaml")
    assert {item: entry.price_usd for item, entry in book.items()} == prices
    assert all(entry.basis == "measured" for entry in book.values())


def test_duplicate_ids_and_dangling_nic_references_are_refused() -> None:
    switch = CATALOG.get("qm9700")
    with pytest.raises(CatalogError) as info:
        Catalog([switch, switch], {})
    assert info.value.code == "FP201"
    node = CATALOG.get_typed("h100", NodeSpec).model_copy(update={"default_nic": "cx99"})
    with pytest.raises(CatalogError) as info:
        _check_references(Catalog([node], {}))
    assert info.value.code == "FP210" and "cx99" in str(info.value)


# ---------------------------------------------------------------- the CLI


app = create_app()


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def test_cli_list_json_has_every_entry_with_its_source(runner: CliRunner) -> None:
    result = runner.invoke(app, ["catalog", "list", "--format", "json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    assert [row["id"] for row in items] == CATALOG.ids()
    for row in items:
        assert {"id", "kind", "name", "source", "date"} <= set(row)
        assert row["source"] == CATALOG.get(row["id"]).source


def test_cli_list_filters_by_kind(runner: CliRunner) -> None:
    result = runner.invoke(app, ["catalog", "list", "--kind", "cable", "--format", "json"])
    assert result.exit_code == 0, result.output
    kinds = {row["kind"] for row in json.loads(result.stdout)["items"]}
    assert kinds == {"cable"}


def test_cli_show_json_has_every_figure_and_the_price(runner: CliRunner) -> None:
    result = runner.invoke(app, ["catalog", "show", "qm9700", "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    switch = CATALOG.get_typed("qm9700", SwitchSpec)
    assert set(type(switch).model_fields) <= set(record)
    for where, figure in _figures(switch):
        assert record[where] == {
            "value": figure.value,
            "basis": figure.basis,
            "source": figure.source,
            "note": figure.note,
        }
    assert record["price"]["price_usd"] == CATALOG.prices["qm9700"].price_usd
    assert record["price"]["basis"] == "estimate"


def test_cli_tables_render(runner: CliRunner) -> None:
    for args in (["catalog", "list"], ["catalog", "show", "b200"], ["catalog", "prices"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert result.stdout.strip()


def test_cli_unknown_id_is_one_line_with_close_matches_and_exit_2(runner: CliRunner) -> None:
    result = runner.invoke(app, ["catalog", "show", "qm970"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "qm9700" in lines[0] and "[FP202]" in lines[0]
