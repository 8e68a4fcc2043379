"""The optical side of every link: the two modules of a composed optic must link over the fibre
(same optical lanes x rate, fibre, wavelengths and cords), not only have the right electrical
lanes at their own device (issue #10 point 7, FP1237-FP1238)."""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.catalog.loader import Catalog, check_optics, load_catalog
from fabricplan.errors import CatalogError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.hardware import CableSpec
from fabricplan.spec import parse_spec
from fabricplan.topology.cable import cable_for
from fabricplan.topology.designer import design_fabric

CATALOG = load_catalog()
CABLES = tuple(CATALOG.of_kind(CableSpec))


def cable(cable_id: str) -> CableSpec:
    return CATALOG.get_typed(cable_id, CableSpec)


def design(nic: str, switch: str, reach_m: float, gpus: int = 256) -> FabricDesign:
    cluster: dict[str, Any] = {"gpus": gpus, "nic": nic}
    cluster["nic_speed_gbps"] = {"thor-ultra": 800}.get(nic, 400)
    valid = parse_spec(
        {
            "cluster": cluster,
            "fabric": {
                "technologies": ["roce_v2"],
                "switch": {"roce_v2": switch},
                "planes": 1,
                "cable_reach": {"node_leaf_m": reach_m, "leaf_spine_m": reach_m},
            },
        }
    )
    return design_fabric(valid, "roce_v2")


def quantity(d: FabricDesign, item: str) -> int:
    return sum(line.quantity for line in d.bom if line.item == item)


def old_800g_dr8() -> CableSpec:
    """The class as it was: a 100G-lane 2 x DR4 switch module (8 x 100G optical) with the
    800G DR4 NIC modules of 4 x 200G optical lanes."""
    dr4 = cable("optic-800g-dr4")
    return cable("optic-800g-dr8").model_copy(
        update={"id": "optic-old-dr8", "host_module": dr4.host_gearbox_module}
    )


def test_a_twin_port_2xdr4_carries_two_dr4_links_each_to_a_400g_dr4_nic_module() -> None:
    # NVIDIA LinkX (MMS4X00-NS): two 4-channel MPO-12/APC ports, each straight fibre to one
    # 400G DR4 single-port module (MMS4X00-NS400): per link 4 x 100G PAM4 single-mode.
    dr4 = cable("optic-400g-dr4")
    assert dr4.twin_module is not None and dr4.host_module is not None
    twin, nic = dr4.twin_module.optics, dr4.host_module.optics
    assert dr4.twin_module.links == 2 and twin is not None and nic is not None
    assert (twin.lanes, twin.lane_gbps, twin.fibre) == (4, 400 / 4, "smf")
    assert twin.links_with(nic) and twin.connector == nic.connector == "MPO-12/APC"


def test_every_composed_module_states_optics_and_a_class_is_one_optical_interface() -> None:
    for c in CABLES:
        if not c.composed:
            assert c.optics is None
            continue
        modules = (*c.switch_modules, *c.host_modules)
        first = modules[0].optics
        assert first is not None, c.id
        for module in modules:
            assert module.optics is not None and module.optics.links_with(first), (c.id, module)
            # lanes x rate is the link's speed: the optics carry the class's speed per link
            assert module.optics.lanes * module.optics.lane_gbps == c.speed_gbps, module.item


def test_the_old_800g_dr8_pairing_is_refused_in_one_line() -> None:
    with pytest.raises(CatalogError) as err:
        check_optics(Catalog([*CATALOG, old_800g_dr8()], CATALOG.prices))
    text = str(err.value)
    assert text.startswith("cables.yaml optic-old-dr8.host_module:") and text.endswith("[FP1237]")
    assert "8 x 100G" in text and "4 x 200G" in text and "\n" not in text


def test_a_composed_module_without_optics_is_refused() -> None:
    dr4 = cable("optic-400g-dr4")
    assert dr4.host_module is not None
    bare = dr4.host_module.model_copy(update={"optics": None})
    bad = dr4.model_copy(update={"id": "optic-bare", "host_module": bare})
    with pytest.raises(CatalogError) as err:
        check_optics(Catalog([*CATALOG, bad], CATALOG.prices))
    assert str(err.value).endswith("[FP1238]") and "optic-bare.host_module" in str(err.value)


def test_the_chooser_never_pairs_modules_of_other_optics() -> None:
    # A catalog built in Python without the check: a single-cage 100G-lane switch at 800G to a
    # NIC of 100G lanes, 60 m. The old class's switch module (DR8) and gearbox NIC module (DR4
    # of 200G lanes) each fit their device's electrical lanes but cannot link.
    lanes = frozenset({100.0})
    old = old_800g_dr8()
    assert cable_for((old,), CATALOG.prices, 800, 60, True, 1, lanes, lanes) is None
    chosen = cable_for(CABLES, CATALOG.prices, 800, 60, True, 1, lanes, lanes)
    assert chosen is not None and chosen.id == "optic-800g-dr8"


