"""How a collective's time scales with its size: never much faster for more data, never past the
links' physical bound, and a 256-node tree at mid sizes as NCCL pipelines it."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.analytic.collective import busbw_factor, collective_candidates, collective_point
from fabricplan.analytic.profile import FabricProfile, fabric_profile
from fabricplan.analytic.traffic import CommGroup, group_for
from fabricplan.model.results import CollectiveName, PerfRequest
from fabricplan.model.scenario import TechnologyName
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabrics import cluster_scenario, designed_leaf_spine

MIB = 2**20

CLUSTERS: dict[str, dict[str, Any]] = {
    "h100": {"gpus": 1024, "gpu": "h100", "nic_speed_gbps": 400},
    "a100": {"gpus": 1024, "gpu": "a100", "nic_speed_gbps": 200},
    "b200": {"gpus": 1024, "gpu": "b200", "nic_speed_gbps": 400},
    "gb200-nvl72": {"gpus": 1152, "gpu": "gb200-nvl72", "nic_speed_gbps": 400},
}
TECHNOLOGIES: tuple[TechnologyName, ...] = ("infiniband", "roce_v2", "roce_v1")
COLLECTIVES: tuple[CollectiveName, ...] = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "sendrecv",
)

SAME_PAIR_FLOOR = 2 / 3
"""While NCCL keeps its (algorithm, protocol), doubling the size can only add channels, from
``c = floor(size / threshold)`` to at most ``2c + 1`` (``topoGetAlgoInfo``), so a channel's share
of the data, and every size-driven term of the time, falls to no less than ``2c / (2c + 1) >= 2/3``
(one channel to three)."""
SWITCH_FLOOR = 0.4
"""Where NCCL's tuner changes pair it compares alpha-beta lines and does not see the pipeline fill
of the pair it leaves (CoreWeave's 16-node Tree/LL ran 1.6-1.8x its corrected estimate at 16-128
KiB): the time may fall there, by as much as NCCL's own ``treeCorrectionFactor`` admits a tree
loses at mid sizes (down to 0.4 of its line). The bug this guards against fell to 0.25 per
doubling (a 16 MiB tree all-reduce 4x slower than 64 MiB)."""
TUNER_MISS_CEILING = 1 / 0.4
"""The most an all-reduce may take over what NCCL's tuner expected of the pair it picked: the
lowest ``treeCorrectionFactor`` again."""


@functools.cache
def profile_of(gpu: str, tech: TechnologyName, in_network_reduction: bool | None) -> FabricProfile:
    cluster = CLUSTERS[gpu]
    valid = cluster_scenario(
        cluster["gpus"], cluster=cluster, fabric={"technologies": list(TECHNOLOGIES)}
    )
    request = PerfRequest(in_network_reduction=in_network_reduction)
    return fabric_profile(valid, designed_leaf_spine(valid, tech), request)


@st.composite
def communicators(draw: st.DrawFn) -> tuple[FabricProfile, CommGroup, CollectiveName]:
    """A fabric of every GPU and technology family, and a communicator of 2 GPUs to the cluster."""
    gpu = draw(st.sampled_from(sorted(CLUSTERS)))
    prof = profile_of(
        gpu, draw(st.sampled_from(TECHNOLOGIES)), draw(st.sampled_from((None, False)))
    )
    domain = prof.nvlink_domain_gpus
    domains = draw(st.integers(1, prof.gpus // domain))
    ranks = draw(st.integers(2, domain)) if domains == 1 else domains * domain
    return prof, group_for(prof, ranks), draw(st.sampled_from(COLLECTIVES))


def physical_busbw_GBps(prof: FabricProfile, group: CommGroup, op: CollectiveName) -> float:  # noqa: N802
    """The most bus bandwidth any algorithm could reach: the bytes a GPU (over NVLink) or a domain
    (over its NICs) must receive at least, at the links' full rate."""
    n, local, domains = group.ranks, group.local_ranks, group.domains
    nvlink = prof.nvlink_GBps
    nics = prof.nic_goodput_GBps * group.nics_per_domain(prof.nics_per_node)
    if op == "all_reduce":
        if domains == 1:
            # the NVSwitch reducing: a GPU still receives the whole result; else 2(L-1)/L of it
            algbw = nvlink if prof.nvls else nvlink * local / (2 * (local - 1))
        else:
            # SHARP: a domain receives the result once; else 2(D-1)/D of the buffer (a
            # bandwidth-optimal all-reduce among D parties, Patarasuk & Yuan 2009)
            reduced = nics if prof.in_network_reduction else nics * domains / (2 * (domains - 1))
            algbw = reduced
    elif op in ("all_gather", "reduce_scatter"):
        # a GPU receives (n-1)/n of the buffer; a domain (D-1)/D of it from outside
        algbw = nvlink * n / (n - 1) if domains == 1 else nics * domains / (domains - 1)
    elif op == "all_to_all":
        # a rank's buffer goes (n-1)/n to others; a domain's L ranks send (n-L)/n of theirs out
        algbw = nvlink * n / (n - 1) if domains == 1 else nics * n / (local * (n - local))
    else:  # broadcast, sendrecv: the whole buffer reaches a GPU, or a domain
        algbw = nvlink if domains == 1 else nics
    return algbw * busbw_factor(op, n)


