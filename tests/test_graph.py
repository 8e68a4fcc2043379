"""The fabric graph: every link where the design semantics put it, and up-down routing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import ModelError
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import (
    CORE_TO_SPINE,
    LEAF_TO_SPINE,
    NODE_TO_LEAF,
    SPINE_TO_CORE,
    FabricGraph,
    fabric_graph,
    with_failures,
)
from fabricplan.topology.routing import path_choices, route, trunk_route
from fabrics import k_ary_fat_tree, leaf_spine_graph


def _check_paths(graph: FabricGraph, src: np.ndarray, dst: np.ndarray, paths: np.ndarray) -> None:
    """Each path is a chain of live links from the source host to the destination host that
    goes up, then down, never up again."""
    for s, d, path in zip(src, dst, paths, strict=True):
        links = path[path >= 0]
        assert graph.link_src[links[0]] == s
        assert graph.link_dst[links[-1]] == d
        assert (graph.link_dst[links[:-1]] == graph.link_src[links[1:]]).all()
        assert graph.link_alive[links].all()
        ups = np.isin(graph.link_tier[links], (NODE_TO_LEAF, LEAF_TO_SPINE, SPINE_TO_CORE))
        assert not (np.diff(ups.astype(int)) > 0).any(), "went up after going down"


def test_superpod_one_su_is_rail_optimized() -> None:
    # DGX H100 SuperPOD: 32 nodes on 8 rail leaves; same-rail NICs are one switch apart.
    valid = parse_spec(
        {
            "cluster": {"gpus": 256},
            "fabric": {
                "technologies": ["infiniband"],
                "topology": "rail_optimized",
                "management_ports": 0,
            },
        }
    )
    graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
    assert graph.leaves == 8
    rail = np.arange(graph.hosts) % 8
    assert (graph.host_leaf == rail).all()
    paths = route(graph, np.array([0, 0]), np.array([8 * 31, 8 * 31 + 5]), "dmodk")
    assert [int((p >= 0).sum()) for p in paths] == [2, 4]


def test_k16_three_tier_fat_tree_from_the_designer() -> None:
    valid = parse_spec(
        {
            "cluster": {
                "gpus": 1024,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": 100,
                "nic": {"speed_gbps": 100},
            },
            "fabric": {
                "technologies": ["roce_v2"],
                "topology": "fat_tree",
                "management_ports": 0,
                "switch": {"roce_v2": {"ports": 16, "port_speed_gbps": 100}},
            },
        }
    )
    graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    # k=16: k^3/4 hosts, k^2/2 edge and aggregation switches, k^2/4 cores, all ports used.
    assert (graph.hosts, graph.leaves, graph.spines, graph.cores) == (1024, 128, 128, 64)
    degree = np.bincount(graph.link_src, minlength=graph.vertices)[graph.hosts :]
    assert (degree == 16).all()
    src = np.arange(0, 1024, 37)
    dst = (src * 7 + 500) % 1024
    dst = np.where(dst == src, (dst + 1) % 1024, dst)
    key = np.arange(src.size, dtype=np.uint64)
    for mode in ("dmodk", "hash"):
        _check_paths(graph, src, dst, route(graph, src, dst, mode, key))
    # Across pods: (k/2)^2 = 64 equal-cost paths; same pod: k/2 = 8.
    assert path_choices(graph, np.array([0, 0]), np.array([1023, 9])).tolist() == [64, 8]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_route_is_an_up_down_chain(data: st.DataObject) -> None:
    graph, _ = k_ary_fat_tree(4)
    src = np.array(data.draw(st.lists(st.integers(0, 15), min_size=1, max_size=20)))
    dst = np.array([(s + data.draw(st.integers(1, 15))) % 16 for s in src])
    key = np.array(
        data.draw(st.lists(st.integers(0, 2**63), min_size=src.size, max_size=src.size)),
        dtype=np.uint64,
    )
    for mode in ("dmodk", "hash"):
        _check_paths(graph, src, dst, route(graph, src, dst, mode, key))


def test_dmodk_gives_a_shift_permutation_distinct_links() -> None:
    # Zahavi 2010: D-mod-K routes shift permutations on a full fat tree without contention.
    graph, _ = k_ary_fat_tree(4)
    for shift in (1, 2, 4, 8):
        src = np.arange(16)
        paths = route(graph, src, (src + shift) % 16, "dmodk")
        used = paths[paths >= 0]
        assert np.bincount(used).max() == 1, shift


def test_ecmp_spreads_with_the_seed() -> None:
    graph, _ = leaf_spine_graph(leaves=2, spines=4, hosts_per_leaf=4)
    src, dst = np.zeros(64, dtype=np.int64), np.full(64, 4)
    key = np.arange(64, dtype=np.uint64)
    uplinks = {int(route(graph, src, dst, "hash", key, salt=s)[0, 1]) for s in range(16)}
    assert len(uplinks) > 1
    # One seed and key always give the same path.
    a = route(graph, src, dst, "hash", key, salt=3)
    assert (a == route(graph, src, dst, "hash", key, salt=3)).all()
    # Over many flows, every uplink gets some.
    assert len(np.unique(a[:, 1])) == 4


def test_routes_avoid_failed_links_and_switches() -> None:
    graph, _ = k_ary_fat_tree(4)
    spine0 = graph.hosts + graph.leaves
    # Leaf 0 keeps only aggregation switch 0; pod 2 loses aggregation switch 1.
    broken = with_failures(graph, links=[int(graph.leaf_up_links[0, 1])], switches=[spine0 + 5])
    src = np.repeat(np.arange(16), 15)
    dst = np.array([d for s in range(16) for d in range(16) if d != s])
    for mode in ("dmodk", "hash"):
        paths = route(broken, src, dst, mode, np.arange(src.size, dtype=np.uint64))
        _check_paths(broken, src, dst, paths)


def test_a_cut_off_host_is_unreachable() -> None:
    graph, _ = leaf_spine_graph()
    broken = with_failures(graph, links=[int(graph.host_down_link[3])])
    with pytest.raises(ModelError) as err:
        route(broken, np.array([0]), np.array([3]), "dmodk")
    assert err.value.code == "FP532"


def test_planes_do_not_meet() -> None:
    valid = parse_spec(
        {"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"], "planes": 2}}
    )
    graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    assert graph.planes == 2
    # NIC port 0 is in plane 0, port 1 in plane 1.
    assert graph.host_domain[0] != graph.host_domain[1]
    with pytest.raises(ModelError) as err:
        route(graph, np.array([0]), np.array([9]), "dmodk")
    assert err.value.code == "FP531"


def test_trunk_capacity_is_the_sum_of_live_links() -> None:
    graph, _ = k_ary_fat_tree(4)
    trunks = trunk_route(graph, np.array([0]), np.array([15]))[0]
    assert (trunks >= 0).all()  # host, leaf up, pod up, pod down, leaf down, host
    caps = graph.trunk_capacity_gbps()[trunks]
    # k/2 = 2 uplinks per leaf; a pod's 2 aggregation switches have 2 core links each.
    assert caps.tolist() == [100, 200, 400, 400, 200, 100]
    failed = with_failures(graph, links=[int(graph.spine_up_links[0, 0])])
    assert failed.trunk_capacity_gbps()[trunks[2]] == 300
    assert graph.link_tier[graph.spine_up_links[0, 0]] == SPINE_TO_CORE
    assert graph.link_tier[graph.link_reverse[graph.spine_up_links[0, 0]]] == CORE_TO_SPINE


def test_a_single_switch_routes_every_pair_in_two_hops() -> None:
    valid = parse_spec(
        {
            "cluster": {
                "gpus": 16,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": 100,
                "nic": {"speed_gbps": 100},
            },
            "fabric": {
                "technologies": ["infiniband"],
                "management_ports": 0,
                "switch": {"infiniband": {"ports": 16, "port_speed_gbps": 100}},
            },
        }
    )
    graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
    assert (graph.tiers, graph.leaves, graph.links) == (1, 1, 32)
    src, dst = np.arange(16), (np.arange(16) + 5) % 16
    for paths in (route(graph, src, dst, "dmodk"), trunk_route(graph, src, dst)):
        assert ((paths >= 0).sum(axis=1) == 2).all()
