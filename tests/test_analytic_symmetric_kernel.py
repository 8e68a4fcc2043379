"""NCCL's symmetric-memory kernels (``nccl.symmetric_memory``): where they run and their time.

Expected times are NCCL's own model, evaluated here by hand from the constants NCCL's source
states (``queryModel`` in ``src/symmetric.cc`` @ v2.27.3-1; the same in ``queryModel_lsa``,
``src/sym_kernels.cc`` @ v2.30.7-1), below compute capability 10.0:

- ``time = baseLat + softplus(busBytes / bw - 1)`` us, ``softplus(x) = ln(1 + e^x)``;
- ``bw = softmin(blocks x smBw x busMultiplier, peakBw, smBw)`` with ``softmin(x, c, s) = c -
  s ln(1 + (e^(c/s) - 1) e^(-x/s))``, in bytes/us (1 GiB/s = 2^30 / 1e6 bytes/us);
- LL kernels: ``baseLat`` 4.5 us; all_reduce ``smBw`` 65 GiB/s, ``peakBw`` 320 GiB/s; LL bus
  bytes ``ranks x bytes x 9``; the multicast LL all_reduce (``AGxLLMC_R``) has ``busMultiplier``
  1.1, the plain one (``AGxLL_R``) 1;
- NCCL takes the fewest blocks (from 1) within 2.5 % of the time at the most (64), and the
  kernel with the lowest ``time x (1 + 0.025 blocks)``;
- from 2.28 a rank's bytes are first rounded up to a 1024-byte cell.

An 8 B all_reduce on 8 H100 (NVLS): 576 bus bytes; at one block ``bw(AGxLLMC_R) = softmin(1.1 x
69793.1, 343597.4, 69793.1) = 75776.9`` B/us, so ``4.5 + ln(1 + e^(576/75776.9 - 1)) = 4.8153``
us, just under ``AGxLL_R``'s 4.8155 (its ``bw`` at one block is 68947.0); the non-LL kernels
start at ``baseLat`` 7.8. With 2.30's cell: 73 728 bus bytes; one block gives 5.1798 us, 64
blocks 4.8756, two 4.9714 <= 1.025 x 4.8756: two blocks, 4.9714 us.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from fabricplan.analytic.collective import (
    NVLS_REDUCTION_EFFICIENCY,
    collective_point,
    symmetric_kernel_candidate,
)
from fabricplan.analytic.profile import FabricProfile, fabric_profile
from fabricplan.analytic.symmetric_kernel import symmetric_kernel_choice
from fabricplan.analytic.traffic import group_for
from fabricplan.errors import SpecError
from fabricplan.model.results import CollectivePoint
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric

GIB_PER_S = 2**30 / 1e6  # bytes per us


def _softmin(x: float, ceiling: float, softness: float) -> float:
    return ceiling - softness * math.log1p(math.expm1(ceiling / softness) * math.exp(-x / softness))


def _softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def _ll_all_reduce_us(bus_bytes: float, blocks: int, multiplier: float) -> float:
    """NCCL's estimate of an LL all_reduce kernel below compute capability 10.0."""
    sm_bw, peak = 65 * GIB_PER_S, 320 * GIB_PER_S
    return 4.5 + _softplus(bus_bytes / _softmin(blocks * sm_bw * multiplier, peak, sm_bw) - 1)


def _profile(nccl: dict[str, Any], gpus: int = 16, **cluster: Any) -> FabricProfile:
    valid = parse_spec({"cluster": {"gpus": gpus, **cluster}, "nccl": nccl})
    return fabric_profile(valid, design_fabric(valid, "infiniband"))


def _point(
    nccl: dict[str, Any], ranks: int, size: int, collective: str = "all_reduce", **cluster: Any
) -> CollectivePoint:
    profile = _profile(nccl, **cluster)
    return collective_point(profile, group_for(profile, ranks), collective, size)  # type: ignore[arg-type]


def test_8b_all_reduce_on_8_h100_takes_nccls_symmetric_estimate() -> None:
    point = _point({"version": "2.27", "symmetric_memory": True}, 8, 8)
    expected = _ll_all_reduce_us(8 * 8 * 9, 1, 1.1)
    assert expected == pytest.approx(4.8153, abs=1e-4)
    assert point.algorithm == "Symmetric/AGxLLMC_R"
    assert point.time_us == pytest.approx(expected, rel=1e-9)
    # NCCL's plain LL kernel is 0.2 ns slower at one block: the multicast one wins the tie-break
    assert _ll_all_reduce_us(576, 1, 1.0) > expected


def test_from_2_28_a_ranks_bytes_are_rounded_to_a_1_kib_cell() -> None:
    point = _point({"version": "2.30", "symmetric_memory": True}, 8, 8)
    bus = 8 * 1024 * 9
    most = _ll_all_reduce_us(bus, 64, 1.1)
    assert _ll_all_reduce_us(bus, 1, 1.1) > 1.025 * most >= _ll_all_reduce_us(bus, 2, 1.1)
    assert point.time_us == pytest.approx(_ll_all_reduce_us(bus, 2, 1.1), rel=1e-9)
    assert point.time_us == pytest.approx(4.9714, abs=1e-4)


