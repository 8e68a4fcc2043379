"""The memory a flow or packet run will take, estimated from the scenario before anything is
allocated, and the refusal of a run that would not fit.

A run's memory grows with the GPU pairs its pattern builds: every rank pair of an all_to_all
(``gpus²``, the arrays of :func:`fabricplan.sim.traffic.all_to_all` are built whole), about
``ep`` pairs per rank for the expert all_to_all of a training step, a few per rank for the
other patterns. Each pair costs the bytes measured per pair at each level
(:data:`FLOW_BYTES_PER_PAIR`, :data:`PACKET_BYTES_PER_PAIR`: the traffic, routes, the
solver's or the kernel's tables). The estimate is an estimate: it is meant to refuse a run
that is far too large in one line, before it starts, not to size a machine.

>>> estimated_run_bytes("flow", "all_to_all", gpus=100_000, qps=1, ep=1) / 2**30
2384.185791015625
>>> try:
...     check_run_memory("flow", "all_to_all", gpus=100_000, qps=1, ep=1,
...         limit_bytes=8 * 2**30, limit_source="--max-memory")
... except ModelError as exc:
...     print(exc.code)
FP1403
"""

from __future__ import annotations

import os

from fabricplan.errors import ModelError

FLOW_BYTES_PER_PAIR = 256
"""Memory of the flow level per GPU pair its pattern builds (bytes, an estimate): 236 B per
pair measured as peak RSS over the start (all_to_all at 2,048 GPUs, 4.2 M pairs; 286 B at 1,024
and 471 B at 512, where fixed costs weigh more), rounded up. Basis: ``benchmarks/
run_memory.py``."""
PACKET_BYTES_PER_PAIR = 2048
"""Memory of the packet level per GPU pair (bytes, an estimate): 1,956 B per pair measured as
peak RSS over the start (all_to_all at 512 GPUs, 16 MiB per rank; 2,836 B at 256), rounded.
Basis: ``benchmarks/run_memory.py``."""
PAIRS_PER_RANK_OTHER = 4
"""GPU pairs per rank and queue pair of the patterns other than all_to_all (ring, tree,
permutation, incast, random: at most a few sends per rank)."""
GRAPH_BYTES_PER_GPU = 2048
"""Memory of the fabric graph and the routes a simulated backend builds per GPU (bytes, an
estimate): ``perf --backend flow -c all_reduce`` on a RoCE fat tree of 65,536 GPUs peaked at
258 MiB RSS, 120 MiB of it the interpreter and libraries and 33 MiB the ring's flows at
:data:`FLOW_BYTES_PER_PAIR`, leaving about 1.6 KiB a GPU; rounded up."""


def _pairs(pattern: str, gpus: int, qps: int, ep: int, jobs: int = 1) -> int:
    if pattern == "all_to_all":
        return gpus * gpus * qps // max(jobs, 1)  # each job's ranks among themselves
    if pattern == "training_step":
        return gpus * (max(ep, 1) + PAIRS_PER_RANK_OTHER) * qps
    return gpus * PAIRS_PER_RANK_OTHER * qps


def estimated_run_bytes(
    level: str, pattern: str, gpus: int, qps: int, ep: int, jobs: int = 1
) -> int:
    """Bytes a run of ``pattern`` over ``gpus`` GPUs (in ``jobs`` equal jobs) takes at
    ``level`` (an estimate)."""
    per_pair = PACKET_BYTES_PER_PAIR if level == "packet" else FLOW_BYTES_PER_PAIR
    return _pairs(pattern, gpus, qps, ep, jobs) * per_pair


