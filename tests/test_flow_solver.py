"""The max-min solver: feasible, fair (every flow has a bottleneck), back-pressure upstream only."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.sim.flow.solver import add_along_paths, maxmin_rates

HOPS = 4


@st.composite
def problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    resources = draw(st.integers(1, 12))
    flows = draw(st.integers(1, 30))
    paths = np.full((flows, HOPS), -1, dtype=np.int32)
    for f in range(flows):
        length = draw(st.integers(1, min(HOPS, resources)))
        path = draw(
            st.lists(st.integers(0, resources - 1), min_size=length, max_size=length, unique=True)
        )
        paths[f, :length] = path
    cap = np.array(draw(st.lists(st.floats(0.5, 100.0), min_size=resources, max_size=resources)))
    return paths, cap


def _load(paths: np.ndarray, rates: np.ndarray, resources: int) -> np.ndarray:
    out = np.zeros(resources)
    add_along_paths(paths, np.arange(len(paths)), rates, out)
    return out


@settings(max_examples=200, deadline=None)
@given(problems())
def test_maxmin_is_feasible_and_every_flow_has_a_bottleneck(
    problem: tuple[np.ndarray, np.ndarray],
) -> None:
    paths, cap = problem
    rates, paused = maxmin_rates(paths, np.arange(len(paths)), cap, hol=False)
    load = _load(paths, rates, cap.size)
    assert (load <= cap * (1 + 1e-9)).all()
    assert not paused.any()
    # Max-min fairness (Bertsekas & Gallager, Data Networks, 6.5.2): every flow crosses a
    # saturated resource on which no flow gets more than it does.
    for f, path in enumerate(paths):
        path = path[path >= 0]
        on = [r for r in path if abs(load[r] - cap[r]) <= 1e-9 * cap[r]]
        assert any(
            rates[f] >= max(rates[g] for g in range(len(paths)) if r in paths[g]) * (1 - 1e-9)
            for r in on
        ), f


@settings(max_examples=200, deadline=None)
@given(problems())
def test_back_pressure_is_feasible_and_pauses_only_links_upstream_of_congestion(
    problem: tuple[np.ndarray, np.ndarray],
) -> None:
    paths, cap = problem
    rates, paused = maxmin_rates(paths, np.arange(len(paths)), cap, hol=True)
    load = _load(paths, rates, cap.size)
    assert (load <= cap * (1 + 1e-9)).all()
    assert (rates > 0).all()
    # A paused resource is never the last hop of every flow crossing it.
    for r in np.flatnonzero(paused):
        positions = [list(p[p >= 0]).index(r) for p in paths if r in p]
        lengths = [int((p >= 0).sum()) for p in paths if r in p]
        assert any(pos < length - 1 for pos, length in zip(positions, lengths, strict=True))


def test_k_flows_on_one_link_share_it_equally() -> None:
    k = 5
    paths = np.array([[i, k] for i in range(k)], dtype=np.int32)  # own first hop, shared second
    cap = np.array([10.0] * k + [1.0])
    rates, _ = maxmin_rates(paths, np.arange(k), cap, hol=False)
    assert np.allclose(rates, 1.0 / k)


def test_a_victim_behind_a_paused_link_waits_for_the_congested_flow() -> None:
    # Flows 0 and 1 share link 2 (capacity 1); flow 2 shares link 1 with flow 1 only.
    paths = np.array([[0, 2], [1, 2], [1, 3]], dtype=np.int32)
    cap = np.array([10.0, 10.0, 1.0, 10.0])
    fair, _ = maxmin_rates(paths, np.arange(3), cap, hol=False)
    blocked, paused = maxmin_rates(paths, np.arange(3), cap, hol=True)
    assert fair.tolist() == [0.5, 0.5, 9.5]
    assert blocked.tolist() == [0.5, 0.5, 0.5]
    assert paused.tolist() == [True, True, False, False]
