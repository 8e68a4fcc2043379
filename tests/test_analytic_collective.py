"""Collectives: nccl-tests' definitions, NCCL's algorithms and regimes, from first principles."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from fabricplan.analytic.collective import (
    NCCL_TREE_BW_SHARE,
    NCCL_TREE_SEARCH_CHANNELS,
    SHARP_BW_EFFICIENCY,
    busbw_factor,
    collective_candidates,
    collective_point,
    ring_bytes_per_rank,
)
from fabricplan.analytic.profile import FabricProfile, fabric_profile
from fabricplan.analytic.traffic import group_for
from fabricplan.errors import ModelError
from fabricplan.model.results import CollectiveName, PerfRequest
from fabricplan.units import gbps_to_GBps
from fabrics import cluster_scenario, designed_leaf_spine

GIB = 2**30


def profile(
    gpus: int = 1024,
    tech: Any = "infiniband",
    gpu: str = "h100",
    request: dict[str, Any] | None = None,
    nic_gbps: float = 400,
    **design: Any,
) -> FabricProfile:
    # SHARP on where the switches have it, as a tuned SuperPOD runs (the spec's default, auto,
    # leaves CollNet off; test_in_network_reduction_follows_the_request checks that).
    valid = cluster_scenario(
        gpus, cluster={"gpus": gpus, "gpu": gpu, "nic_speed_gbps": nic_gbps}, fabric={"sharp": "on"}
    )
    return fabric_profile(
        valid, designed_leaf_spine(valid, tech, **design), PerfRequest(**(request or {}))
    )


def point(
    prof: FabricProfile, gpus: int, op: CollectiveName, size: int, algorithm: Any = None
) -> Any:
    return collective_point(prof, group_for(prof, gpus), op, size, algorithm)


def candidate(prof: FabricProfile, gpus: int, label: str, size: int = 8) -> Any:
    found = [
        c
        for c in collective_candidates(prof, group_for(prof, gpus), "all_reduce", size)
        if c.label == label
    ]
    assert found, label
    return found[0]


# --- nccl-tests definitions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "factor"),
    [
        ("all_reduce", 2 * 7 / 8),
        ("all_gather", 7 / 8),
        ("reduce_scatter", 7 / 8),
        ("all_to_all", 7 / 8),
        ("broadcast", 1.0),
        ("sendrecv", 1.0),
    ],
)
def test_busbw_factors_are_nccl_tests(op: CollectiveName, factor: float) -> None:
    assert busbw_factor(op, 8) == pytest.approx(factor)


@pytest.mark.parametrize("ranks", [2, 3, 8, 64])
def test_ring_all_reduce_moves_two_n_minus_one_over_n_per_rank(ranks: int) -> None:
    # Reduce-scatter then all-gather around a ring: the buffer is cut into n chunks and every
    # rank forwards one chunk per step, n-1 steps each phase.
    size = 1_000_000
    chunk = size / ranks
    sent = 0.0
    for _phase in ("reduce_scatter", "all_gather"):
        for _step in range(ranks - 1):
            sent += chunk
    assert ring_bytes_per_rank("all_reduce", size, ranks) == pytest.approx(sent)
    assert sent == pytest.approx(2 * (ranks - 1) / ranks * size)


def test_algbw_and_busbw_follow_time() -> None:
    prof = profile()
    row = point(prof, 64, "all_gather", 64 * 2**20)
    assert row.algbw_GBps == pytest.approx(row.size_bytes / row.time_us / 1e3)
    assert row.busbw_GBps == pytest.approx(row.algbw_GBps * 63 / 64)


# --- bandwidth bounds ---------------------------------------------------------------------------


def test_one_node_ring_runs_at_nvlink_speed() -> None:
    prof = profile()
    row = point(prof, 8, "all_gather", 16 * GIB)
    # NCCL maintainers: ~370 GB/s busbw over NVLink 4 (450 GB/s line rate).
    assert row.busbw_GBps == pytest.approx(prof.nvlink_GBps * prof.collective_efficiency, rel=0.01)
    assert 360 < row.busbw_GBps < 380


def test_large_all_reduce_approaches_the_nic_goodput_bound() -> None:
    # DGX A100: 8 x 200G, no NVLS; RoCE: no SHARP. A plain ring, NIC-bound.
    prof = profile(gpus=256, tech="roce_v2", gpu="a100", nic_gbps=200)
    valid = cluster_scenario(256, cluster={"gpus": 256, "gpu": "a100", "nic_speed_gbps": 200})
    tech = valid.technologies["roce_v2"]
    line = valid.spec.cluster.nic_speed_gbps
    goodput = gbps_to_GBps(line) * tech.mtu_bytes / (tech.mtu_bytes + tech.header_bytes.value)
    bound = 8 * goodput * prof.collective_efficiency  # 8 NICs per node carry the node's rings
    rows = [point(prof, 32, "all_reduce", size) for size in (2**20, 2**26, 2**32, 2**36)]
    busbw = [r.busbw_GBps for r in rows]
    assert busbw == sorted(busbw)
    assert busbw[-1] <= bound * (1 + 1e-9)
    assert busbw[-1] > 0.99 * bound
    assert rows[-1].algorithm == "Ring/Simple"


def test_a_forced_two_node_tree_exceeds_the_nic_line_rate() -> None:
    # nccl-tests #169 / nccl #1576: on two nodes the tree's busbw is above what the NICs carry,
    # because each node sends the buffer only once while busbw counts 2(n-1)/n of it.
    prof = profile(gpus=256, tech="roce_v2", gpu="a100", nic_gbps=100)
    row = point(prof, 16, "all_reduce", 8 * GIB, algorithm="tree")
    nic_line_rate = 8 * gbps_to_GBps(100)  # 8 x 100G per node, as in nccl-tests #169
    assert row.algorithm == "Tree/Simple"
    assert row.busbw_GBps > nic_line_rate


def test_nccls_tuner_runs_the_ring_on_two_nodes() -> None:
    # tuning.cc turns every tree's bus bandwidth into algbw with a factor 1/2, two nodes or not,
    # so it never sees the two-node saving: it expects half of what the tree reaches and picks
    # the ring, which the NICs bound (nccl-tests #169 measured ~100 GB/s on 8 x 100G).
    prof = profile(gpus=256, tech="roce_v2", gpu="a100", nic_gbps=100)
    tree = candidate(prof, 16, "Tree/Simple", 8 * GIB)
    assert tree.tuner_algbw_GBps == pytest.approx(tree.algbw_GBps / 2)
    row = point(prof, 16, "all_reduce", 8 * GIB)
    assert row.algorithm == "Ring/Simple"
    assert row.busbw_GBps <= 8 * prof.nic_goodput_GBps * prof.collective_efficiency


def test_tree_bandwidth_is_capped_by_the_channels_it_runs() -> None:
    # 128 H100 nodes, 8 x NDR: the network would carry a tree at 8 NICs x goodput / 2, but NCCL
    # runs 16 SMs = 8 tree pairs, each at most perChMaxTreeBw (Hopper, >2 nodes) of bus
    # bandwidth, which is twice a tree's algbw.
    prof = profile(gpus=1024)
    tree = candidate(prof, 1024, "Tree/Simple", 8 * GIB)
    network = 8 * prof.nic_goodput_GBps / 2 * NCCL_TREE_BW_SHARE["Simple"]
    channels = NCCL_TREE_SEARCH_CHANNELS * prof.nccl.tree_channel_busbw_GBps["hopper"][2] / 2
    assert prof.nccl.tree_channel_busbw_GBps["hopper"][2] == 36.0  # perChMaxTreeBws, 2.19-2.30
    assert channels < network
    assert tree.algbw_GBps == pytest.approx(channels * prof.collective_efficiency)
    assert NCCL_TREE_SEARCH_CHANNELS == 8  # 16 SMs, one per tree of each pair


def test_sharp_reduces_in_the_switches_when_leaves_are_rail_aligned() -> None:
    rail = profile(gpus=1024)
    fat = profile(gpus=1024, rail_aligned=False)
    big = 8 * GIB
    assert rail.in_network_reduction
    sharp_rail = candidate(rail, 1024, "CollNetDirect/Simple", big)
    sharp_fat = candidate(fat, 1024, "CollNetDirect/Simple", big)
    # A switch carries 2 aggregation trees; a fat-tree leaf holds all 8 rails of a node.
    assert sharp_fat.algbw_GBps < sharp_rail.algbw_GBps
    roce = profile(gpus=1024, tech="roce_v2")
    labels = {
        c.algorithm for c in collective_candidates(roce, group_for(roce, 1024), "all_reduce", big)
    }
    assert "CollNetDirect" not in labels  # no in-network reduction on this Ethernet fabric


def test_all_to_all_at_scale_gets_one_nic_per_gpu() -> None:
    # NCCL maintainers: all-to-all cannot aggregate the NICs; expect a single NIC's rate.
    prof = profile(gpus=1024)
    row = point(prof, 1024, "all_to_all", 64 * GIB)
    one_nic = prof.nic_goodput_GBps * prof.collective_efficiency
    assert row.busbw_GBps == pytest.approx(one_nic * 1023 / (1024 - 8), rel=0.02)


def test_sendrecv_across_nodes_is_one_nic() -> None:
    prof = profile()
    row = point(prof, 16, "sendrecv", 16 * GIB)
    assert row.busbw_GBps == pytest.approx(
        prof.nic_goodput_GBps * prof.collective_efficiency, rel=0.01
    )


def test_adaptive_routing_beats_ecmp_on_a_fat_tree_where_the_nic_reorders() -> None:
    # Spectrum-X: the same Spectrum-4 fat tree, per-packet AR, and a SuperNIC that places
    # packets out of order; RoCEv2 on it hashes each flow (ECMP).
    sections: dict[str, Any] = {
        "fabric": {
            "technologies": ["roce_v2", "spectrum_x"],
            "switch": {"roce_v2": "sn5600", "spectrum_x": "sn5600"},
        }
    }
    valid = cluster_scenario(1024, **sections)
    ecmp = fabric_profile(valid, designed_leaf_spine(valid, "roce_v2", rail_aligned=False))
    adaptive = fabric_profile(valid, designed_leaf_spine(valid, "spectrum_x", rail_aligned=False))
    assert ecmp.routing == "ecmp" and adaptive.routing == "adaptive"
    assert adaptive.delivery == "nic_reorder"
    size = 4 * GIB
    assert (
        point(adaptive, 1024, "all_to_all", size).busbw_GBps
        > point(ecmp, 1024, "all_to_all", size).busbw_GBps
    )


def test_per_packet_adaptive_routing_with_an_in_order_nic_goes_back_n() -> None:
    # RoCEv2 asked for Spectrum-4's per-packet AR keeps its in-order RC receiver: every
    # overtaking packet is a NAK and a resend of the window, so AR loses to ECMP.
    sections: dict[str, Any] = {"fabric": {"switch": {"roce_v2": "sn5600"}}}
    valid = cluster_scenario(1024, **sections)
    design = designed_leaf_spine(valid, "roce_v2", rail_aligned=False)
    ecmp = fabric_profile(valid, design)
    adaptive = fabric_profile(valid, design, PerfRequest(routing={"roce_v2": "adaptive"}))
    assert adaptive.routing == "adaptive" and adaptive.delivery == "in_order"
    size = 4 * GIB
    assert (
        point(adaptive, 1024, "all_to_all", size).busbw_GBps
        < point(ecmp, 1024, "all_to_all", size).busbw_GBps
    )


def test_adaptive_routing_where_unavailable_is_an_error() -> None:
    valid = cluster_scenario(1024, fabric={"technologies": ["roce_v1"]})
    with pytest.raises(ModelError) as err:
        fabric_profile(
            valid,
            designed_leaf_spine(valid, "roce_v1"),
            PerfRequest(routing={"roce_v1": "adaptive"}),
        )
    assert err.value.code == "FP508"


# --- regimes -----------------------------------------------------------------------------------


def test_small_messages_are_latency_bound_and_large_ones_bandwidth_bound() -> None:
    prof = profile()
    group = group_for(prof, 64)
    for size, latency_share in ((8, 0.99), (16 * GIB, 0.01)):
        row = collective_point(prof, group, "all_reduce", size)
        chosen = next(
            c
            for c in collective_candidates(prof, group, "all_reduce", size)
            if c.label == row.algorithm
        )
        share = chosen.latency_us / row.time_us
        assert share > latency_share if size == 8 else share < latency_share


def test_ring_latency_grows_linearly_and_tree_logarithmically() -> None:
    prof = profile()  # 32 nodes under one leaf per rail: every hop is one switch
    ring = [candidate(prof, 8 * d, "Ring/LL").latency_us for d in (4, 8, 16, 32)]
    tree = [candidate(prof, 8 * d, "Tree/LL").latency_us for d in (4, 8, 16, 32)]
    ring_steps = [b - a for a, b in itertools.pairwise(ring)]
    tree_steps = [b - a for a, b in itertools.pairwise(tree)]
    # Doubling the nodes doubles the ring's added latency and adds one tree level.
    assert ring_steps[1] == pytest.approx(2 * ring_steps[0])
    assert ring_steps[2] == pytest.approx(2 * ring_steps[1])
    assert tree_steps[0] == pytest.approx(tree_steps[1]) == pytest.approx(tree_steps[2])


def test_nccl_picks_what_its_tuner_rates_fastest_and_takes_the_pipelined_time() -> None:
    prof = profile()
    group = group_for(prof, 128)
    for size in (8, 2**20, 2**30):
        row = collective_point(prof, group, "all_reduce", size)
        candidates = collective_candidates(prof, group, "all_reduce", size)
        best = min(candidates, key=lambda c: c.time_us(size))
        assert row.algorithm == best.label
        assert row.time_us == pytest.approx(best.achieved_time_us(size))


def test_the_pipeline_meets_the_alpha_beta_line_at_both_ends() -> None:
    prof = profile()
    for label in ("Ring/Simple", "Tree/LL", "Tree/Simple", "Ring/LL128"):
        tiny = candidate(prof, 128, label, 1)
        assert tiny.achieved_time_us(1) == pytest.approx(tiny.latency_us, rel=1e-3)
        huge_size = 2**44
        huge = candidate(prof, 128, label, huge_size)
        assert huge.achieved_time_us(huge_size) == pytest.approx(
            huge_size / (huge.algbw_GBps * 1e3), rel=1e-3
        )


def test_a_mid_size_tree_is_slower_than_its_alpha_beta_line() -> None:
    # 16 A100 nodes (CoreWeave's 128-GPU run): 64 KiB on 16 channels, a 4 KiB LL piece each. The
    # 8 network hops store it whole at a sixteenth of the bandwidth; the 14 NVLink hops (two
    # chains of 7, cut-through) pass it on in half trips of 640 threads x 8 B / 2 (a tree runs
    # all 640 threads from NCCL 2.22), one per chain, at LL's one-domain rate.
    prof = profile(gpus=128, gpu="a100", nic_gbps=200)
    tree = candidate(prof, 128, "Tree/LL", 65536)
    nvlink = tree.pass_algbw_GBps
    assert tree.algbw_GBps < nvlink <= prof.nccl.ll_one_node_busbw_GBps["ampere"] / 2
    stored_us = 8 * 4096 / (tree.algbw_GBps / 16 * 1e3)
    passed_us = 2 * 2560 / (nvlink / 16 * 1e3)
    assert tree.achieved_time_us(65536) == pytest.approx(tree.latency_us + stored_us + passed_us)
    assert tree.achieved_time_us(65536) > tree.time_us(65536)


def test_the_tuner_corrects_a_trees_bandwidth_as_nccl_does() -> None:
    # treeCorrectionFactor: 1 MiB is entry log2(2^20 / 64) = 14: LL 0.5, LL128 0.6, Simple 0.5.
    prof = profile()
    size = 2**20
    for label, factor in (("Tree/LL", 0.5), ("Tree/LL128", 0.6), ("Tree/Simple", 0.5)):
        tree = candidate(prof, 128, label, size)
        tuner_algbw = tree.tuner_algbw_GBps or tree.algbw_GBps
        expected = tree.latency_us + size / (tuner_algbw * factor * 1e3)
        assert tree.time_us(size) == pytest.approx(expected)
    ring = candidate(prof, 128, "Ring/Simple", size)  # rings: their line, with the plateau
    line = ring.latency_us * 1.4 + size / (ring.algbw_GBps * 1e3)
    assert ring.time_us(size) == pytest.approx(line)


def test_the_tuner_adds_the_ring_plateau_to_multi_node_simple_rings() -> None:
    # ncclTopoGetAlgoTime: a Ring/Simple all-reduce on more than one node costs 1.4 x its latency
    # (Ampere and later) once nBytes / (nChannels x nRanks) >= 64; 16 channels x 128 ranks x 64 B
    # = 128 KiB. One node never; LL never; what the ring takes is not changed.
    prof = profile()
    threshold = 64 * 16 * 128
    ring = candidate(prof, 128, "Ring/Simple", threshold)
    below, at = threshold - 64, threshold
    assert ring.time_us(below) == pytest.approx(ring.latency_us + below / (ring.algbw_GBps * 1e3))
    assert ring.time_us(at) == pytest.approx(1.4 * ring.latency_us + at / (ring.algbw_GBps * 1e3))
    assert ring.achieved_time_us(at) < ring.time_us(at)
    volta_like = candidate(profile(gpus=1024, gpu="a100", nic_gbps=200), 128, "Ring/Simple", at)
    assert volta_like.plateau_factor == 1.4  # compute capability 8.0: not below 80
    one_node = candidate(prof, 8, "Ring/Simple", 8 * GIB)
    assert one_node.plateau_min_bytes is None
    assert candidate(prof, 128, "Ring/LL", at).plateau_min_bytes is None


def test_the_tuner_expects_less_of_ll_beyond_two_nodes() -> None:
    # llMaxBws (Intel hosts): 39.0 GB/s of bus bandwidth on two nodes, 20.4 beyond. LL reaches
    # the two-node figure at any node count (CoreWeave's 16 nodes); only the tuner's view drops.
    prof = profile()
    two_nodes = prof.nccl.ll_busbw_GBps_intel[1]
    assert prof.nccl.ll_busbw_GBps_intel == (39.0, 39.0, 20.4)  # llMaxBws[0], every release
    for domains, tuner_busbw in ((2, two_nodes), (16, 20.4)):
        n = 8 * domains
        ring = candidate(prof, n, "Ring/LL")
        factor = busbw_factor("all_reduce", n)
        assert ring.algbw_GBps * factor == pytest.approx(two_nodes * prof.collective_efficiency)
        tuner = ring.tuner_algbw_GBps or ring.algbw_GBps
        assert tuner * factor == pytest.approx(tuner_busbw * prof.collective_efficiency)


def test_a_forced_algorithm_keeps_nccls_protocol_choice() -> None:
    prof = profile()
    for size, protocol in ((8, "LL"), (8 * GIB, "Simple")):
        assert point(prof, 128, "all_reduce", size, algorithm="ring").algorithm == (
            f"Ring/{protocol}"
        )
    # all_to_all is point-to-point: NCCL_ALGO does not apply.
    assert point(prof, 128, "all_to_all", 2**20, algorithm="tree").algorithm == "P2P/Simple"


@pytest.mark.parametrize(
    ("gpu", "gpus", "op", "algorithm"),
    [
        ("a100", 64, "all_reduce", "nvls"),  # no NVLink SHARP before Hopper
        ("h100", 8, "all_reduce", "tree"),  # one NVLink domain: no network tree
        ("h100", 64, "all_gather", "tree"),  # NCCL's trees only all-reduce
    ],
)
def test_an_algorithm_the_hardware_lacks_is_an_error(
    gpu: str, gpus: int, op: CollectiveName, algorithm: str
) -> None:
    prof = profile(gpus=256, gpu=gpu, nic_gbps=200 if gpu == "a100" else 400)
    with pytest.raises(ModelError) as err:
        point(prof, gpus, op, 2**20, algorithm=algorithm)
    assert err.value.code == "FP509"


def test_collnet_chain_is_the_nvlink_chain_when_the_network_is_faster() -> None:
    # CoreWeave, 8 x H100 nodes with SHARP: every chain GPU sends the buffer up and down NVLink,
    # so algbw = NVLink / 2 (measured 195 GB/s), while SHARP on 8 x NDR offers far more.
    prof = profile(gpus=64)
    chain = candidate(prof, 64, "CollNetChain/Simple", 8 * GIB)
    sharp = 8 * prof.nic_goodput_GBps * SHARP_BW_EFFICIENCY
    assert prof.nvlink_GBps / 2 < sharp
    assert chain.algbw_GBps == pytest.approx(prof.nvlink_GBps / 2 * prof.collective_efficiency)


def test_collnet_chain_is_the_network_when_the_network_is_slower() -> None:
    valid = cluster_scenario(
        64, cluster={"gpus": 64, "nics_per_node": 1, "nic_speed_gbps": 400}, fabric={"sharp": "on"}
    )
    prof = fabric_profile(valid, designed_leaf_spine(valid))
    chain = candidate(prof, 64, "CollNetChain/Simple", 8 * GIB)
    sharp = prof.nic_goodput_GBps * SHARP_BW_EFFICIENCY  # one NIC per node
    assert sharp < prof.nvlink_GBps / 2
    assert chain.algbw_GBps == pytest.approx(sharp * prof.collective_efficiency)


def test_in_network_reduction_follows_the_request() -> None:
    size = 8 * GIB
    default = profile(gpus=1024)
    off = profile(gpus=1024, request={"in_network_reduction": False})
    labels = {
        c.algorithm for c in collective_candidates(off, group_for(off, 1024), "all_reduce", size)
    }
    assert default.in_network_reduction and not off.in_network_reduction
    assert not labels & {"CollNetDirect", "CollNetChain"}
    valid = cluster_scenario(1024)
    # fabric.sharp: auto (the default) is what NCCL does without the SHARP plugin: CollNet off.
    assert not fabric_profile(valid, designed_leaf_spine(valid)).in_network_reduction
    with pytest.raises(ModelError) as err:  # an Ethernet fabric without SHARP cannot be asked
        fabric_profile(
            valid, designed_leaf_spine(valid, "roce_v2"), PerfRequest(in_network_reduction=True)
        )
    assert err.value.code == "FP513"


def test_one_node_uses_nvlink_sharp_on_hopper() -> None:
    prof = profile()
    row = point(prof, 8, "all_reduce", 8 * GIB)
    assert row.algorithm == "NVLS/Simple"
    # NCCL maintainers: ~480 GB/s busbw (algbw ~275) on 8 x H100.
    assert 460 < row.busbw_GBps < 500


def test_non_positive_size_is_an_error() -> None:
    prof = profile()
    with pytest.raises(ModelError) as err:
        point(prof, 8, "all_reduce", 0)
    assert err.value.code == "FP506"


# --- calibration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "gpus", "size", "slower"),
    [
        ("nic_latency_ns", 5000.0, 16, 8, True),
        ("switch_latency_ns", 5000.0, 16, 8, True),
        ("collective_latency_us", 30.0, 16, 8, True),
        ("collective_latency_us", 30.0, 8, 8, True),
        ("nic_bw_efficiency", 0.5, 16, 8 * GIB, True),
        ("nvlink_bw_efficiency", 0.5, 8, 8 * GIB, True),
        ("collective_efficiency", 0.5, 16, 8 * GIB, True),
        ("collective_efficiency", 0.5, 8, 8 * GIB, True),
        ("collective_latency_us", 0.1, 16, 8, False),
    ],
)
def test_each_calibration_field_moves_the_prediction(
    field: str, value: float, gpus: int, size: int, slower: bool
) -> None:
    base = point(profile(), gpus, "all_reduce", size).time_us
    calibrated = point(
        profile(request={"calibration": {field: value}}), gpus, "all_reduce", size
    ).time_us
    assert (calibrated > base) if slower else (calibrated < base)
