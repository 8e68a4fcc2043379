"""NCCL's chunked pipeline: channels, pieces, store-and-forward stages, from first principles."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricplan.analytic.pipeline import (
    NCCL_LL_BUFFER_BYTES,
    NCCL_STEPS,
    PipelineShape,
    channels_for,
    collnet_chain_piece_bytes,
    pipelined_time_us,
    ring_shape,
    tree_shape,
)

LATENCY_US = 60.0
BASE_US = 8.0
ALGBW_GBPS = 20.0  # GB/s = 1e3 bytes/us


def tree() -> PipelineShape:
    # 16 nodes of 8 GPUs: 7 NVLink hops and 4 tree levels, up and down.
    return tree_shape(local_ranks=8, levels=4, protocol="LL", max_channels=16)


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
    # 64 KiB on 16 channels: 4 KiB per channel, one piece. Store and forward: each of the 22
    # hops waits for the whole piece at one channel's bandwidth (algbw / 16).
    size = 65536
    shape = tree()
    per_channel_bytes = size / 16
    hop_us = per_channel_bytes / (ALGBW_GBPS / 16 * 1e3)
    time = pipelined_time_us(size, LATENCY_US, BASE_US, ALGBW_GBPS, shape)
    assert time == pytest.approx(LATENCY_US + shape.stages * hop_us)


def test_a_lone_channel_moves_at_one_channels_bandwidth() -> None:
    # 1 KiB: one channel (below 2 x 4 KiB), so the buffer moves at algbw / 16 through 22 hops.
    time = pipelined_time_us(1024, LATENCY_US, BASE_US, ALGBW_GBPS, tree())
    assert time == pytest.approx(LATENCY_US + 22 * 1024 / (ALGBW_GBPS / 16 * 1e3))


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
    for shape in (tree(), ring(ranks)):
        time = pipelined_time_us(size, latency, BASE_US, algbw, shape)
        assert time >= BASE_US + size / (algbw * 1e3) * (1 - 1e-9)
        assert time >= latency * (1 - 1e-9)
        if shape.link_stages == 1:  # a chain pays its latency and its bandwidth
            assert time >= latency + size / (algbw * 1e3) * (1 - 1e-9)
