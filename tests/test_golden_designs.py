"""Golden designs: published component tables the designer must reproduce exactly.

Tables are copied from the reference catalog (docs/refs.md B.1, B.2 and
landscape.md 2.1), which cites the NVIDIA DGX SuperPOD reference architectures:

- DGX H100 SuperPOD, RA-11333-001 V11 (2023-09-22), compute fabric: QM9700 (64 x 400G), SU of
  32 node slots, one slot given to UFM (4 fabric links): "cables compute+UFM" = 8 x nodes + 4.
- DGX B300 SuperPOD (busbar): SU = 64 nodes, 16 leaves / 8 spines per SU; switch model not
  captured, but 512 node-leaf links on 16 leaves means 32 host ports per leaf: a 64-port switch
  at 1:1. It fits up to 16 SU only with a spine set per rail.
- DGX B300-XDR SuperPOD: Quantum-X800 Q3400 (144 x 800G), SU = 72 nodes.
- DGX B200 SuperPOD: SU = 32 nodes; 16 SU is a 3-tier design (128 leaf / 128 spine / 64 core).
- DeepSeek ISCA'25 (arXiv 2505.09343): 8-plane multi-plane fat tree of 64-port switches.
- Asterfusion reference (secondary): 64 nodes x 4 GPUs, rail-optimized, 4 leaf + 2 spine of
  64 x 800G switches used as 128 x 400G.
"""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.model.fabric import FabricDesign
from fabricplan.model.scenario import TechnologyName
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric


def design(
    gpus: int,
    switch: Any,
    *,
    tech: TechnologyName = "infiniband",
    speed: float = 400,
    gpus_per_node: int = 8,
    **fabric: Any,
) -> FabricDesign:
    valid = parse_spec(
        {
            "cluster": {
                "gpus": gpus,
                "gpus_per_node": gpus_per_node,
                "nics_per_node": gpus_per_node,
                "nic_speed_gbps": speed,
            },
            # The RAs' choices are pinned: the design search (fabricplan.evaluate) may keep
            # another switch, topology or plane count by default.
            "fabric": {
                "technologies": [tech],
                "switch": {tech: switch},
                "topology": "rail_optimized",
                "planes": 1,
                **fabric,
            },
        }
    )
    return design_fabric(valid, tech)


# SU, nodes, GPUs, leaf, spine, compute+UFM cables, leaf-spine cables
H100_SUPERPOD = [
    (1, 31, 248, 8, 4, 252, 256),
    (2, 63, 504, 16, 8, 508, 512),
    (3, 95, 760, 24, 16, 764, 768),
    (4, 127, 1016, 32, 16, 1020, 1024),
]


@pytest.mark.parametrize(
    ("su", "nodes", "gpus", "leaf", "spine", "compute", "leaf_spine"), H100_SUPERPOD
)
def test_dgx_h100_superpod(
    su: int, nodes: int, gpus: int, leaf: int, spine: int, compute: int, leaf_spine: int
) -> None:
    got = design(gpus, "qm9700")  # rail_optimized and management_ports auto are the defaults
    assert got.nodes == nodes == 32 * su - 1
    assert got.switches == {"leaf": leaf, "spine": spine, "core": 0}
    assert got.links["node_leaf"] + got.links["management"] == compute == 8 * nodes + 4
    assert got.links["leaf_spine"] == leaf_spine
    assert (got.tiers, got.spine_groups, got.hosts_per_leaf, got.rail_aligned) == (2, 1, 32, True)
    assert got.worst_case_switch_hops == 3


# SU, nodes, GPUs, leaf, spine, node-leaf, leaf-spine
B300_SUPERPOD = [
    (1, 64, 512, 16, 8, 512, 512),
    (2, 128, 1024, 32, 16, 1024, 1024),
    (4, 256, 2048, 64, 32, 2048, 2048),
    (8, 512, 4096, 128, 64, 4096, 4096),
    (16, 1024, 8192, 256, 128, 8192, 8192),
]


