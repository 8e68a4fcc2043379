"""analytic_performance: the backend seam's analytic entry point, at any scale."""

from __future__ import annotations

import pytest

from fabricplan.analytic.p2p import one_way_ns
from fabricplan.analytic.performance import analytic_performance
from fabricplan.analytic.profile import fabric_profile
from fabricplan.backends import get_backend
from fabricplan.errors import ModelError
from fabricplan.model.results import PerfRequest
from fabrics import cluster_scenario, designed_leaf_spine, designed_three_tier


def test_a_100k_gpu_fabric_is_answered() -> None:
    valid = cluster_scenario(100_000)
    for tech in ("infiniband", "roce_v2"):
        result = analytic_performance(valid, designed_three_tier(valid, tech), PerfRequest())
        assert result.backend == "analytic" and result.technology == tech
        assert len(result.collectives) == 3 * len(PerfRequest().sizes_bytes)
        assert result.step is not None and result.step.step_s > 0
        assert result.p2p


def test_requested_rows_in_order() -> None:
    valid = cluster_scenario(256)
    request = PerfRequest(
        collectives=("all_gather", "broadcast"), sizes_bytes=(8, 2**20), p2p=False, step=False
    )
    result = analytic_performance(valid, designed_leaf_spine(valid), request)
    assert [(c.collective, c.size_bytes) for c in result.collectives] == [
        ("all_gather", 8),
        ("all_gather", 2**20),
        ("broadcast", 8),
        ("broadcast", 2**20),
    ]
    assert result.p2p == () and result.step is None


def test_gpus_selects_a_sub_group() -> None:
    valid = cluster_scenario(1024)
    design = designed_leaf_spine(valid, "roce_v2")
    size = 2**30

    def row(gpus: int) -> str:
        request = PerfRequest(
            collectives=("all_reduce",), sizes_bytes=(size,), gpus=gpus, p2p=False, step=False
        )
        return analytic_performance(valid, design, request).collectives[0].algorithm

    assert row(8) == "NVLS/Simple"  # one node: NVLink only
    assert row(16) != "NVLS/Simple"  # two nodes: the fabric joins in
    with pytest.raises(ModelError):
        row(20)


def test_base_latency_crosses_the_worst_case_path() -> None:
    valid = cluster_scenario(16384)
    design = designed_three_tier(valid, "roce_v2")
    result = analytic_performance(valid, design, PerfRequest(step=False, sizes_bytes=(8,)))
    profile = fabric_profile(valid, design)
    assert result.base_latency_us == pytest.approx(one_way_ns(profile, 5, 2) / 1000)


def test_p2p_pair_spans_the_sub_group() -> None:
    valid = cluster_scenario(16384)
    design = designed_three_tier(valid)
    near = analytic_performance(
        valid, design, PerfRequest(gpus=16, sizes_bytes=(2,), collectives=(), step=False)
    )
    far = analytic_performance(
        valid, design, PerfRequest(sizes_bytes=(2,), collectives=(), step=False)
    )
    lat = {r.test: r.latency_us for r in near.p2p}
    assert lat["write_lat"] < {r.test: r.latency_us for r in far.p2p}["write_lat"]


def test_the_backend_seam_reaches_it() -> None:
    valid = cluster_scenario(256)
    result = get_backend("analytic").perform(
        valid, designed_leaf_spine(valid), PerfRequest(step=False)
    )
    assert result.backend == "analytic"
    assert any("routing" in note for note in result.notes)


def test_routing_override_is_said() -> None:
    valid = cluster_scenario(256, fabric={"switch": {"roce_v2": "sn5600"}})
    result = analytic_performance(
        valid,
        designed_leaf_spine(valid, "roce_v2"),
        PerfRequest(step=False, routing={"roce_v2": "adaptive"}),
    )
    assert any("adaptive (asked for" in note for note in result.notes)


def test_a_forced_algorithm_reaches_every_row_through_the_request() -> None:
    valid = cluster_scenario(256, fabric={"sharp": "on"})
    result = analytic_performance(
        valid,
        designed_leaf_spine(valid),
        PerfRequest(
            collectives=("all_reduce", "all_to_all"),
            sizes_bytes=(2**20, 2**33),
            algorithm="collnet_chain",
            p2p=False,
            step=False,
        ),
    )
    labels = {(p.collective, p.algorithm) for p in result.collectives}
    assert labels == {("all_reduce", "CollNetChain/Simple"), ("all_to_all", "P2P/Simple")}
    assert any("NCCL_ALGO=collnet_chain" in note for note in result.notes)


def test_in_network_reduction_is_said_and_can_be_turned_off() -> None:
    valid = cluster_scenario(256, fabric={"sharp": "on"})
    request = PerfRequest(sizes_bytes=(2**33,), collectives=("all_reduce",), p2p=False, step=False)
    on = analytic_performance(valid, designed_leaf_spine(valid), request)
    off = analytic_performance(
        valid,
        designed_leaf_spine(valid),
        request.model_copy(update={"in_network_reduction": False}),
    )
    assert any("in-network reduction: on" in note for note in on.notes)
    assert any("in-network reduction: off" in note for note in off.notes)
    # NVLS across nodes needs SHARP: without it the multi-node NVLS row is gone.
    assert on.collectives[0].busbw_GBps > off.collectives[0].busbw_GBps