SIZES = [2**e for e in range(35)]  # 1 B to 16 GiB


@settings(max_examples=200, deadline=None, derandomize=True)
@given(case=communicators())
def test_time_never_falls_much_when_the_size_doubles(
    case: tuple[FabricProfile, CommGroup, CollectiveName],
) -> None:
    prof, group, op = case
    rows = [collective_point(prof, group, op, size) for size in SIZES]
    for small, large in itertools.pairwise(rows):
        floor = SAME_PAIR_FLOOR if small.algorithm == large.algorithm else SWITCH_FLOOR
        assert large.time_us >= floor * small.time_us * (1 - 1e-9), (small, large)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(case=communicators())
def test_bus_bandwidth_never_exceeds_the_links(
    case: tuple[FabricProfile, CommGroup, CollectiveName],
) -> None:
    prof, group, op = case
    bound = physical_busbw_GBps(prof, group, op)
    for size in SIZES:
        row = collective_point(prof, group, op, size)
        assert row.busbw_GBps <= bound * (1 + 1e-9), row


@settings(max_examples=100, deadline=None, derandomize=True)
@given(case=communicators())
def test_an_all_reduce_takes_at_most_what_the_tuner_can_miss(
    case: tuple[FabricProfile, CommGroup, CollectiveName],
) -> None:
    prof, group, _ = case
    for size in SIZES:
        candidates = collective_candidates(prof, group, "all_reduce", size)
        chosen = min(candidates, key=lambda c: c.time_us(size))
        assert chosen.achieved_time_us(size) <= TUNER_MISS_CEILING * chosen.time_us(size), (
            chosen.label,
            size,
        )


# --- 256 H100 nodes, 8 x 400G rails, RoCE (no SHARP): a deep tree at mid sizes ---------------


def training_2k() -> tuple[FabricProfile, CommGroup]:
    """examples/training-2k: 2,048 H100 GPUs, 256 nodes, 8 x 400G rails, rail-optimized."""
    valid = parse_spec(
        {
            "cluster": {
                "gpus": 2048,
                "gpus_per_node": 8,
                "nics_per_node": 8,
                "nic_speed_gbps": 400,
                "gpu": "h100",
            },
            "fabric": {
                "technologies": ["roce_v2"],
                "topology": "rail_optimized",
                "oversubscription": 1,
            },
        }
    )
    prof = fabric_profile(valid, design_fabric(valid, "roce_v2"))
    return prof, group_for(prof, 2048)


def test_a_deep_tree_is_not_slower_for_less_data() -> None:
    prof, group = training_2k()
    times = [collective_point(prof, group, "all_reduce", s * MIB).time_us for s in (1, 4, 16, 64)]
    assert times == sorted(times)


def test_a_256_node_tree_at_16_mib_runs_between_its_line_and_a_full_store_per_hop() -> None:
    # NCCL_ALGO=Tree at 16 MiB: LL128 (its tuner's choice). First principles:
    # - bandwidth: 16 SMs = 8 tree pairs, each at most perChMaxTreeLL128Bw (Hopper, > 2 nodes:
    #   29 GB/s of bus bandwidth, half that of algbw); the RoCE NICs (8 x ~48 GB/s / 2) allow more;
    # - pieces: NCCL's tree LL128 chunk for 1 MiB per channel, 256 nodes of 8 GPUs: 576,000 bytes
    #   halved while fewer than 64 x 9.8 / 8 chunks (to <= 128 KiB), then 16 x 9.8 / 8 (to
    #   <= 32 KiB): 36,000 bytes;
    # - hops: 2 x (7 NVLink + log2(256) network) = 30.
    # Fastest: the alpha-beta line (no fill). Slowest: every hop stores the whole chunk.
    prof, group = training_2k()
    size = 16 * MIB
    row = collective_point(prof, group, "all_reduce", size, algorithm="tree")
    assert row.algorithm == "Tree/LL128"
    tree = next(
        c
        for c in collective_candidates(prof, group, "all_reduce", size)
        if c.label == row.algorithm
    )
    algbw = 8 * 29.0 / 2 * prof.collective_efficiency
    assert tree.algbw_GBps == pytest.approx(algbw)
    # NCCL's own per-hop latencies (tuning.cc: base 14, NVLink 1.25, network 8.5 us) are a floor.
    assert tree.latency_us >= 14 + 2 * (7 * 1.25 + 8 * (8.5 - 1.5))
    chunk, hops, channels = 36000, 30, 16
    fastest_us = tree.latency_us + size / (algbw * 1e3)
    slowest_us = fastest_us + hops * chunk / (algbw / channels * 1e3)
    assert fastest_us < row.time_us < slowest_us
    factor = busbw_factor("all_reduce", group.ranks)
    assert factor * size / (slowest_us * 1e3) < row.busbw_GBps < factor * size / (fastest_us * 1e3)
    assert 60 < row.busbw_GBps < 100  # ~72 GB/s; NCCL's own constants allow ~100 at most
