"""The forwarding table per (switch, destination leaf) gives, at every switch and for every
destination host, exactly the equal-cost next links of a table kept per (switch, host)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path
from tests.fabrics import k_ary_fat_tree, leaf_spine_graph

from fabricplan.sim.packet.forwarding import DELIVER, forwarding_table
from fabricplan.sim.packet.network import (
    PacketNetwork,
    dumbbell,
    network_from_graph,
    ring,
    star,
)
from fabricplan.topology.graph import reverse_links, with_failures


def per_host_next_links(net: PacketNetwork) -> dict[tuple[int, int], list[int]]:
    """Reference: breadth-first distances to every host over live links; from switch ``v``
    towards host ``d`` every live link to a vertex one hop closer (and finite) is a choice."""
    n = net.vertices
    up = net.link_speed_gbps > 0
    adj = csr_matrix((np.ones(int(up.sum())), (net.link_dst[up], net.link_src[up])), shape=(n, n))
    dist = shortest_path(adj, method="D", unweighted=True, indices=np.arange(net.hosts))
    table: dict[tuple[int, int], list[int]] = {}
    for sw in range(net.switches):
        v = net.hosts + sw
        out = np.flatnonzero((net.link_src == v) & up)
        for d in range(net.hosts):
            closer = np.isfinite(dist[d, v]) & (dist[d, net.link_dst[out]] == dist[d, v] - 1)
            table[(sw, d)] = sorted(int(link) for link in out[closer])
    return table


def assert_same_table(net: PacketNetwork) -> None:
    table = forwarding_table(net)
    reference = per_host_next_links(net)
    sw, d = np.meshgrid(np.arange(net.switches), np.arange(net.hosts), indexing="ij")
    got = table.options(sw.ravel(), d.ravel())
    for (s, h), links in zip(zip(sw.ravel(), d.ravel(), strict=True), got, strict=True):
        assert links == reference[(int(s), int(h))], (int(s), int(h))


def _designed(graph_and_valid: tuple[object, object], failed: int = 0) -> PacketNetwork:
    graph = graph_and_valid[0]
    if failed:
        spine_links = np.flatnonzero(
            (graph.link_src >= graph.hosts) & (graph.link_dst >= graph.hosts)  # type: ignore[attr-defined]
        )[:failed]
        graph = with_failures(
            graph, np.concatenate([spine_links, reverse_links(graph, spine_links)])
        )  # type: ignore[arg-type]
    return network_from_graph(graph, 1e6)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "net",
    [
        star(3),
        dumbbell(2),
        ring(5, hosts_per_switch=2),
        _designed(leaf_spine_graph(leaves=4, spines=2, hosts_per_leaf=2)),
        _designed(k_ary_fat_tree(4)),
        _designed(k_ary_fat_tree(4), failed=3),
    ],
    ids=["star", "dumbbell", "ring", "leaf-spine", "k4-fat-tree", "k4-three-cables-down"],
)
def test_leaf_rows_equal_the_per_host_table(net: PacketNetwork) -> None:
    assert_same_table(net)


@given(
    switches=st.integers(3, 7),
    per_switch=st.integers(1, 3),
    dead=st.lists(st.integers(0, 6), max_size=3, unique=True),
)
def test_leaf_rows_equal_the_per_host_table_on_rings_with_cables_down(
    switches: int, per_switch: int, dead: list[int]
) -> None:
    net = ring(switches, hosts_per_switch=per_switch)
    hosts = net.hosts
    speed = net.link_speed_gbps.copy()
    trunks = np.flatnonzero((net.link_src >= hosts) & (net.link_dst >= hosts))
    for t in dead:
        if t < trunks.size:
            speed[trunks[t]] = 0.0
            speed[net.link_rev[trunks[t]]] = 0.0
    assert_same_table(PacketNetwork(**{**_fields(net), "link_speed_gbps": speed}))


def _fields(net: PacketNetwork) -> dict[str, object]:
    return {
        "hosts": net.hosts,
        "switches": net.switches,
        "link_src": net.link_src,
        "link_dst": net.link_dst,
        "link_speed_gbps": net.link_speed_gbps,
        "link_delay_ns": net.link_delay_ns,
        "switch_buffer_bytes": net.switch_buffer_bytes,
    }


def test_a_host_whose_link_is_down_has_no_route_anywhere() -> None:
    net = dumbbell(2)
    speed = net.link_speed_gbps.copy()
    speed[net.host_down_link[3]] = 0.0
    table = forwarding_table(PacketNetwork(**{**_fields(net), "link_speed_gbps": speed}))
    assert table.options(np.array([0, 1]), np.array([3, 3])) == [[], []]
    assert table.options(np.array([1]), np.array([2])) == [[int(net.host_down_link[2])]]


def test_rows_share_groups_instead_of_one_list_per_host() -> None:
    net = _designed(k_ary_fat_tree(8))  # 128 hosts, 32 leaves, 80 switches
    table = forwarding_table(net)
    assert table.group.shape == (80, 32 + 1)
    assert (table.group == DELIVER).sum() == 32
    # groups: the empty one; each edge and each aggregation switch's uplinks; each aggregation
    # switch's link down to each of its pod's 4 leaves; each core's link down to each of the
    # 8 pods (shared by the pod's 4 leaves)
    assert table.groups == 1 + 32 + 32 + 32 * 4 + 16 * 8
