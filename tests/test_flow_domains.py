"""The flow level and the analytic level agree where NCCL's NVLink domains and pipeline bind
(issue 11, "levels that agree").

- A GB200 NVL72 ring crosses the network once per 72-GPU domain, and its NVLink edges bind it
  (the flow level ran its rings over 4-GPU trays and missed the CoreWeave GB200 rows by
  -48 to -76 %).
- Where NCCL runs Simple, the flow level keeps the analytic model's latency and pipeline and
  replaces only its steady transfer (the flow level missed the mid-size rows by a median of
  26.6 %, the analytic model 7.7 %), by the simulated transfer of the algorithm NCCL runs
  (tests/test_flow_trees.py for the trees).
"""

from __future__ import annotations

import numpy as np
import pytest

from fabricplan.analytic.collective import (
    NVLS_REDUCTION_EFFICIENCY,
    chosen_candidate,
    nvlstree_heads_algbw_GBps,
)
from fabricplan.analytic.performance import analytic_performance
from fabricplan.analytic.profile import DEFAULT_COLLECTIVE_EFFICIENCY, fabric_profile
from fabricplan.analytic.traffic import group_for
from fabricplan.model.results import PerfRequest
from fabricplan.sim.flow.performance import flow_performance
from fabricplan.sim.traffic import GpuLayout, ring, ring_nvlink_bytes
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.units import gbps_to_GBps, transfer_time_us

GIB = 2**30


def _request(size: int) -> PerfRequest:
    return PerfRequest(collectives=("all_reduce",), sizes_bytes=(size,), p2p=False, step=False)


def test_ring_crosses_the_fabric_once_per_nvlink_domain() -> None:
    # 2 NVL72 racks of 18 trays x 4 GPUs: 72 rings, each crossing between the racks both ways.
    layout = GpuLayout(gpus=144, gpus_per_node=4, nics_per_node=4, domain_gpus=72)
    t = ring(layout, "all_reduce", GIB)
    assert t.flows == 2 * 72
    assert np.all(t.src // (18 * 4) != t.dst // (18 * 4))  # no flow inside a rack
    assert t.size_bytes[0] == pytest.approx(2 * 143 / 144 * GIB / 72)
    # Each GPU sends 2(n-1)/n of the buffer; over NVLink in 71 of its 72 rings.
    assert ring_nvlink_bytes("all_reduce", GIB, 144, 72, 2) == pytest.approx(
        2 * 143 / 144 * GIB * 71 / 72
    )


def test_gb200_two_domain_all_reduce_flow_agrees_with_analytic() -> None:
    """2 x NVL72, NVLS off (as CoreWeave's run): NCCL's ring, 1 GiB.

    Both levels' ring is bound by NVLink (``B_nvl x 72/71`` of bus bandwidth; the 72 NICs of a
    rack carry 72 x 50 GB/s, 4.6 times more). The analytic level scales that bandwidth by the
    collective efficiency ``eta`` (0.95), the flow level moves bytes at the links' rates, and
    both keep the same latency and pipeline (the flow level's time is the analytic time with
    the steady transfer ``N`` replaced). So flow / analytic = 1 - (1 - eta) N / T, in
    [eta, 1]; the old flow level, crossing the network once per 4-GPU tray, was 3.8x slower.
    """
    spec = {
        "cluster": {"gpus": 144, "gpu": "gb200-nvl72", "gpus_per_node": 4, "nics_per_node": 4},
        "nccl": {"nvls_enable": False},
    }
    valid = parse_spec(spec)
    design = design_fabric(valid, "infiniband")
    analytic = analytic_performance(valid, design, _request(GIB)).collectives[0]
    flow = flow_performance(valid, design, _request(GIB)).collectives[0]
    assert analytic.algorithm == "Ring/Simple"
    ratio = flow.time_us / analytic.time_us
    assert DEFAULT_COLLECTIVE_EFFICIENCY - 0.005 <= ratio <= 1.0


def test_simple_mid_size_keeps_nccl_latency_and_pipeline() -> None:
    """2 x 8 H100, 4 MiB all_reduce, where NCCL runs NVLSTree/Simple.

    The flow time less what the analytic model counts beyond its steady transfer (``T - N``:
    base and per-step latencies, the pipeline's fill) is the simulated transfer of NVLSTree's
    tree between the two domains, bound by what the level does not simulate. Each domain is the
    root of one tree and a leaf of the other, so each of its 8 NVLS heads' NICs sends S / 8
    (at the 400 Gb/s line rate, plus the packet headers: under 5 % of a 4 KiB MTU); NVLS inside
    the domain moves ``S (1 + 1/8)`` per GPU at the NVSwitch's reduction rate; NCCL's heads cap
    moves S at ``heads x perChMaxNVLSTreeBw``. The slowest of the three binds. The old flow
    level added the 8-byte (LL) latency instead and came in under ``T - N`` alone; the one
    before this ran the ring (``2(n-1)/n x S / 8`` per NIC) in NVLSTree's place.
    """
    size = 4 * 2**20
    valid = parse_spec({"cluster": {"gpus": 16}})
    design = design_fabric(valid, "infiniband")
    analytic = analytic_performance(valid, design, _request(size)).collectives[0]
    flow = flow_performance(valid, design, _request(size)).collectives[0]
    assert analytic.algorithm == "NVLSTree/Simple"
    assert flow.algorithm == "flow/nvlstree"
    profile = fabric_profile(valid, design, _request(size))
    group = group_for(profile, None)
    pair = chosen_candidate(profile, group, "all_reduce", size)
    kept_us = analytic.time_us - transfer_time_us(size, pair.algbw_GBps)
    line_rate = gbps_to_GBps(valid.spec.cluster.nic_speed_gbps)
    wire_us = transfer_time_us(size / 8, line_rate)
    nvls_rate = profile.nvlink_GBps * NVLS_REDUCTION_EFFICIENCY["hopper"]
    nvls_us = transfer_time_us(size * 9 / 8, nvls_rate)
    heads_cap = nvlstree_heads_algbw_GBps(profile, group)
    assert heads_cap is not None
    cap_us = transfer_time_us(size, heads_cap)
    low = max(wire_us, nvls_us, cap_us)
    high = max(1.05 * wire_us, nvls_us, cap_us)
    assert kept_us + low <= flow.time_us <= kept_us + high + 1e-9


def test_simulate_runs_its_patterns_over_the_nvlink_domains() -> None:
    # `simulate --pattern ring_all_reduce` on 2 x NVL72 built its ring over 4-GPU trays (it
    # crossed the network 36 times per rack, 10.7 ms at 1 GiB); the rack's trays talk over
    # NVLink, so no flow of the pattern starts and ends in one rack.
    from fabricplan.sim.run import _traffic
    from fabricplan.sim.run_options import RunOptions

    valid = parse_spec(
        {"cluster": {"gpus": 144, "gpu": "gb200-nvl72", "gpus_per_node": 4, "nics_per_node": 4}}
    )
    options = RunOptions(pattern="ring_all_reduce", size_bytes=GIB)
    t = _traffic(valid, options, seed=0, payload_share=1.0)
    assert t.flows == 2 * 72
    assert np.all(t.src // 72 != t.dst // 72)
