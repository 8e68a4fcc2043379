"""NCCL's chunked pipeline: channels, pieces, store-and-forward stages, from first principles."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricplan.analytic.nccl_tuning import nccl_tuning
from fabricplan.analytic.pipeline import (
    NCCL_LL128_BUFFER_BYTES,
    NCCL_LL_BUFFER_BYTES,
    NCCL_STEPS,
    PipelineShape,
    channels_for,
    collnet_chain_piece_bytes,
    nvlstree_chunk_bytes,
    nvlstree_shape,
    pipelined_time_us,
    ring_shape,
    tree_levels,
    tree_ll128_piece_bytes,
    tree_shape,
)

LATENCY_US = 60.0
BASE_US = 8.0
ALGBW_GBPS = 20.0  # GB/s = 1e3 bytes/us


def tree(protocol: str = "LL", size: float = 2**20) -> PipelineShape:
    # 16 nodes of 8 GPUs: 7 NVLink hops and 4 tree levels, up and down.
    return tree_shape(8, 16, protocol, max_channels=16, size_bytes=size)


def ring(ranks: int = 24) -> PipelineShape:
    return ring_shape("all_reduce", ranks, "Simple", max_channels=16)  # type: ignore[return-value]


def test_nccl_constants_give_nccls_buffers() -> None:
    # DEFAULT_LL_BUFFSIZE: 8 lines x 512 threads x 8 steps x 16 B; half of each line is flags.
    assert NCCL_LL_BUFFER_BYTES == 2**19
    assert tree().piece_max_bytes == 2**19 / NCCL_STEPS / 2 == 32768
    # Simple ring: a 4 MiB buffer in 8 steps, a slice is 2 steps, a chunk 4 (two slices).
    shape = ring()
    assert shape.piece_max_bytes == 2**20
    assert shape.min_pieces == 2
    assert tree().stages == 2 * (7 + 4)


@pytest.mark.parametrize(
    ("size", "expected"),
    [(1, 1), (4095, 1), (4096 * 3 + 5, 3), (4096 * 16, 16), (2**30, 16)],
)
def test_channels_follow_nccls_thread_threshold(size: int, expected: int) -> None:
    # topoGetAlgoInfo drops a channel while size < channels x 512 threads x 8 bytes (LL).
    assert channels_for(size, tree()) == expected


def test_a_tiny_buffer_costs_only_the_latency() -> None:
    for shape in (tree(), ring()):
        time = pipelined_time_us(1, LATENCY_US, BASE_US, ALGBW_GBPS, shape)
        assert time == pytest.approx(LATENCY_US, rel=1e-3)


@pytest.mark.parametrize("shape", [tree(), ring()])
def test_a_huge_buffer_costs_only_the_bandwidth(shape: PipelineShape) -> None:
    size = 2**42
    time = pipelined_time_us(size, LATENCY_US, BASE_US, ALGBW_GBPS, shape)
    assert time == pytest.approx(size / (ALGBW_GBPS * 1e3), rel=1e-3)


def test_a_ring_hides_its_step_latency_behind_the_link() -> None:
    # 127 MiB over 24 ranks and 16 channels: each rank slot is 2 slices; while a slice crosses one
    # step the link sends the next, so only the launch (base) is added to the link's work.
    size = 133_169_160
    time = pipelined_time_us(size, 231.0, BASE_US, 49.3, ring())
    assert time == pytest.approx(BASE_US + size / (49.3 * 1e3))
    assert time < 231.0 + size / (49.3 * 1e3)  # less than the alpha-beta line


def test_a_tree_pays_every_hop_for_a_one_piece_buffer() -> None:
    # 64 KiB on 16 channels: 4 KiB per channel, one LL piece. The 8 network hops store it whole;
    # the 14 NVLink hops, 7 up the chain and 7 down, pass it line by line: each chain pays one
    # half trip of 2 KiB (512 threads x 8 bytes, split up/down), all at one channel's
    # bandwidth (algbw / 16).
    size = 65536
    shape = tree()
    channel_bytes_per_us = ALGBW_GBPS / 16 * 1e3
    time = pipelined_time_us(size, LATENCY_US, BASE_US, ALGBW_GBPS, shape)
    stored_us = 8 * (size / 16) / channel_bytes_per_us
    passed_us = 2 * 2048 / channel_bytes_per_us
    assert time == pytest.approx(LATENCY_US + stored_us + passed_us)


def test_simple_stores_at_every_hop_ll_and_ll128_only_at_the_network() -> None:
    # Simple: the receiver waits for the sender's tail pointer at every hop. LL/LL128: the proxy
    # sends a step once all of it is written (2 x 4 network hops); NVLink hops pass lines on.
    assert tree("Simple").stored_stages is None
    for protocol in ("LL", "LL128"):
        shape = tree(protocol)
        assert shape.stages == 2 * (7 + 4)
        assert shape.stored_stages == 2 * 4
    # A tree splits its threads between up and down: on average a hop passes half a trip.
    assert tree("LL").trip_bytes == 512 * 8 / 2
    assert tree("LL128").trip_bytes == 640 * 8 * 8 * 15 / 16 / 2
    # A ring stores at the steps that cross the network (tuning.cc's count, per release: 2D for
    # all-reduce up to 2.22, 2(D - 1) from 2.23).
    for version, steps in (("2.19", 2 * 4), ("2.23", 2 * (4 - 1))):
        network = nccl_tuning(version).ring_net_steps("all_reduce", 4)
        ll_ring = ring_shape("all_reduce", 32, "LL", 16, network)
        assert ll_ring is not None
        assert ll_ring.stored_stages == steps == network
    gather = nccl_tuning("2.30").ring_net_steps("all_gather", 4)
    assert ring_shape("all_gather", 32, "LL128", 16, gather).stored_stages == 3  # type: ignore[union-attr]
    assert nccl_tuning("2.30").ring_net_steps("all_reduce", 1) == 0


def test_a_line_by_line_hop_costs_one_trip_of_the_piece() -> None:
    # One 32 KiB LL piece per channel (512 KiB on 16 channels): the 8 network hops store the
    # whole piece, the 14 NVLink hops pass 2 KiB (half a 4 KiB trip) at a time.
    size = 2**19
    shape = tree("LL", size)
    channel_GBps = ALGBW_GBPS / 16  # noqa: N806
    piece_us = 32768 / (channel_GBps * 1e3)
    trip_us = 2048 / (channel_GBps * 1e3)
    time = pipelined_time_us(size, LATENCY_US, BASE_US, ALGBW_GBPS, shape)
    assert time == pytest.approx(LATENCY_US + 8 * piece_us + 2 * trip_us)
    # LL's NVLink hops at their own (faster) rate speed up the passed trips only.
    faster = pipelined_time_us(size, LATENCY_US, BASE_US, ALGBW_GBPS, shape, 2 * ALGBW_GBPS)
    assert faster == pytest.approx(LATENCY_US + 8 * piece_us + 2 * trip_us / 2)


def test_line_by_line_stages_are_cut_through() -> None:
    # Each LL thread forwards its line as soon as its flag arrives (prims_ll.h: readLL, then
    # storeLL to the next peer; no barrier between stages): a trip's serialisation is paid once
    # per run of NVLink stages, so a longer chain adds only its step latencies.
    size = 2**19
    short, long = tree("LL", size), tree_shape(16, 16, "LL", 16, size)
    assert short.line_runs == long.line_runs == 2
    assert long.stages - short.stages == 2 * (16 - 8)
    extra_latency_us = 10.0
    t_short = pipelined_time_us(size, LATENCY_US, BASE_US, ALGBW_GBPS, short)
    t_long = pipelined_time_us(size, LATENCY_US + extra_latency_us, BASE_US, ALGBW_GBPS, long)
    assert t_long - t_short == pytest.approx(extra_latency_us)
    # Store and forward, as before the fix, would have paid a trip at each of the 16 extra hops.
    store_and_forward = replace(long, line_runs=None)
    t_saf = pipelined_time_us(
        size, LATENCY_US + extra_latency_us, BASE_US, ALGBW_GBPS, store_and_forward
    )
    trip_us = 2048 / (ALGBW_GBPS / 16 * 1e3)
    assert t_saf - t_long == pytest.approx((30 - 2) * trip_us)
    # A ring's network steps split its NVLink steps: one run more than network steps at most.
    ring = ring_shape("all_reduce", 32, "LL", 16, 6)
    assert ring is not None and ring.line_runs == 7
    one_domain = ring_shape("all_reduce", 8, "LL", 24, 0)
    assert one_domain is not None and one_domain.line_runs == 1


def test_deep_trees_get_small_ll128_chunks() -> None:
    # computeCollChunkInfo: a 576,000-byte slot, halved while a channel would get fewer than
    # 64 nsteps / ppn chunks (down to 128 KiB), then 16 nsteps / ppn (down to 32 KiB),
    # nsteps = 1 + log2(nodes) + 0.1 ppn.
    slot = NCCL_LL128_BUFFER_BYTES // NCCL_STEPS * 15 // 16
    assert slot == 576000
    per_channel = 2**24 // 16  # 16 MiB on 16 channels, 256 nodes of 8
    nsteps = 1 + 8 + 0.8
    chunk = slot
    while per_channel // chunk < nsteps * 64 / 8 and chunk > 131072:
        chunk //= 2
    while per_channel // chunk < nsteps * 16 / 8 and chunk > 32768:
        chunk //= 2
    assert chunk == 36000
    assert tree_ll128_piece_bytes(2**24, 16, 256, 8) == chunk
    assert tree_shape(8, 256, "LL128", 16, 2**24).piece_max_bytes == chunk
    # Big buffers keep the whole slot; two nodes keep bigger chunks than 256 at the same size.
    assert tree_ll128_piece_bytes(2**34, 16, 256, 8) == slot
    assert tree_ll128_piece_bytes(2**24, 16, 2, 8) > chunk


@pytest.mark.parametrize(("domains", "levels"), [(1, 0), (2, 1), (3, 2), (16, 4), (256, 8)])
def test_tree_levels_are_log2_of_the_domains(domains: int, levels: int) -> None:
    assert tree_levels(domains) == levels


def test_a_lone_channel_moves_at_one_channels_bandwidth() -> None:
    # 1 KiB: one channel (below 2 x 4 KiB), so the buffer moves at algbw / 16, stored at the 8
    # network hops and passed once by each of the two NVLink chains (up and down).
    time = pipelined_time_us(1024, LATENCY_US, BASE_US, ALGBW_GBPS, tree())
    assert time == pytest.approx(LATENCY_US + (8 + 2) * 1024 / (ALGBW_GBPS / 16 * 1e3))


def test_slots_limit_a_latency_bound_pipeline() -> None:
    # Tiny pieces behind a long step latency: a connection recycles a slot one step after use,
    # so no more than NCCL_STEPS pieces cross a stage per step latency.
    shape = PipelineShape(
        stages=2,
        link_stages=1,
        stream_share=1.0,
        piece_max_bytes=1024,
        channel_min_bytes=1,
        max_channels=1,
    )
    steps_us = 100.0  # 50 us per stage
    size = 64 * 1024  # 64 pieces
    time = pipelined_time_us(size, steps_us, 0.0, 1e6, shape)
    period = 50.0 / NCCL_STEPS
    assert time == pytest.approx(steps_us + 2 * size / 64 / 1e9 + 63 * period, rel=1e-6)


def test_collnet_chain_chunk_shrinks_for_smaller_buffers() -> None:
    # calcCollChunking: 256 KiB, halved while a channel gets fewer than depth x 64 chunks (down to
    # 128 KiB), depth x 8 (down to 64 KiB), depth (down to 32 KiB).
    assert collnet_chain_piece_bytes(2**40, 16, 8) == 256 * 1024
    assert collnet_chain_piece_bytes(512 * 2**20, 16, 8) == 128 * 1024
    assert collnet_chain_piece_bytes(2**20, 16, 8) == 32 * 1024


@given(
    size=st.integers(1, 2**40),
    latency=st.floats(1.0, 500.0),
    algbw=st.floats(1.0, 1000.0),
    ranks=st.integers(2, 512),
)
def test_never_faster_than_the_link_nor_the_latency(
    size: int, latency: float, algbw: float, ranks: int
) -> None:
    for shape in (tree(), tree("LL128", size), tree("Simple"), ring(ranks)):
        time = pipelined_time_us(size, latency, BASE_US, algbw, shape)
        assert time >= BASE_US + size / (algbw * 1e3) * (1 - 1e-9)
        assert time >= latency * (1 - 1e-9)
        if shape.link_stages == 1:  # a chain pays its latency and its bandwidth
            assert time >= latency + size / (algbw * 1e3) * (1 - 1e-9)


# --- NVLSTree: NVSwitch in, the tree of domains over the network, NVSwitch out -----------------


def test_nvlstree_chunks_follow_nccls_rules() -> None:
    # calcCollChunking (src/enqueue.cc): 128 KiB (NCCL_NVLS_CHUNKSIZE), at most 64 KiB from four
    # nodes, then 256K/128K/64K/32K while the buffer is below 32/16/4/1 x ops x chunk.
    ops = 16 * 8  # 16 NVLS channels (Hopper) x 8 heads
    assert nvlstree_chunk_bytes(2**33, 2, ops) == 128 * 2**10
    assert nvlstree_chunk_bytes(2**33, 4, ops) == 64 * 2**10
    assert nvlstree_chunk_bytes(4 * ops * 128 * 2**10 - 1, 2, ops) == 64 * 2**10
    assert nvlstree_chunk_bytes(ops * 64 * 2**10 - 1, 2, ops) == 32 * 2**10


def test_an_nvlstree_pipeline_costs_its_fill_at_mid_sizes_and_nothing_at_large() -> None:
    # One 64 KiB chunk per op crosses 2 network hops and 2 NVSwitch stages in turn: the fill is
    # a chunk at each hop at the head's rate and at each NVSwitch stage at the NVLS rate.
    latency, algbw, nvls, hop = 53.2, 274.8, 478.5, 2 * 274.8
    size = 16 * 8 * 64 * 2**10
    shape = nvlstree_shape(size, 2, 8, 16)
    piece = size / (algbw * 1e3)
    fill = 2 * piece * algbw / hop + 2 * piece * algbw / nvls
    got = pipelined_time_us(size, latency, 0.0, algbw, shape, nvls, hop)
    assert got == pytest.approx(latency + fill)
    big = 2**34
    line = latency + big / (algbw * 1e3)
    shape = nvlstree_shape(big, 2, 8, 16)
    assert pipelined_time_us(big, latency, 0.0, algbw, shape, nvls, hop) == pytest.approx(
        line, rel=0.01
    )
