"""Fat-tree builders: the k-ary limits, the leaf split, tier choice and conservation properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import DesignError
from fabricplan.topology.fat_tree import (
    FatTree,
    fat_tree,
    leaf_split,
    rail_optimized,
    smallest_divisor_at_least,
)

RADICES = (16, 40, 64, 144)
"""QM8700 (40 @200G), QM9700 / SN5600 (64), Q3400 (144), and the textbook k=16."""


@pytest.mark.parametrize("k", RADICES)
def test_two_tier_limit_is_k_squared_over_two_with_3k_over_2_switches(k: int) -> None:
    # k leaves with k/2 hosts each, k/2 spines each with one link to every leaf.
    plane = fat_tree(k * k // 2, k)
    assert (plane.tiers, plane.leaves, plane.spines) == (2, k, k // 2)
    assert plane.switches == 3 * k // 2
    assert plane.spine_down_ports == k  # every spine port is used
    assert fat_tree(k * k // 2 + 1, k).tiers == 3


@pytest.mark.parametrize("k", RADICES)
def test_three_tier_limit_is_k_cubed_over_four_with_5k_squared_over_4_switches(k: int) -> None:
    # k pods of k/2 edge + k/2 aggregation switches, (k/2)^2 core switches (Al-Fares 2008).
    plane = fat_tree(k**3 // 4, k)
    assert plane.tiers == 3
    assert (plane.leaves, plane.spines, plane.cores) == (k * k // 2, k * k // 2, k * k // 4)
    assert plane.switches == 5 * k * k // 4
    assert plane.pods == k
    assert plane.worst_case_switch_hops == 5
    with pytest.raises(DesignError) as err:
        fat_tree(k**3 // 4 + 1, k)
    assert err.value.code == "FP302"


@pytest.mark.parametrize("k", RADICES)
def test_one_switch_takes_k_host_ports(k: int) -> None:
    plane = fat_tree(k, k)
    assert (plane.tiers, plane.switches, plane.worst_case_switch_hops) == (1, 1, 1)
    assert fat_tree(k + 1, k).tiers == 2


def test_leaf_split_at_common_ratios() -> None:
    assert leaf_split(64, 1) == (32, 32)
    assert leaf_split(64, 3) == (48, 16)
    assert leaf_split(48, 2) == (32, 16)
    # 64 * 2/3 = 42.7 -> 42 host ports, 21 uplinks, one port free: exactly 2:1.
    assert leaf_split(64, 2) == (42, 21)
    # 1.1 is read as 11/10: 33 host ports need 30 uplinks, not 31.
    assert leaf_split(64, 1.1) == (33, 30)


@given(radix=st.integers(2, 600), ratio=st.floats(1.0, 64.0))
def test_leaf_split_never_exceeds_the_ratio_or_the_radix(radix: int, ratio: float) -> None:
    down, up = leaf_split(radix, ratio)
    assert down >= 1 and up >= 1
    assert down + up <= radix
    assert down <= ratio * up + 1e-9
    # One uplink fewer would break the ratio: the leaf uses the fewest uplinks.
    assert up == 1 or down > ratio * (up - 1) - 1e-9


def test_smallest_divisor_reproduces_the_superpod_spine_counts() -> None:
    # H100 (k=64, u=32): 8/16/24/32 leaves need ceil(L*32/64) spines -> 4/8/16/16.
    assert [smallest_divisor_at_least(32, math.ceil(n * 32 / 64)) for n in (8, 16, 24, 32)] == [
        4,
        8,
        16,
        16,
    ]
    # B300-XDR (k=144, u=72): 32 leaves need >= 16 spines; 18 is the smallest divisor of 72.
    assert smallest_divisor_at_least(72, 16) == 18


def test_forced_tiers_too_few_names_the_fix() -> None:
    with pytest.raises(DesignError) as err:
        fat_tree(20_000, 64, tiers=2)
    assert err.value.code == "FP301"
    assert "needs 3 tiers for 20000 host ports" in str(err.value)
    assert "set tiers: 3 or auto" in str(err.value)


def test_forced_three_tiers_on_a_small_fabric_builds_one_pod() -> None:
    plane = fat_tree(64, 16, tiers=3)
    assert (plane.tiers, plane.leaves, plane.pods) == (3, 8, 1)
    assert plane.worst_case_switch_hops == 3  # one pod: the core is never crossed


def test_two_to_one_halves_leaf_uplinks_per_host() -> None:
    # 192 host ports on 48-port leaves: 8 leaves x 24 uplinks at 1:1, 6 x 16 at 2:1.
    one, two = fat_tree(192, 48, 1.0), fat_tree(192, 48, 2.0)
    assert one.leaf_spine_links == 192
    assert two.leaf_spine_links == 96
    assert two.tier_designs()[0].oversubscription == 2.0


def test_rail_optimized_leaves_are_units_times_rails() -> None:
    plane = rail_optimized(nodes=100, rails=8, radix=64)
    # SU = 32 node slots (the leaf's host ports); 100 nodes -> 4 SUs -> 32 leaves.
    assert (plane.hosts_per_leaf, plane.leaves, plane.rail_aligned) == (32, 32, True)
    assert plane.leaf_fill == ((24, 32), (8, 4))


def test_rail_optimized_per_rail_spines_only_when_one_set_cannot_reach() -> None:
    # 64 leaves fit one spine set of 64-port spines; 72 do not, so each rail gets its own.
    assert rail_optimized(256, 8, 64).spine_groups == 1
    split = rail_optimized(288, 8, 64)
    assert (split.tiers, split.spine_groups, split.leaves_per_pod) == (2, 8, 9)
    assert rail_optimized(288, 8, 64, tiers=3).spine_groups == 1


def test_rail_optimized_grows_by_whole_units() -> None:
    # 36-port leaves: 18 node slots per SU; one spine set reaches 36 leaves, but 8-rail SUs
    # come in 8 leaves, so 4 SUs (32 leaves, 72 nodes) is the most before a change.
    plane = rail_optimized(nodes=10, rails=8, radix=36)
    assert (plane.leaves, plane.spine_groups) == (8, 1)
    assert plane.max_host_ports == 4 * 18 * 8
    # One partly filled SU: each leaf cables the 10 uplinks its 10 nodes need, not 18.
    assert (plane.hosts_per_leaf, plane.leaf_up_ports) == (10, 10)
    assert plane.leaf_spine_links == 8 * 10


def test_a_full_unit_cables_every_uplink() -> None:
    plane = rail_optimized(nodes=18, rails=8, radix=36)
    assert (plane.hosts_per_leaf, plane.leaf_up_ports) == (18, 18)
    # Two SUs, the second partly filled: SUs are built whole (the SuperPOD rule).
    two = rail_optimized(nodes=20, rails=8, radix=36)
    assert (two.leaves, two.leaf_up_ports) == (16, 18)


def test_rail_optimized_three_tier_pods_hold_whole_units() -> None:
    plane = rail_optimized(3 * 64 * 32, 8, 64)  # 192 SUs x 8 rails = 1536 leaves
    assert plane.tiers == 3
    assert plane.leaves_per_pod % 8 == 0


def _check_plane(plane: FatTree, node_ports: int) -> None:
    for tier in plane.tier_designs():
        # No switch has more ports in use than it has.
        assert tier.down_ports + tier.up_ports <= tier.radix, tier
        assert 0 <= tier.ports_used <= tier.switches * tier.radix
    # Every host port has a leaf port.
    assert plane.leaves * plane.hosts_per_leaf >= plane.host_ports
    assert sum(count for count, _ in plane.leaf_fill) == plane.leaves
    assert sum(count * ports for count, ports in plane.leaf_fill) == node_ports
    assert all(ports <= plane.hosts_per_leaf for _, ports in plane.leaf_fill)
    # Links are conserved: leaf uplinks land on spine downlinks, spine uplinks on core ports.
    assert plane.leaf_spine_links == plane.spine_down_links
    assert plane.spine_core_links == plane.cores * plane.core_down_ports
    if plane.tiers >= 2:
        assert plane.spine_down_links <= plane.spines * plane.spine_down_ports
        # Uplinks divide evenly over the spines of a group (or the aggregation of a pod).
        per_set = plane.spines // (plane.spine_groups if plane.tiers == 2 else plane.pods)
        assert plane.leaf_up_ports % per_set == 0
    assert plane.host_ports <= plane.max_host_ports


RATIOS = st.sampled_from([1.0, 1.5, 2.0, 3.0, 7 / 3, 4.7])


@settings(max_examples=300, deadline=None)
@given(
    radix=st.integers(2, 160), ratio=RATIOS, share=st.floats(0.0, 1.0), management=st.integers(0, 4)
)
def test_fat_tree_properties(radix: int, ratio: float, share: float, management: int) -> None:
    down, _ = leaf_split(radix, ratio)
    most = radix * (radix // 2) * down
    endpoints = max(1, min(most - management, round(share * most)))
    if endpoints + management > most:
        return
    plane = fat_tree(endpoints, radix, ratio, None, management)
    _check_plane(plane, endpoints)
    if plane.tiers > 1:
        assert plane.hosts_per_leaf <= ratio * plane.leaf_up_ports + 1e-9


@settings(max_examples=300, deadline=None)
@given(
    radix=st.integers(2, 160),
    ratio=RATIOS,
    rails=st.integers(1, 8),
    share=st.floats(0.0, 1.0),
    management=st.integers(0, 4),
)
def test_rail_optimized_properties(
    radix: int, ratio: float, rails: int, share: float, management: int
) -> None:
    down, _ = leaf_split(radix, ratio)
    nodes = max(1, round(share * radix * down))
    try:
        plane = rail_optimized(nodes, rails, radix, ratio, None, management)
    except DesignError as err:
        assert err.code == "FP302"
        return
    _check_plane(plane, nodes * rails)
    assert plane.rail_aligned
    if plane.tiers > 1:
        # Growth comes in whole scalable units of ``rails`` leaves; no leaf beyond the densest
        # split, and no leaf above the asked ratio (to the port).
        assert plane.max_host_ports % rails == 0
        assert plane.hosts_per_leaf <= down
        assert plane.hosts_per_leaf <= ratio * plane.leaf_up_ports + 1e-9