def available_memory_bytes() -> int | None:
    """Memory this machine can give a new allocation now (``MemAvailable`` of
    ``/proc/meminfo`` on Linux, free pages elsewhere); ``None`` when it cannot be told."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n: float) -> str:
    if n < 2**30:
        return f"{n / 2**20:,.1f} MiB"
    return f"{n / 2**30:,.1f} GiB"


def check_run_memory(
    level: str,
    pattern: str,
    gpus: int,
    qps: int,
    ep: int,
    limit_bytes: int | None,
    limit_source: str,
    jobs: int = 1,
) -> int:
    """The run's estimated bytes; FP1403 when they exceed ``limit_bytes`` (no check when the
    limit is ``None``: the machine could not tell its memory and none was given)."""
    need = estimated_run_bytes(level, pattern, gpus, qps, ep, jobs)
    if limit_bytes is not None and need > limit_bytes:
        grows = "GPUs²" if pattern == "all_to_all" else "GPUs"
        raise ModelError(
            "FP1403",
            f"--pattern {pattern}",
            f"the {level} run needs about {_gib(need)} (an estimate: {gpus:,} GPUs, it grows with"
            f" {grows}), more than {_gib(limit_bytes)} ({limit_source})",
            None,
            "use fewer GPUs or --jobs of fewer GPUs, --backend analytic"
            + (" or flow" if level == "packet" else "")
            + ", or raise --max-memory",
        )
    return need


def estimated_performance_bytes(
    level: str, gpus: int, collectives: tuple[str, ...], qps: int, max_all_to_all_flows: int
) -> int:
    """Bytes a simulated backend's performance run takes (an estimate): the graph, and the
    largest collective's flows (collectives run one after another). An all_to_all is cut to
    the level's flow budget (``max_all_to_all_flows``), a ring has one flow per GPU, NCCL
    channel and queue pair.

    >>> estimated_performance_bytes("flow", 8192, ("all_reduce", "all_to_all"), 1, 2**21) / 2**20
    528.0
    """
    per_pair = PACKET_BYTES_PER_PAIR if level == "packet" else FLOW_BYTES_PER_PAIR
    flows = 0
    for op in collectives:
        if op == "all_to_all":
            flows = max(flows, min(gpus * gpus, max_all_to_all_flows) * qps)
        else:
            flows = max(flows, gpus * RING_FLOWS_PER_GPU * qps)
    return flows * per_pair + gpus * GRAPH_BYTES_PER_GPU


RING_FLOWS_PER_GPU = 2
"""Flows of a ring collective per GPU and queue pair: NCCL's two channels per NIC and peer
(``analytic.traffic.NCCL_CHANNELS_PER_NIC``, 16 channels over 8 NICs on a DGX H100)."""


def check_performance_memory(
    level: str,
    gpus: int,
    collectives: tuple[str, ...],
    qps: int,
    max_all_to_all_flows: int,
    limit_bytes: int | None,
) -> int:
    """The performance run's estimated bytes; FP1411 when above ``limit_bytes`` (the memory
    the machine has available; no check when it cannot be told). Called by the backend seam
    before the graph is built, so ``compare``, ``perf``, ``sweep`` and the web API's jobs with
    ``--backend flow|packet`` are refused in one line instead of running out of memory."""
    need = estimated_performance_bytes(level, gpus, collectives, qps, max_all_to_all_flows)
    if limit_bytes is not None and need > limit_bytes:
        raise ModelError(
            "FP1411",
            f"--backend {level}",
            f"the {level} backend needs about {_gib(need)} (an estimate: {gpus:,} GPUs,"
            f" {', '.join(collectives)}), more than {_gib(limit_bytes)} (the memory this"
            " machine has available)",
            None,
            "use --backend analytic, fewer GPUs (--gpus), or a machine with more memory",
        )
    return need


__all__ = [
    "FLOW_BYTES_PER_PAIR",
    "GRAPH_BYTES_PER_GPU",
    "PACKET_BYTES_PER_PAIR",
    "PAIRS_PER_RANK_OTHER",
    "RING_FLOWS_PER_GPU",
    "available_memory_bytes",
    "check_performance_memory",
    "check_run_memory",
    "estimated_performance_bytes",
    "estimated_run_bytes",
]
