"""The flow-level simulator against physics derived here: capacity, conservation, line rate,
incast bounds, sharing, oversubscription, back-pressure, determinism, failures."""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.sim.failure import fail_random_cables
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.result import FlowSimResult
from fabricplan.sim.flow.routing import bytes_per_us, flow_paths
from fabricplan.sim.flow.transport import (
    CongestionControl,
    LinkFlowControl,
    RoutingName,
    TransportSpec,
    settle_time_us,
)
from fabricplan.sim.traffic import (
    StepSpec,
    Traffic,
    all_to_all,
    background,
    gpu_flows,
    incast,
    permutation,
    random_pairs,
)
from fabricplan.topology.graph import LINK_TIERS, FabricGraph
from fabrics import (
    FLOW_BYTES,
    k_ary_fat_tree,
    leaf_spine_graph,
    one_gpu_per_node,
    victim_beside_incast,
)

B = float(bytes_per_us(100.0))  # the test fabrics' 100G links, in bytes per microsecond
S = FLOW_BYTES
ROUTINGS: tuple[RoutingName, ...] = ("static", "ecmp", "adaptive", "spray")


def run(
    graph: FabricGraph,
    traffic: Traffic,
    routing: RoutingName,
    lfc: LinkFlowControl = "none",
    cc: CongestionControl = "none",
    seed: int = 0,
    tolerance: float = 0.0,
) -> FlowSimResult:
    return simulate(
        graph, traffic, TransportSpec(routing, lfc, cc, 1.0), seed=seed, tolerance=tolerance
    )


def finish_transfer(result: FlowSimResult) -> np.ndarray:
    """When each flow's last byte left the fluid model (latency not counted)."""
    return result.finish_us - result.latency_us


@pytest.mark.parametrize("routing", ROUTINGS)
def test_bytes_are_conserved_and_no_link_exceeds_capacity(routing: RoutingName) -> None:
    graph, _ = k_ary_fat_tree(4)
    traffic = random_pairs(one_gpu_per_node(16), 60, S, seed=3)
    result = run(graph, traffic, routing, tolerance=0.05)
    assert np.isfinite(result.finish_us).all()
    tiers = {name: graph.link_tier == i for i, name in enumerate(LINK_TIERS)}
    total = traffic.total_bytes
    # Every flow leaves one host link and enters one; each hop carries all its bytes.
    assert result.link_bytes[tiers["node_to_leaf"]].sum() == pytest.approx(total)
    assert result.link_bytes[tiers["leaf_to_node"]].sum() == pytest.approx(total)
    _, links = flow_paths(graph, "static", traffic.src, traffic.dst, np.arange(traffic.flows), 0)
    hops = (links >= 0).sum(axis=1)
    assert result.link_bytes.sum() == pytest.approx(float((traffic.size_bytes * hops).sum()))
    # No link carried more than its capacity over the run.
    assert (result.utilisation() <= 1 + 1e-9).all()


@pytest.mark.parametrize("seed", range(4))
def test_permutation_on_a_nonblocking_fat_tree_with_adaptive_routing_runs_at_line_rate(
    seed: int,
) -> None:
    # Ideal adaptive routing splits each flow over all k^2/4 paths: every link carries at
    # most one flow's worth, so each host sends at B and the permutation takes S/B.
    graph, _ = k_ary_fat_tree(4)
    result = run(graph, permutation(one_gpu_per_node(16), S, seed=seed), "adaptive")
    assert finish_transfer(result) == pytest.approx(np.full(16, S / B))


@pytest.mark.parametrize("senders", [1, 3, 8, 15])
def test_incast_takes_at_least_n_s_over_b(senders: int) -> None:
    graph, _ = k_ary_fat_tree(4)
    traffic = incast(one_gpu_per_node(16), senders, S, receiver=0)
    for routing in ROUTINGS:
        result = run(graph, traffic, routing, lfc="credit")
        # The receiver's link is the only bottleneck: exactly N S / B.
        assert result.transfer_us >= senders * S / B * (1 - 1e-9)
        assert result.transfer_us == pytest.approx(senders * S / B)


def test_flows_hashed_onto_one_link_share_it() -> None:
    graph, _ = leaf_spine_graph(leaves=2, spines=4, hosts_per_leaf=4)
    layout = one_gpu_per_node(8)
    traffic = gpu_flows(layout, np.arange(4), np.arange(4, 8), S, StepSpec("x", "x"))
    checked = 0
    for seed in range(20):
        _, links = flow_paths(graph, "ecmp", traffic.src, traffic.dst, np.arange(4), seed)
        uplinks = links[:, 1]
        counts = np.bincount(uplinks)
        k = int(counts.max())
        if k < 2:
            continue
        down = np.bincount(links[:, 2])
        shared = uplinks == np.argmax(counts)
        if down[links[shared, 2]].max() > k:
            continue  # a worse collision on the way down would set their rate
        result = run(graph, traffic, "ecmp", seed=seed)
        # k flows on one link: each gets B / k, so they all finish at k S / B.
        assert finish_transfer(result)[shared] == pytest.approx(np.full(k, k * S / B))
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("routing", ["adaptive", "static"])
def test_a_two_to_one_leaf_halves_cross_leaf_all_to_all(routing: RoutingName) -> None:
    # Hosts of leaf 0 send S to every host of leaf 1 and back. 1:1 leaves: 4 flows per host
    # link take 4S/B and 16 S cross 4 uplinks in 4S/B. 2:1: 16 S over 2 uplinks take 8S/B.
    a, b = np.arange(4), np.arange(4, 8)
    src, dst = (
        np.concatenate([np.repeat(a, 4), np.repeat(b, 4)]),
        np.concatenate([np.tile(b, 4), np.tile(a, 4)]),
    )
    layout = one_gpu_per_node(8)
    traffic = gpu_flows(layout, src, dst, S, StepSpec("cross", "cross"))
    full, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=4, up_ports=4)
    half, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=4, up_ports=2)
    t_full = run(full, traffic, routing).transfer_us
    t_half = run(half, traffic, routing).transfer_us
    assert t_full == pytest.approx(4 * S / B)
    assert (traffic.total_bytes / t_half) / (traffic.total_bytes / t_full) == pytest.approx(0.5)


