"""`--fail-switch` names: every switch of the fabric is found by its name, and a name that is not
one gets a fix listing only the tiers the fabric has."""

from __future__ import annotations

import dataclasses

import pytest

from fabricplan.errors import ModelError
from fabricplan.sim.failure import switch_vertex
from fabrics import k_ary_fat_tree, leaf_spine_graph


def test_every_switch_of_a_fat_tree_has_its_vertex() -> None:
    graph, _ = k_ary_fat_tree(4)  # 8 leaves, 8 spines, 4 cores after 16 hosts
    assert switch_vertex(graph, "leaf0") == 16
    assert switch_vertex(graph, "spine7") == 16 + 8 + 7
    assert switch_vertex(graph, "core3") == 16 + 8 + 8 + 3


def test_a_one_switch_fabric_names_its_one_switch() -> None:
    graph, _ = leaf_spine_graph(leaves=1, spines=1)
    single = dataclasses.replace(graph, spines=0, cores=0)  # the one-switch plane: no spine tier
    with pytest.raises(ModelError) as caught:
        switch_vertex(single, "spine0")
    assert caught.value.code == "FP537"
    assert str(caught.value).endswith("use leaf0 [FP537]"), str(caught.value)
    assert "spine" not in str(caught.value).split(";")[-1]


def test_a_wrong_name_lists_the_ranges_of_each_tier() -> None:
    graph, _ = k_ary_fat_tree(4)
    with pytest.raises(ModelError) as caught:
        switch_vertex(graph, "core4")
    assert "use leaf0..leaf7, spine0..spine7, core0..core3" in str(caught.value)
