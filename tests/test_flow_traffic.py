"""Traffic builders: the bytes every collective puts on the fabric, placement, and the steps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import ModelError
from fabricplan.model.scenario import WorkloadSpec
from fabricplan.sim.pattern import (
    PATTERNS,
    pattern_traffic,
    scenario_traffic,
    workload_traffic,
)
from fabricplan.sim.traffic import (
    WEBSEARCH_CDF,
    GpuLayout,
    StepSpec,
    all_to_all,
    gpu_flows,
    incast,
    place_jobs,
    ring,
    sample_sizes,
    training_step,
    tree_all_reduce,
)

S = 2.0**20


@settings(max_examples=30, deadline=None)
@given(nodes=st.integers(2, 12), gpn=st.sampled_from([1, 2, 4, 8]))
def test_ring_all_reduce_moves_2_n_minus_1_over_n_per_rank(nodes: int, gpn: int) -> None:
    layout = GpuLayout(nodes * gpn, gpn, gpn)
    n = layout.gpus
    traffic = ring(layout, "all_reduce", S)
    # gpn rings, each crossing every node boundary once with 2(n-1)/n of its 1/gpn share:
    # every NIC port sends exactly 2(n-1)/n * S / gpn.
    sent = np.bincount(traffic.src, weights=traffic.size_bytes, minlength=n)
    assert np.allclose(sent, 2 * (n - 1) / n * S / gpn)
    assert traffic.total_bytes == pytest.approx(2 * (n - 1) / n * S * nodes)


def test_all_gather_reduce_scatter_and_broadcast_bytes() -> None:
    layout = GpuLayout(32, 8, 8)
    n, nodes = 32, 4
    assert ring(layout, "all_gather", S).total_bytes == pytest.approx((n - 1) / n * S * nodes)
    assert ring(layout, "reduce_scatter", S).total_bytes == pytest.approx((n - 1) / n * S * nodes)
    # A pipelined broadcast crosses nodes-1 boundaries with the whole buffer.
    assert ring(layout, "broadcast", S).total_bytes == pytest.approx(S * (nodes - 1))


def test_tree_all_reduce_sends_each_half_up_and_down_every_edge() -> None:
    layout = GpuLayout(64, 8, 8)
    traffic = tree_all_reduce(layout, S)
    nodes = 8
    # Two trees of nodes-1 edges each; each edge carries S/2 up and S/2 down.
    assert traffic.total_bytes == pytest.approx(2 * (nodes - 1) * S)


def test_all_to_all_sends_n_minus_1_over_n_per_rank_off_node_only() -> None:
    layout = GpuLayout(32, 8, 8)
    traffic = all_to_all(layout, S)
    # 8 of the 32 destinations share the node: only 24 / 32 of S leaves each GPU.
    assert traffic.total_bytes == pytest.approx(32 * 24 / 32 * S)
    assert traffic.flows == 32 * 24
    # Rail of the destination at both ends (PXN).
    assert ((traffic.src % 8) == (traffic.dst % 8)).all()


def test_several_planes_split_a_connection_over_the_gpus_ports() -> None:
    layout = GpuLayout(16, 8, 16)  # two NIC ports per GPU (e.g. two planes)
    traffic = gpu_flows(layout, np.array([0]), np.array([11]), S, StepSpec("x", "x"), qps=2)
    assert traffic.flows == 4
    assert sorted(set(traffic.src.tolist())) == [6, 7]
    assert traffic.total_bytes == pytest.approx(S)


def test_packed_jobs_take_consecutive_nodes_and_fragmented_ones_do_not() -> None:
    layout = GpuLayout(256, 8, 8)
    packed = place_jobs(layout, [64, 64], "packed", seed=0)
    fragmented = place_jobs(layout, [64, 64], "fragmented", seed=0)
    assert (np.diff(np.unique(packed[0] // 8)) == 1).all()
    assert not (np.diff(np.unique(fragmented[0] // 8)) == 1).all()
    for jobs in (packed, fragmented):
        assert len(np.intersect1d(jobs[0], jobs[1])) == 0
    with pytest.raises(ModelError):
        place_jobs(layout, [200, 100], "packed", seed=0)


def test_incast_needs_senders_on_other_nodes() -> None:
    layout = GpuLayout(16, 8, 8)
    assert incast(layout, 8, S).flows == 8
    with pytest.raises(ModelError) as err:
        incast(layout, 9, S)
    assert err.value.code == "FP533"


def test_training_step_is_a_chain_of_collectives() -> None:
    layout = GpuLayout(128, 8, 8)
    traffic = training_step(
        layout, tp=8, pp=2, ep=2, grad_bytes=S, activation_bytes=S / 8, expert_bytes=S / 4
    )
    names = [s.name for s in traffic.steps]
    assert names == [
        "pp forward 0->1",
        "ep all_to_all dispatch",
        "ep all_to_all combine",
        "pp backward 1->0",
        "dp all_reduce",
    ]
    assert all(s.deps == ((i - 1,) if i else ()) for i, s in enumerate(traffic.steps))
    # DP: 8 ranks per ring, one GPU per node; 16 rings (2 stages x 8 TP ranks).
    dp = traffic.step == names.index("dp all_reduce")
    assert traffic.size_bytes[dp].sum() == pytest.approx(16 * 8 * 2 * 7 / 8 * S)


def test_workload_traffic_uses_the_preset() -> None:
    traffic = workload_traffic(
        WorkloadSpec(model="llama3-70b", tp=8, pp=1), GpuLayout(64, 8, 8), None
    )
    assert [s.name for s in traffic.steps] == ["dp all_reduce"]


def test_every_named_pattern_builds() -> None:
    layout = GpuLayout(32, 8, 8)
    for pattern in PATTERNS:
        traffic = pattern_traffic(
            pattern, layout, S, seed=0, workload=WorkloadSpec(model="llama3-70b")
        )
        assert traffic.flows > 0, pattern
    with pytest.raises(ModelError):
        pattern_traffic("incast", layout, None, seed=0)


def test_websearch_sizes_follow_the_cdf() -> None:
    sizes = sample_sizes(WEBSEARCH_CDF, 20_000, seed=1)
    # 53 % of web-search flows are at most 80 kB; 90 % at most 5 MB.
    assert np.mean(sizes <= 80_000) == pytest.approx(0.53, abs=0.02)
    assert np.mean(sizes <= 5_000_000) == pytest.approx(0.90, abs=0.02)


def test_jobs_split_the_cluster_and_keep_their_traffic_inside() -> None:
    layout = GpuLayout(128, 8, 8)
    traffic = scenario_traffic("all_to_all", layout, S, seed=0, jobs=2, placement="fragmented")
    jobs = np.array([traffic.steps[s].job for s in traffic.step])
    ranks = place_jobs(layout, [64, 64], "fragmented", seed=0)
    for job, members in enumerate(ranks):
        nodes = set((members // 8).tolist())
        assert {int(n) for n in traffic.src[jobs == job] // 8} <= nodes
        assert {int(n) for n in traffic.dst[jobs == job] // 8} <= nodes
