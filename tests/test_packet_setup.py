"""The packet driver's set-up: a run's tables are estimated before any is allocated, the
estimate is what the tables then take, and a run that would not fit is refused in one line
saying how much, which tables and what to do (FP660)."""

from __future__ import annotations

import dataclasses
import tracemalloc

import pytest

from fabricplan.errors import ModelError
from fabricplan.sim.packet.network import star
from fabricplan.sim.packet.simulation import build_state
from fabricplan.sim.packet.spec import DATA_CLASSES, packet_spec
from fabricplan.sim.packet.state import run_state_bytes
from fabricplan.sim.traffic import GpuLayout, incast


def test_the_estimate_is_what_the_tables_take() -> None:
    net = star(4)
    traffic = incast(GpuLayout(4, 1, 1), 3, 300_000)
    spec = packet_spec("pfc", "dcqcn", "ecmp", delivery="nic_reorder")
    state = build_state(net, traffic, spec, seed=0)
    packets = int(traffic.packet_counts(spec.mtu_bytes).sum())
    need = run_state_bytes(
        net.links,
        traffic.flows,
        packets,
        state.fh.shape[2],
        DATA_CLASSES + 1,
        net.links,
        spec.max_samples,
        packets,
        int_hops=state.pint.shape[2],
    )
    assert need["queue samples"] == state.samples.nbytes + state.sample_ps.nbytes
    assert need["packet pool"] == state.pi.nbytes + state.pint.nbytes
    assert need["event heap"] == state.heap.nbytes
    assert need["flow tables"] == state.fi.nbytes + state.ff.nbytes + state.fh.nbytes
    assert need["link tables"] == state.li.nbytes + state.lf.nbytes + state.lc.nbytes
    assert need["placement"] == state.rx_seen.nbytes + state.tx_state.nbytes


def test_a_run_that_would_not_fit_is_refused_before_it_allocates() -> None:
    net = star(4)  # 8 links
    traffic = incast(GpuLayout(4, 1, 1), 3, 300_000)
    # 2^26 samples of 8 links, float32: 2 GiB of samples (plus 2^26 int64 times: 512 MiB)
    spec = dataclasses.replace(packet_spec("pfc", "dcqcn", "ecmp"), max_samples=2**26)
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as caught:
            build_state(net, traffic, spec, seed=0, max_memory_bytes=2**30)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "FP660"
    assert "need at least 2.5 GiB (queue samples 2.5 GiB" in caught.value.what
    assert "more than 1.0 GiB (max_memory_bytes)" in caught.value.what
    assert "probe_links" in caught.value.fix
    assert peak < 64 * 2**20  # the 2.5 GiB were never asked for


def test_probing_fewer_links_makes_it_fit() -> None:
    net = star(4)
    traffic = incast(GpuLayout(4, 1, 1), 3, 300_000)
    spec = dataclasses.replace(
        packet_spec("pfc", "dcqcn", "ecmp"), max_samples=2**26, probe_links=(0,)
    )
    # one probed link: 2^26 x 4 B + 2^26 x 8 B = 768 MiB, under the 1 GiB
    state = build_state(net, traffic, spec, seed=0, max_memory_bytes=2**30)
    assert state.samples.shape == (2**26, 1)


def test_int_records_are_allocated_for_hpcc_only() -> None:
    net = star(4)
    traffic = incast(GpuLayout(4, 1, 1), 3, 300_000)
    dcqcn = build_state(net, traffic, packet_spec("pfc", "dcqcn", "ecmp"), seed=0)
    hpcc = build_state(net, traffic, packet_spec("pfc", "hpcc", "ecmp"), seed=0)
    assert dcqcn.pint.nbytes == 0  # nothing writes INT records without HPCC
    slots, hops = hpcc.pi.shape[0], hpcc.fh.shape[2]
    assert hpcc.pint.shape == (slots, 4, hops)
