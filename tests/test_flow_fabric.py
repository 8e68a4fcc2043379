"""The tiny named graphs of ``tests/fabrics.py`` expand as drawn."""

from __future__ import annotations

import numpy as np

from fabrics import k_ary_fat_tree, leaf_spine_graph


def test_leaf_spine_has_every_cable_twice() -> None:
    graph, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=2)
    # 4 host cables + 2 leaves x 2 uplinks, each in both directions.
    assert graph.links == 2 * (4 + 4)
    assert (graph.link_reverse[graph.link_reverse] == np.arange(graph.links)).all()
    assert (graph.link_src[graph.link_reverse] == graph.link_dst).all()


def test_k4_fat_tree_counts_match_al_fares() -> None:
    graph, _ = k_ary_fat_tree(4)
    assert (graph.hosts, graph.leaves, graph.spines, graph.cores) == (16, 8, 8, 4)
    assert (graph.pods, graph.spines_per_pod, graph.cores_per_group) == (4, 2, 2)
    # Every switch uses all k=4 ports: count directed links leaving each switch.
    out_degree = np.bincount(graph.link_src, minlength=graph.vertices)[graph.hosts :]
    assert (out_degree == 4).all()
