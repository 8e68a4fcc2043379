"""A fat tree's host runs measured per stretch of hosts equal the runs measured NIC by NIC.

`layout_runs` lays a fat tree's node-leaf runs from :func:`fat_tree_stretches` (one row per
stretch of consecutive hosts sharing a rack and a leaf); :func:`hall_placement` places every
NIC. Both must give the same orderable lengths and counts for any cluster and leaf size.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.model.scenario import LayoutSpec
from fabricplan.topology.layout import _rack_placement, fat_tree_stretches, hall_placement


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    nodes=st.integers(1, 600),
    rails=st.sampled_from([1, 2, 4, 8]),
    planes=st.sampled_from([1, 2]),
    hosts_per_leaf=st.integers(1, 70),
    gpus_per_node=st.sampled_from([4, 8]),
)
def test_stretches_give_the_runs_of_every_nic(
    nodes: int, rails: int, planes: int, hosts_per_leaf: int, gpus_per_node: int
) -> None:
    layout = LayoutSpec()
    leaves = max(2, -(-nodes * rails // hosts_per_leaf))
    nics = rails * planes
    placed = hall_placement(
        layout, "fat_tree", leaves, hosts_per_leaf, planes, nodes, nics, gpus_per_node
    )
    per_nic = placed.hall.binned_between(
        placed.node_rack[:, None], placed.nic_leaf_rack, np.array(planes, dtype=np.int64)
    )
    hall, _, node_rack, _, _, leaf_rack = _rack_placement(
        layout, "fat_tree", leaves, hosts_per_leaf, rails, nodes, gpus_per_node, 0
    )
    racks, leaf_racks, hosts = fat_tree_stretches(node_rack, leaf_rack, rails, hosts_per_leaf)
    assert int(hosts.sum()) == nodes * rails
    assert hall.binned_between(racks, leaf_racks, hosts * planes) == per_nic