@pytest.mark.parametrize(
    ("su", "nodes", "gpus", "leaf", "spine", "node_leaf", "leaf_spine"), B300_SUPERPOD
)
def test_dgx_b300_superpod(
    su: int, nodes: int, gpus: int, leaf: int, spine: int, node_leaf: int, leaf_spine: int
) -> None:
    got = design(gpus, {"ports": 64, "port_speed_gbps": 400}, management_ports=0)
    assert got.nodes == nodes == 64 * su
    assert got.switches == {"leaf": leaf, "spine": spine, "core": 0}
    assert got.links == {"node_leaf": node_leaf, "leaf_spine": leaf_spine}
    assert got.tiers == 2
    # One spine set of 64-port spines reaches at most 64 leaves (4 SU); beyond, one set per rail.
    assert got.spine_groups == (1 if leaf <= 64 else 8)


# SU, nodes, GPUs as published, leaf, spine, node-leaf, leaf-spine
B300_XDR_SUPERPOD = [
    (1, 72, 576, 8, 4, 576, 576),
    (2, 144, 1152, 16, 8, 1152, 1152),
    (4, 288, 2304, 32, 18, 2304, 2304),
    (8, 576, 4608, 64, 36, 4608, 4608),
    (18, 1296, 9216, 144, 72, 10368, 10368),
]


@pytest.mark.parametrize(
    ("su", "nodes", "published_gpus", "leaf", "spine", "node_leaf", "leaf_spine"), B300_XDR_SUPERPOD
)
def test_dgx_b300_xdr_superpod(
    su: int, nodes: int, published_gpus: int, leaf: int, spine: int, node_leaf: int, leaf_spine: int
) -> None:
    got = design(nodes * 8, "q3400", speed=800, management_ports=0)
    assert (got.radix, got.nodes) == (144, nodes)
    assert got.switches == {"leaf": leaf, "spine": spine, "core": 0}
    assert got.links == {"node_leaf": node_leaf, "leaf_spine": leaf_spine}
    assert got.spine_groups == 1
    if su == 18:
        # The published 9,216 GPUs disagree with the row's 1,296 nodes and 10,368 node-leaf
        # cables; 10,368 = 144^2/2 is the 2-tier limit of a 144-port switch, reached exactly.
        assert got.gpus == node_leaf == 144**2 // 2 != published_gpus
        assert got.headroom_gpus == 0
        assert (
            design(published_gpus, "q3400", speed=800, management_ports=0).switches["leaf"] != leaf
        )
    else:
        assert got.gpus == published_gpus


def test_dgx_b200_superpod_two_su() -> None:
    got = design(512, "qm9700", management_ports=0)
    assert got.switches == {"leaf": 16, "spine": 8, "core": 0}
    assert got.links == {"node_leaf": 512, "leaf_spine": 512}


def test_dgx_b200_superpod_sixteen_su_at_three_tiers() -> None:
    # The B200 RA keeps every NIC reachable from every NIC at 16 SU with a core tier; auto
    # would choose per-rail spines (fewer switches), so the RA's choice is forced here.
    got = design(4096, "qm9700", management_ports=0, tiers=3)
    assert got.switches == {"leaf": 128, "spine": 128, "core": 64}
    assert got.links == {"node_leaf": 4096, "leaf_spine": 4096, "spine_core": 4096}
    assert got.worst_case_switch_hops == 5


def test_deepseek_multi_plane_fat_tree() -> None:
    # 8 planes x (2-tier fat tree of 2,048 endpoints and 96 switches) = 16,384 / 768.
    got = design(16_384, "qm9700", management_ports=0, topology="fat_tree", planes=8)
    assert got.endpoints == 16_384 and got.tiers == 2
    assert sum(got.switches.values()) == 768
    # The same endpoints as one plane need the third tier.
    assert design(16_384, "qm9700", management_ports=0, topology="fat_tree").tiers == 3


def test_deepseek_three_tier_fat_tree_of_64_port_switches() -> None:
    got = design(65_536, "qm9700", management_ports=0, topology="fat_tree")
    assert (got.endpoints, sum(got.switches.values())) == (65_536, 5_120)


def test_asterfusion_256_gpu_rail_optimized() -> None:
    got = design(256, {"ports": 128, "port_speed_gbps": 400}, tech="roce_v2", gpus_per_node=4)
    assert got.switches == {"leaf": 4, "spine": 2, "core": 0}