def test_all_to_all_finishes_when_each_host_has_sent_its_share() -> None:
    # n ranks, one per node: each sends (n-1) S/n at B on a non-blocking fabric.
    graph, _ = k_ary_fat_tree(4)
    result = run(graph, all_to_all(one_gpu_per_node(16), 16 * S), "adaptive")
    assert result.transfer_us == pytest.approx(15 * S / B)


def test_same_seed_same_result_and_ecmp_collisions_vary_with_the_seed() -> None:
    graph, _ = k_ary_fat_tree(4)
    layout = one_gpu_per_node(16)
    traffic = permutation(layout, S, seed=0)
    first = run(graph, traffic, "ecmp", seed=7)
    again = run(graph, traffic, "ecmp", seed=7)
    assert (first.finish_us == again.finish_us).all()
    assert (first.link_bytes == again.link_bytes).all()
    completions = {round(run(graph, traffic, "ecmp", seed=s).transfer_us, 6) for s in range(12)}
    assert len(completions) > 1
    assert min(completions) >= S / B * (1 - 1e-9)


def test_a_victim_of_pause_slows_to_the_incast_rate_without_congestion_control() -> None:
    graph, traffic, victim = victim_beside_incast()
    lossy = run(graph, traffic, "adaptive", lfc="none")
    lossless = run(graph, traffic, "adaptive", lfc="pfc", cc="none")
    # Lossy: the victim only shares uplinks with spare capacity, so it runs at B.
    assert finish_transfer(lossy)[victim] == pytest.approx(S / B)
    # Lossless without CC: the leaf's uplinks are paused behind the incast, the victim waits
    # behind incast packets and moves at the incast flows' B/7.
    assert finish_transfer(lossless)[victim] == pytest.approx(7 * S / B)
    assert lossless.link_paused_us.sum() > 0 and lossy.link_paused_us.sum() == 0
    # The incast itself still takes N S / B either way.
    for result in (lossy, lossless):
        assert finish_transfer(result)[:7].max() == pytest.approx(7 * S / B)


@pytest.mark.parametrize("cc", ["dcqcn", "ib_cc"])
def test_congestion_control_limits_the_victims_loss_to_its_settling_time(
    cc: CongestionControl,
) -> None:
    graph, traffic, victim = victim_beside_incast()
    result = run(graph, traffic, "adaptive", lfc="credit", cc=cc)
    rtt = 2 * float(result.latency_us.max())
    settle = settle_time_us(cc, 7.0, rtt)
    # Slowed to B/7 for at most the settling time, at B afterwards.
    assert S / B < finish_transfer(result)[victim] <= S / B + settle * (1 - 1 / 7) + 1e-6


def test_steps_start_after_the_steps_they_wait_for() -> None:
    graph, _ = k_ary_fat_tree(4)
    traffic = all_to_all(one_gpu_per_node(16), 16 * S, schedule="pairwise")
    result = run(graph, traffic, "static", tolerance=0.05)
    for i, step in enumerate(traffic.steps):
        for dep in step.deps:
            assert result.step_start_us[i] >= result.step_finish_us[dep]
    # 15 dependent shifts of S each, every one at line rate at best.
    assert result.completion_us >= 15 * S / B


def test_failed_cables_carry_nothing_and_the_traffic_still_completes() -> None:
    # k=4 leaves have two uplinks: one failed cable leaves every pair connected.
    graph, _ = k_ary_fat_tree(4)
    traffic = random_pairs(one_gpu_per_node(16), 40, S, seed=2)
    for seed in range(3):
        broken = fail_random_cables(graph, 1, seed=seed)
        for routing in ROUTINGS:
            result = run(broken, traffic, routing, tolerance=0.05)
            assert np.isfinite(result.finish_us).all()
            assert result.link_bytes[~broken.link_alive].sum() == 0
            assert result.transfer_us >= run(graph, traffic, "adaptive").transfer_us * (1 - 1e-9)


def test_background_traffic_offers_the_asked_load() -> None:
    graph, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=4)
    layout = one_gpu_per_node(8)
    window_us = 20_000.0
    traffic = background(layout, 0.3, window_us, B, seed=0)
    result = run(graph, traffic, "adaptive", tolerance=0.05)
    offered = traffic.total_bytes / (layout.gpus * B * window_us)
    assert 0.2 < offered < 0.4  # Poisson with a heavy-tailed size: a loose band around 0.3
    assert np.isfinite(result.finish_us).all()
    assert (result.start_us >= 0).all() and (result.start_us < window_us).all()