def test_an_800g_nic_of_100g_lanes_on_a_spectrum4_gets_a_2xdr4_module_and_two_cords() -> None:
    d = design("thor-ultra", "sn5600", 60)
    node_leaf, leaf_spine = d.links["node_leaf"], d.links["leaf_spine"]
    assert quantity(d, "osfp-800g-2xdr4-nic") == node_leaf
    assert quantity(d, "osfp-800g-dr4-gearbox-nic") == 0
    # one MMS4X00-NS per switch port (an 800G port is a whole twin-port module) ...
    assert quantity(d, "mms4x00-ns") == node_leaf + 2 * leaf_spine
    # ... and two MPO-12 cords per 800G link ("twin-port transceivers require ordering two
    # fibers", NVIDIA MMS4X00-NS-T overview)
    assert quantity(d, "fibre-smf-mpo12") == 2 * (node_leaf + leaf_spine)


def test_a_connectx7_on_a_qsfp_dd_switch_gets_dr4_not_sr8_against_sr4() -> None:
    # Spectrum-3 (8 x 50G QSFP-DD) at 40 m to a ConnectX-7 (4 x 100G): the multimode pairing
    # QSFP-DD SR8 (8 x 50G) with OSFP SR4 (4 x 100G) cannot link; QSFP-DD DR4 (a 400GAUI-8
    # gearbox to 4 x 100G optical, 802.3bs) links with the NIC's OSFP DR4.
    d = design("cx7", "sn4700", 40)
    host = {r.cable_id for r in d.cable_runs if r.group == "node_leaf"}
    assert host == {"optic-400g-dr4"}
    assert quantity(d, "mma4z00-ns400") == 0
    assert quantity(d, "mms4x00-ns400") == d.links["node_leaf"]
    assert quantity(d, "qsfpdd-400g-dr4") == d.links["node_leaf"]


@pytest.mark.parametrize(
    ("nic", "switch", "technology", "speed", "reach_m", "expected"),
    [
        # ConnectX-8 XDR (4 x 200G) on a Quantum-X800 twin-port cage (8 x 200G)
        ("cx8", "q3400", "infiniband", 800, 1, "dac-800g-cr4"),
        ("cx8", "q3400", "infiniband", 800, 2, "acc-800g-cr4"),
        ("cx8", "q3400", "infiniband", 800, 30, "optic-800g-dr4"),
        # ConnectX-8 at 400GbE (2 x 200G) on a Tomahawk-6 1.6T cage (4 x 400G)
        ("cx8-eth", "th6-128x800g", "roce_v2", 400, 1, "dac-400g-cr2"),
        ("cx8-eth", "th6-128x800g", "roce_v2", 400, 2, "acc-400g-cr2"),
        ("cx8-eth", "th6-128x800g", "roce_v2", 400, 30, "optic-400g-dr2"),
    ],
)
def test_a_200g_lane_nic_on_a_200g_lane_switch_gets_200g_lane_copper_then_optics(
    nic: str, switch: str, technology: str, speed: float, reach_m: float, expected: str
) -> None:
    # 200G-PAM4 copper: passive to 1 m, active to 3 m (800GBASE-CR4 / 400GBASE-CR2, IEEE
    # 802.3dj; as sold for ConnectX-8); beyond, single-mode optics of 200G optical lanes (no
    # 200G-lane AOC or multimode: NVIDIA's XDR line). Before, the 100G-lane DAC's 2 m and an
    # unsourced 200G-lane AOC were offered, and a ConnectX-8 at 400GbE got optics at 1 m.
    valid = parse_spec(
        {
            "cluster": {"gpus": 256, "nic": nic, "nic_speed_gbps": speed},
            "fabric": {
                "technologies": [technology],
                "switch": {technology: switch},
                "planes": 1,
                "cable_reach": {"node_leaf_m": reach_m, "leaf_spine_m": reach_m},
            },
        }
    )
    d = design_fabric(valid, technology)  # type: ignore[arg-type]
    assert {r.cable_id for r in d.cable_runs if r.group == "node_leaf"} == {expected}
    chosen = cable(expected)
    assert chosen.max_reach_m >= reach_m


def test_a_200g_lane_host_link_beyond_the_nic_modules_reach_is_a_finding() -> None:
    # 150 m: the 800G DR4 NIC module is a 100 m part; the 500 m class joins switches only.
    valid = parse_spec(
        {
            "cluster": {"gpus": 256, "nic": "cx8", "nic_speed_gbps": 800},
            "fabric": {
                "technologies": ["infiniband"],
                "switch": {"infiniband": "q3400"},
                "planes": 1,
                "cable_reach": {"node_leaf_m": 150, "leaf_spine_m": 150},
            },
        }
    )
    d = design_fabric(valid, "infiniband")
    assert {r.cable_id for r in d.cable_runs if r.group == "leaf_spine"} == {"optic-800g-dr4-500m"}
    assert [f.code for f in d.findings if f.severity == "error"] == ["FP316"]
