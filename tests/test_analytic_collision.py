"""ECMP hash collisions as balls into bins, checked against enumeration of every assignment."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.analytic.collision import (
    EXACT_FLOW_LIMIT,
    adaptive_throughput,
    expected_max_load,
    hashed_throughput,
    max_load_cdf,
)


def enumerate_max_loads(flows: int, paths: int) -> list[int]:
    """The busiest path's load for each of the paths**flows equally likely hash outcomes."""
    loads = []
    for choice in itertools.product(range(paths), repeat=flows):
        loads.append(max(choice.count(p) for p in range(paths)))
    return loads


@pytest.mark.parametrize(("flows", "paths"), [(1, 1), (2, 2), (3, 3), (4, 2), (5, 4), (6, 3)])
def test_expected_max_load_matches_enumeration(flows: int, paths: int) -> None:
    loads = enumerate_max_loads(flows, paths)
    assert expected_max_load(flows, paths) == pytest.approx(sum(loads) / len(loads), rel=1e-9)


def test_two_flows_on_two_paths_collide_half_the_time() -> None:
    # Outcomes: (a,a) (b,b) collide, (a,b) (b,a) do not -> E[max] = 1.5.
    assert expected_max_load(2, 2) == pytest.approx(1.5)
    # Each flow wants a whole path: the colliding half takes twice as long.
    assert hashed_throughput(2, 2, demand_ratio=1.0) == pytest.approx(1 / 1.5)


@pytest.mark.parametrize(("flows", "paths", "demand"), [(3, 3, 1.0), (4, 2, 0.5), (5, 4, 0.8)])
def test_throughput_is_inverse_expected_slowdown(flows: int, paths: int, demand: float) -> None:
    loads = enumerate_max_loads(flows, paths)
    slowdown = sum(max(1.0, demand * m) for m in loads) / len(loads)
    assert hashed_throughput(flows, paths, demand) == pytest.approx(1 / slowdown, rel=1e-9)


def test_two_stages_take_the_busiest_path_of_either() -> None:
    # Two independent hashes of 2 flows on 2 paths: no collision in either with p = 1/4.
    assert hashed_throughput(2, 2, 1.0, stages=2) == pytest.approx(1 / (0.25 * 1 + 0.75 * 2))


def test_collision_loss_vanishes_when_paths_far_outnumber_flows() -> None:
    losses = [1 - hashed_throughput(4, paths, 1.0) for paths in (4, 64, 4096)]
    assert losses[0] > 0.3
    assert losses == sorted(losses, reverse=True)
    # Birthday bound: P(any collision) <= C(4,2)/P, and a collision costs at most 4x.
    assert losses[2] <= 4 * math.comb(4, 2) / 4096


def test_many_flows_per_path_average_out() -> None:
    # The law of large numbers: with 1000 flows per path the busiest is barely above the mean.
    mean = 64_000 / 64
    assert expected_max_load(64_000, 64) / mean < 1.15
    assert hashed_throughput(64_000, 64, 1 / mean) > 0.85


def test_adaptive_routing_has_no_collision_loss() -> None:
    assert adaptive_throughput(2, 2, 1.0) == 1.0
    assert adaptive_throughput(1000, 64, 64 / 1000) == pytest.approx(1.0)
    # Only capacity limits it: 2 full-rate flows per path get half each.
    assert adaptive_throughput(128, 64, 1.0) == 0.5


def test_approximation_joins_the_exact_computation() -> None:
    flows = EXACT_FLOW_LIMIT
    exact = expected_max_load(flows, 32)
    approximate = expected_max_load(flows + 1, 32)  # one more flow: the approximate branch
    assert approximate == pytest.approx(exact + 1 / 32, rel=0.01)


def test_cdf_of_three_flows_on_three_paths() -> None:
    k0, cdf = max_load_cdf(3, 3)
    assert k0 == 1
    assert list(cdf) == pytest.approx([6 / 27, 24 / 27, 1.0])


@settings(max_examples=60, deadline=None)
@given(flows=st.integers(1, 600), paths=st.integers(1, 128))
def test_expected_max_load_is_bounded(flows: int, paths: int) -> None:
    value = expected_max_load(flows, paths)
    assert math.ceil(flows / paths) - 1e-9 <= value <= flows + 1e-9


@settings(max_examples=60, deadline=None)
@given(
    flows=st.integers(1, 400),
    paths=st.integers(1, 64),
    demand=st.floats(0.01, 2.0),
    stages=st.integers(1, 3),
)
def test_hashing_never_beats_adaptive_routing(
    flows: int, paths: int, demand: float, stages: int
) -> None:
    hashed = hashed_throughput(flows, paths, demand, stages)
    assert 0 < hashed <= adaptive_throughput(flows, paths, demand) + 1e-9
