"""NCCL's symmetric-memory kernels (2.27+) and NCCL's own estimate of their time.

From 2.27 NCCL runs all_reduce, all_gather and reduce_scatter with dedicated kernels when both
buffers of the call lie in windows every rank registered symmetrically
(``ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC)``; nccl-tests ``-R 2``) and every rank is
in one NVLink domain (NCCL's ``nNodes == 1``: one server, or one multi-node NVLink clique such as
an NVL72 rack). A plain run registers nothing and never gets them, hence the spec's
``nccl.symmetric_memory`` (default off). When they apply NCCL uses them without comparing them
with its ordinary algorithms ("For now just always use symmetric if available", ``src/enqueue.cc``
@ v2.27.3-1; with both buffers registered ``symmetric_sched.cc`` @ v2.30.7-1 never falls back).

NCCL picks the kernel from its own model (``queryModel`` / ``queryModel_lsa``): for each kernel
that can run, ``time = base + softplus(bus_bytes / bw - 1)`` us with ``bw = softmin(blocks x
per-block bandwidth x multiplier, peak)``, at the fewest blocks within 2.5 % of the time at the
most; then the lowest ``time x (1 + 0.025 blocks)``. That estimate is what this module returns
(:func:`symmetric_kernel_choice`); the collective model then keeps it, never faster than the
fabric's NVLink carries the kernel's bytes (:mod:`.collective`).

Conditions modelled (``ncclSymImplemented``, ``ncclSymPickKernel`` @ v2.27.3-1;
``ncclSymkImplemented``, ``ncclSymkMask`` @ v2.30.7-1): nccl-tests' default data, fp32 ``sum``
(the kernels take fp32 and smaller floats, never fp64); multicast (NVLS) kernels only where NCCL
has NVLS and from 3 ranks; LL kernels below 2 GiB of bus bytes, none from 64 GiB. Not modelled:
the GIN kernels of 2.29+ that run all_gather / reduce_scatter across NVLink domains over the
network, the TMA kernels (off by default, ``NCCL_SYM_TMA_ENABLE=0``), groups of several
collectives.

References
----------
NVIDIA/nccl ``src/symmetric.cc``, ``src/include/symmetric.h``, ``src/enqueue.cc``,
``src/init.cc`` @ v2.27.3-1; ``src/sym_kernels.cc``, ``src/include/sym_kernels.h``,
``src/scheduler/symmetric_sched.cc`` @ v2.28.3-1 and v2.30.7-1 (the model's constants are the
same at every tag from v2.27.3-1 to v2.30.7-1).

>>> choice = symmetric_kernel_choice("all_reduce", 8, 8, "hopper", multicast=True, cell_bytes=1)
>>> choice.kernel.label, round(choice.time_us, 3), choice.blocks
('AGxLLMC_R', 4.815, 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.units import GiBps_to_bytes_per_us

SYMMETRIC_KERNELS_FIRST_RELEASE = (2, 27, 0)
"""The first NCCL release with symmetric kernels (v2.27.3-1: "Symmetric memory API and
symmetric kernels")."""

SYMK_CELL_BYTES_FROM_2_28 = 1024
"""From 2.28 NCCL rounds each rank's element count up to a 1024-byte cell before its model
(``NCCL_SYM_KERNEL_CELL_SIZE``, ``src/include/sym_kernels.h`` and ``alignUp(task->count,
cellCount)``, ``src/scheduler/symmetric_sched.cc`` @ v2.28.3-1, unchanged @ v2.30.7-1); 2.27
models the bytes as given (1)."""

SYMK_MAX_BLOCKS = 64
"""Most thread blocks a symmetric kernel runs (``ncclSymMaxBlocks``, ``src/include/symmetric.h``
@ v2.27.3-1; ``ncclSymkMaxBlocks`` @ v2.30.7-1); NCCL's default ``maxCTAs`` (``MAXCHANNELS``,
64) does not lower it."""
SYMK_MIN_BLOCKS = 1
"""Fewest blocks NCCL tries (``config.minCTAs`` default 1, ``src/init.cc`` v2.27.3-1 to
v2.30.7-1)."""
SYMK_MULTICAST_BLOCK_BUDGET: dict[str, int] = {"pre_blackwell": 16, "blackwell": 32}
"""Blocks the multicast kernels share among the ranks: at most ``ceil(budget / ranks)`` each
(``nMaxBlocksNvls``: 16 below compute capability 10.0, 32 from it)."""

SYMK_LL_BUS_FACTOR = 9.0
"""LL kernels' bus bytes per rank and byte: ``ranks x bytes x 9`` ("2X the bytes, plus some
processing, plus no unrolling", ``LL_BusFactor``)."""
SYMK_LL_LINE_FACTOR = 2.0
"""Bytes an LL kernel puts on NVLink per data byte (an 8-byte flag with every 8 data bytes,
NCCL's LL protocol): the part of :data:`SYMK_LL_BUS_FACTOR` that is traffic, used only for the
fabric's floor."""
SYMK_LL_MAX_BUS_BYTES = 2 << 30
"""LL kernels need fewer bus bytes than 2 GiB (32-bit element counts)."""
SYMK_MAX_BUS_BYTES = 32 * (2 << 30)
"""No symmetric kernel from 64 GiB of bus bytes (32-bit chunk counts)."""

# fmt: off
SYMK_BASE_LATENCY_US: dict[str, dict[str, float]] = {
    # kernel kind: LL all_gather / other LL / non-LL all_reduce / other non-LL
    "pre_blackwell": {"ll_all_gather": 4.5, "ll": 4.5, "all_reduce": 7.8, "other": 7.8},
    "blackwell":     {"ll_all_gather": 8.5, "ll": 11.0, "all_reduce": 19.5, "other": 13.0},
}
# fmt: on
"""``baseLat`` (us): below compute capability 10.0 LL 4.5, others 7.8; from 10.0 LL all_gather
8.5, other LL 11, non-LL all_reduce 19.5, others 13.0."""
SYMK_BLOCK_BW_GIBPS: dict[str, dict[str, float]] = {
    "pre_blackwell": {"all_reduce": 65.0, "other": 44.0},
    "blackwell": {"all_reduce": 55.0, "other": 55.0},
}
"""``smBw``: what one block moves, GiB/s (below 10.0: all_reduce 65, others 44; from 10.0: 55)."""
SYMK_PEAK_BW_GIBPS: dict[str, dict[str, float]] = {
    "pre_blackwell": {"multicast_all_reduce": 480.0, "other": 320.0},
    "blackwell": {"multicast_all_reduce": 1000.0, "other": 600.0},
}
"""``peakBw``, GiB/s: the multicast all_reduce (``RSxLDMC_AGxSTMC``) 480 below 10.0 and 1000
from it; every other kernel 320 and 600."""
SYMK_BLOCK_TOLERANCE = 1.025
"""NCCL runs the fewest blocks whose time is within 2.5 % of the time at the most."""
SYMK_BLOCK_PENALTY = 0.025
"""``smPenalty``: kernels are compared at ``time x (1 + 0.025 blocks)``."""
SYMK_LL_MULTICAST_MULTIPLIER = 1.1
"""``busMultiplier`` of the LL multicast kernels ("To beat non-MC LL")."""
SYMK_STORE_MULTICAST_MULTIPLIER = 0.55
"""``busMultiplier`` of the multicast all_gather and reduce_scatter: ``0.55 x ranks``."""


@dataclass(frozen=True, slots=True)
class SymmetricKernel:
    """One of NCCL's symmetric kernels (``ncclSymKernelId``), in NCCL's order."""

    collective: str
    label: str
    """NCCL's name after the collective (``AllReduce_AGxLL_R`` -> ``AGxLL_R``)."""
    ll: bool
    """An LL (flagged-line) kernel."""
    multicast: bool
    """Needs NVLS multicast stores (``STMC``)."""

    @property
    def switch_reduces(self) -> bool:
        """The NVSwitch reduces (``LDMC``: multicast loads that reduce in the switch)."""
        return self.multicast and not self.ll and self.collective != "all_gather"

    def bus_bytes(self, nbytes: int, ranks: int) -> float:
        """NCCL's bus bytes (``max(bytes sent, bytes received)``) for ``nbytes`` per rank."""
        if self.ll:
            return ranks * nbytes * SYMK_LL_BUS_FACTOR
        if self.collective == "all_reduce":
            if self.multicast:
                return nbytes // ranks + nbytes
            return 2 * nbytes * (ranks - 1) // ranks
        return (ranks - 1) * nbytes

    def line_bytes(self, nbytes: int, ranks: int) -> float:
        """Bytes the kernel moves over one GPU's NVLink (the fabric's floor)."""
        if self.ll:
            return self.bus_bytes(nbytes, ranks) / SYMK_LL_BUS_FACTOR * SYMK_LL_LINE_FACTOR
        return self.bus_bytes(nbytes, ranks)

    def multiplier(self, ranks: int) -> float:
        """``busMultiplier``."""
        if not self.multicast:
            return 1.0
        if self.ll:
            return SYMK_LL_MULTICAST_MULTIPLIER
        if self.collective == "all_reduce":
            return float(ranks)
        return SYMK_STORE_MULTICAST_MULTIPLIER * ranks


SYMMETRIC_KERNELS: tuple[SymmetricKernel, ...] = (
    SymmetricKernel("all_reduce", "AGxLL_R", ll=True, multicast=False),
    SymmetricKernel("all_reduce", "AGxLLMC_R", ll=True, multicast=True),
    SymmetricKernel("all_reduce", "RSxLD_AGxST", ll=False, multicast=False),
    SymmetricKernel("all_reduce", "RSxLDMC_AGxSTMC", ll=False, multicast=True),
    SymmetricKernel("all_gather", "LL", ll=True, multicast=False),
    SymmetricKernel("all_gather", "LLMC", ll=True, multicast=True),
    SymmetricKernel("all_gather", "ST", ll=False, multicast=False),
    SymmetricKernel("all_gather", "STMC", ll=False, multicast=True),
    SymmetricKernel("reduce_scatter", "LL", ll=True, multicast=False),
    SymmetricKernel("reduce_scatter", "LD", ll=False, multicast=False),
    SymmetricKernel("reduce_scatter", "LDMC", ll=False, multicast=True),
)
"""The kernels NCCL 2.27-2.30 chooses from within one NVLink domain (``kernelName``; 2.30's TMA
variants are off by default); an earlier kernel wins a tie."""


@dataclass(frozen=True, slots=True)
class SymmetricKernelChoice:
    """The kernel NCCL picks, its block count and NCCL's estimate of its time."""

    kernel: SymmetricKernel
    blocks: int
    time_us: float
    nbytes: int
    """Bytes per rank NCCL's model saw (after the 2.28+ cell rounding)."""
    ranks: int


def _softmin(x: float, ceiling: float, softness: float) -> float:
    """A smooth ``min(x, ceiling)`` (NCCL's ``softmin``)."""
    return ceiling - softness * math.log1p(math.expm1(ceiling / softness) * math.exp(-x / softness))


def _softplus(x: float, softness: float) -> float:
    """A smooth ``max(0, x)`` (NCCL's ``softplus``)."""
    z = x / softness
    return x if z >= 100.0 else softness * math.log1p(math.exp(z))


def _arch(gpu_class: str | None) -> str:
    return "blackwell" if gpu_class == "blackwell" else "pre_blackwell"


def kernel_base_latency_us(kernel: SymmetricKernel, gpu_class: str | None) -> float:
    """``baseLat`` of a kernel on a GPU class (:data:`SYMK_BASE_LATENCY_US`), us.

    >>> kernel_base_latency_us(SYMMETRIC_KERNELS[3], "blackwell")      # RSxLDMC_AGxSTMC
    19.5
    """
    table = SYMK_BASE_LATENCY_US[_arch(gpu_class)]
    if kernel.ll:
        return table["ll_all_gather" if kernel.collective == "all_gather" else "ll"]
    return table["all_reduce" if kernel.collective == "all_reduce" else "other"]


def kernel_time_us(
    kernel: SymmetricKernel, nbytes: int, ranks: int, blocks: int, gpu_class: str | None
) -> float:
    """NCCL's estimate for ``kernel`` on ``blocks`` blocks (``model``), us.

    >>> ar = SYMMETRIC_KERNELS[0]                                 # AllReduce_AGxLL_R
    >>> round(kernel_time_us(ar, 8, 8, 1, "hopper"), 4)           # 4.5 + softplus(576/bw - 1)
    4.8155
    """
    arch = _arch(gpu_class)
    collective = "all_reduce" if kernel.collective == "all_reduce" else "other"
    base = kernel_base_latency_us(kernel, gpu_class)
    block_bw = GiBps_to_bytes_per_us(SYMK_BLOCK_BW_GIBPS[arch][collective])
    peak_key = "multicast_all_reduce" if kernel.label == "RSxLDMC_AGxSTMC" else "other"
    peak = GiBps_to_bytes_per_us(SYMK_PEAK_BW_GIBPS[arch][peak_key])
    bw = _softmin(blocks * block_bw * kernel.multiplier(ranks), peak, block_bw)
    return base + _softplus(kernel.bus_bytes(nbytes, ranks) / bw - 1.0, 1.0)


def _max_blocks(kernel: SymmetricKernel, ranks: int, gpu_class: str | None) -> int:
    if kernel.multicast and not kernel.ll:
        return math.ceil(SYMK_MULTICAST_BLOCK_BUDGET[_arch(gpu_class)] / ranks)
    return SYMK_MAX_BLOCKS


def _blocks_and_time(
    kernel: SymmetricKernel, nbytes: int, ranks: int, gpu_class: str | None
) -> tuple[int, float]:
    """The fewest blocks within :data:`SYMK_BLOCK_TOLERANCE` of the most, and their time."""
    most = _max_blocks(kernel, ranks, gpu_class)
    best = kernel_time_us(kernel, nbytes, ranks, most, gpu_class)
    for blocks in range(SYMK_MIN_BLOCKS, most):
        time = kernel_time_us(kernel, nbytes, ranks, blocks, gpu_class)
        if time <= SYMK_BLOCK_TOLERANCE * best:
            return blocks, time
    return most, best


def symmetric_kernel_choice(
    collective: str,
    size_bytes: int,
    ranks: int,
    gpu_class: str | None,
    multicast: bool,
    cell_bytes: int = SYMK_CELL_BYTES_FROM_2_28,
) -> SymmetricKernelChoice | None:
    """The symmetric kernel NCCL runs for an nccl-tests ``size`` on ``ranks`` GPUs of one NVLink
    domain, or ``None`` when none can (another collective, or too large).

    ``size_bytes`` is nccl-tests' size: the buffer for all_reduce, the whole gathered buffer for
    all_gather and reduce_scatter (NCCL's count is per rank: ``size / ranks``). ``multicast``:
    NCCL has NVLS here. ``cell_bytes``: the release's rounding of a rank's bytes (1 for 2.27).

    >>> symmetric_kernel_choice("all_reduce", 2**30, 8, "hopper", multicast=True).kernel.label
    'RSxLDMC_AGxSTMC'
    >>> symmetric_kernel_choice("all_to_all", 8, 8, "hopper", multicast=True) is None
    True
    """
    kernels = [k for k in SYMMETRIC_KERNELS if k.collective == collective]
    if not kernels or ranks < 2:
        return None
    if not multicast or ranks <= 2:  # hasLsaMultimem: NVLS and more than two ranks
        kernels = [k for k in kernels if not k.multicast]
    per_rank = size_bytes if collective == "all_reduce" else size_bytes // ranks
    bus = size_bytes if collective == "all_reduce" else ranks * per_rank
    if bus >= SYMK_MAX_BUS_BYTES:
        return None
    if bus >= SYMK_LL_MAX_BUS_BYTES:
        kernels = [k for k in kernels if not k.ll]
    nbytes = max(1, math.ceil(per_rank / cell_bytes)) * cell_bytes
    best: SymmetricKernelChoice | None = None
    for kernel in kernels:
        blocks, time = _blocks_and_time(kernel, nbytes, ranks, gpu_class)
        if best is None or time * (1 + SYMK_BLOCK_PENALTY * blocks) < best.time_us * (
            1 + SYMK_BLOCK_PENALTY * best.blocks
        ):
            best = SymmetricKernelChoice(kernel, blocks, time, nbytes, ranks)
    return best


def release_has_symmetric_kernels(release: tuple[int, int, int]) -> bool:
    """Whether an NCCL release (``(major, minor, patch)``) has symmetric kernels.

    >>> release_has_symmetric_kernels((2, 26, 6)), release_has_symmetric_kernels((2, 27, 0))
    (False, True)
    """
    return release >= SYMMETRIC_KERNELS_FIRST_RELEASE


def release_cell_bytes(release: tuple[int, int, int]) -> int:
    """The rounding of a rank's bytes NCCL's model applies in this release.

    >>> release_cell_bytes((2, 27, 7)), release_cell_bytes((2, 30, 7))
    (1, 1024)
    """
    return 1 if release < (2, 28, 0) else SYMK_CELL_BYTES_FROM_2_28