def test_off_by_default_and_off_is_the_plain_model() -> None:
    default = _point({"version": "2.30"}, 8, 8)
    off = _point({"version": "2.30", "symmetric_memory": False}, 8, 8)
    assert off == default
    assert not default.algorithm.startswith("Symmetric")
    assert default.time_us > 10.0  # NCCL's ordinary LL ring: base 6.6 us plus 14 NVLink steps


def test_not_across_nvlink_domains() -> None:
    # 16 H100 on two servers: NCCL's nNodes is 2, so no symmetric support (init.cc @ v2.27.3-1;
    # 2.29+'s network (GIN) symmetric kernels are not modelled)
    on = _point({"version": "2.30", "symmetric_memory": True}, 16, 8)
    off = _point({"version": "2.30"}, 16, 8)
    assert on == off
    assert not on.algorithm.startswith("Symmetric")


def test_not_before_2_27() -> None:
    on = _point({"version": "2.26", "symmetric_memory": True}, 8, 8)
    assert on == _point({"version": "2.26"}, 8, 8)
    notes = _profile({"version": "2.26", "symmetric_memory": True}).notes
    assert any("ignored" in note and "2.27" in note for note in notes)
    assert _point({"version": "2.27.0", "symmetric_memory": True}, 8, 8).algorithm.startswith(
        "Symmetric"
    )


def test_an_nvl72_rack_is_one_domain_with_blackwells_constants() -> None:
    # GB200 NVL72: 72 GPUs in one multi-node NVLink clique (NCCL's nNodes = 1); Blackwell's
    # LL all_reduce: baseLat 11 us, smBw 55 GiB/s, peakBw 600 GiB/s; 72 x 8 x 9 bus bytes.
    cluster: dict[str, Any] = {"gpu": "gb200-nvl72", "gpus_per_node": 4}
    nccl = {"version": "2.27", "symmetric_memory": True}
    point = _point(nccl, 72, 8, gpus=144, **cluster)
    sm_bw, peak = 55 * GIB_PER_S, 600 * GIB_PER_S
    expected = 11.0 + _softplus(72 * 8 * 9 / _softmin(1.1 * sm_bw, peak, sm_bw) - 1)
    assert point.algorithm == "Symmetric/AGxLLMC_R"
    assert point.time_us == pytest.approx(expected, rel=1e-9)
    assert not _point(nccl, 144, 8, gpus=144, **cluster).algorithm.startswith("Symmetric")


def test_without_nvls_the_plain_ll_kernel_runs() -> None:
    point = _point({"version": "2.27", "symmetric_memory": True, "nvls_enable": False}, 8, 8)
    assert point.algorithm == "Symmetric/AGxLL_R"
    assert point.time_us == pytest.approx(_ll_all_reduce_us(576, 1, 1.0), rel=1e-9)


def test_large_buffers_are_held_to_the_fabrics_nvlink() -> None:
    # NCCL's multicast all_reduce peak (480 GiB/s of n (1 + 1/r) bus bytes) is above what the
    # NVSwitch reduces; the time is held to baseLat 7.8 us + n (1 + 1/8) / (B_nvl x e_NVLS).
    size = 2**30
    profile = _profile({"version": "2.30", "symmetric_memory": True})
    point = collective_point(profile, group_for(profile, 8), "all_reduce", size)
    choice = symmetric_kernel_choice("all_reduce", size, 8, "hopper", multicast=True)
    assert choice is not None and choice.kernel.label == "RSxLDMC_AGxSTMC"
    rate_bytes_per_us = profile.nvlink_GBps * NVLS_REDUCTION_EFFICIENCY["hopper"] * 1e3
    floor = 7.8 + (size // 8 + size) / rate_bytes_per_us
    assert point.algorithm == "Symmetric/RSxLDMC_AGxSTMC"
    assert point.time_us == pytest.approx(floor, rel=1e-9)
    assert point.time_us > choice.time_us


def test_all_gather_counts_bytes_per_rank() -> None:
    # nccl-tests' all_gather size is the gathered buffer; NCCL's count is per rank (size / 8)
    size = 8 * 8
    point = _point({"version": "2.27", "symmetric_memory": True}, 8, size, "all_gather")
    choice = symmetric_kernel_choice("all_gather", size, 8, "hopper", multicast=True, cell_bytes=1)
    assert choice is not None and choice.nbytes == 8
    assert point.algorithm == f"Symmetric/{choice.kernel.label}"
    assert point.time_us == pytest.approx(choice.time_us, rel=1e-9)


def test_other_collectives_keep_nccls_algorithms() -> None:
    profile = _profile({"version": "2.30", "symmetric_memory": True})
    group = group_for(profile, 8)
    for collective in ("all_to_all", "broadcast", "sendrecv"):
        assert symmetric_kernel_candidate(profile, group, collective, 1 << 20) is None


def test_nccl_algo_does_not_displace_the_symmetric_kernel() -> None:
    profile = _profile({"version": "2.30", "symmetric_memory": True})
    point = collective_point(profile, group_for(profile, 8), "all_reduce", 8, algorithm="ring")
    assert point.algorithm.startswith("Symmetric")


def test_the_setting_is_a_bool() -> None:
    with pytest.raises(SpecError):
        parse_spec({"cluster": {"gpus": 8}, "nccl": {"symmetric_memory": "yes"}})
