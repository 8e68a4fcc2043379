"""Named traffic patterns (what ``fabricplan simulate --pattern`` and the flow backend run).

>>> layout = GpuLayout(gpus=64, gpus_per_node=8, nics_per_node=8)
>>> pattern_traffic("ring_all_reduce", layout, 2**20, seed=0).flows
64
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from fabricplan.analytic.traffic import NCCL_CHANNELS_PER_NIC
from fabricplan.analytic.workload import resolve_workload
from fabricplan.errors import ModelError
from fabricplan.model.results import CollectiveName
from fabricplan.model.scenario import WorkloadSpec
from fabricplan.sim.run_options import PATTERNS, PatternName
from fabricplan.sim.seed import spawn_seeds
from fabricplan.sim.traffic import (
    GpuLayout,
    IntArray,
    Placement,
    StepSpec,
    Traffic,
    all_to_all,
    background,
    combine,
    for_job,
    gpu_flows,
    incast,
    permutation,
    place_jobs,
    random_pairs,
    ring,
    training_step,
    tree_all_reduce,
)

DEFAULT_INCAST_SENDERS = 32
"""Senders of ``--pattern incast`` when not given (fewer when the cluster has fewer nodes)."""

BYTES_PER_VALUE = {"bf16": 2, "fp8": 1}
"""Bytes of one activation value at each training precision."""


@dataclass(frozen=True)
class FabricShape:
    """Which of NCCL's algorithms a collective's fabric flows follow (what the analytic model's
    chosen pair runs over the fabric): its rings, or its double binary tree over the NVLink
    domains (NCCL's Tree, and NVLSTree's tree between domains)."""

    algorithm: Literal["ring", "tree"] = "ring"
    heads: int = 0
    """Tree only: ranks per NVLink domain whose NICs carry the tree (NVLSTree's NVLS heads);
    0: every rank (NCCL's Tree)."""

    @property
    def label(self) -> str:
        """``ring``, ``tree``, or ``nvlstree`` (a tree over the NVLS heads).

        >>> FabricShape().label, FabricShape("tree").label, FabricShape("tree", 8).label
        ('ring', 'tree', 'nvlstree')
        """
        if self.algorithm == "tree":
            return "nvlstree" if self.heads else "tree"
        return "ring"


RING = FabricShape()
"""NCCL's rings (every ring collective, and all_reduce where NCCL runs Ring)."""


def collective_traffic(
    collective: CollectiveName,
    layout: GpuLayout,
    size_bytes: float,
    ranks: IntArray | None = None,
    qps: int = 1,
    shape: FabricShape = RING,
) -> Traffic:
    """The fabric flows of one nccl-tests collective of ``size_bytes`` over ``ranks``.

    all_reduce, all_gather, reduce_scatter and broadcast run as rings, an all_reduce of
    ``shape`` tree as NCCL's double binary tree (:func:`~.traffic.tree_all_reduce`), every ring
    or tree edge split over :data:`~fabricplan.analytic.traffic.NCCL_CHANNELS_PER_NIC` flows per
    NIC (NCCL's channels, each its own queue pair and UDP source port, as the analytic
    collision model counts them for both); all_to_all posts every send at once; sendrecv sends
    from each rank to the next. A tree ``shape`` for another collective runs its ring (NCCL
    runs them only as rings).

    >>> layout = GpuLayout(gpus=16, gpus_per_node=8, nics_per_node=8)
    >>> collective_traffic("sendrecv", layout, 1e6).flows   # ranks 7 -> 8 and 15 -> 0
    2
    """
    if collective == "all_to_all":
        return all_to_all(layout, size_bytes, ranks, qps=qps)
    if collective == "sendrecv":
        r = np.arange(layout.gpus, dtype=np.int64) if ranks is None else np.asarray(ranks)
        return gpu_flows(
            layout, r, np.roll(r, -1), size_bytes, StepSpec("sendrecv", "sendrecv"), qps
        )
    # NCCL's channels per NIC are flows of their own, and each splits over ``qps`` queue pairs.
    if shape.algorithm == "tree" and collective == "all_reduce":
        return tree_all_reduce(
            layout, size_bytes, ranks, NCCL_CHANNELS_PER_NIC * qps, heads=shape.heads
        )
    return ring(layout, collective, size_bytes, ranks, qps=NCCL_CHANNELS_PER_NIC * qps)


def workload_traffic(
    workload: WorkloadSpec,
    layout: GpuLayout,
    grad_bytes: float | None,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """A training step of the spec's workload (see :func:`.traffic.training_step`).

    Gradients per rank: ``grad_bytes`` if given, else the job's parameters over ``tp x pp``
    at two bytes each. Activations sent between stages: one sequence x hidden values split over
    the tensor-parallel ranks; expert traffic: that times the top-k experts.
    """
    count = layout.gpus if ranks is None else len(ranks)
    job = resolve_workload(workload, count)
    per_value = BYTES_PER_VALUE[job.precision]
    grads = grad_bytes if grad_bytes is not None else job.params * 2 / (job.tp * job.pp)
    activation = job.sequence_length * job.hidden * per_value / job.tp
    expert = activation * job.active_experts if job.is_moe else 0.0
    return training_step(
        layout,
        tp=job.tp,
        pp=job.pp,
        ep=job.ep,
        grad_bytes=grads,
        activation_bytes=activation,
        expert_bytes=expert,
        ranks=ranks,
        qps=qps,
    )


def pattern_traffic(
    pattern: PatternName,
    layout: GpuLayout,
    size_bytes: float | None,
    seed: int,
    senders: int | None = None,
    workload: WorkloadSpec | None = None,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """Traffic of a named pattern over ``ranks`` (default: every GPU).

    ``size_bytes`` is per rank as nccl-tests counts it for the collectives, per flow for
    permutation, incast and random, and the gradient bytes per rank for ``training_step``
    (``None``: the workload's own). ``qps`` splits every connection over that many queue pairs
    (each its own flow and UDP source port).

    Raises
    ------
    ModelError
        FP533 for an unknown pattern or parameters that do not fit the cluster.
    """
    if pattern == "training_step":
        return workload_traffic(workload or WorkloadSpec(), layout, size_bytes, ranks, qps)
    if pattern not in PATTERNS:
        raise ModelError(
            "FP533", "--pattern", "unknown pattern", pattern, f"use one of {', '.join(PATTERNS)}"
        )
    if size_bytes is None or size_bytes <= 0:
        raise ModelError(
            "FP533",
            "--size",
            f"pattern {pattern} needs a positive size",
            size_bytes,
            "give --size, e.g. 64M",
        )
    if pattern == "all_to_all":
        return all_to_all(layout, size_bytes, ranks, qps=qps)
    if pattern == "permutation":
        return permutation(layout, size_bytes, seed, ranks, qps)
    if pattern == "incast":
        nodes = layout.nodes if ranks is None else len(np.unique(ranks // layout.gpus_per_node))
        count = senders or min(DEFAULT_INCAST_SENDERS, max(nodes - 1, 1))
        return incast(layout, count, size_bytes, ranks=ranks, qps=qps)
    if pattern == "ring_all_reduce":
        return ring(layout, "all_reduce", size_bytes, ranks, qps)
    if pattern == "tree_all_reduce":
        return tree_all_reduce(layout, size_bytes, ranks, qps)
    if pattern in ("all_gather", "reduce_scatter"):
        return ring(layout, pattern, size_bytes, ranks, qps)
    return random_pairs(
        layout, layout.gpus if ranks is None else len(ranks), size_bytes, seed, ranks, qps
    )


def scenario_traffic(
    pattern: PatternName,
    layout: GpuLayout,
    size_bytes: float | None,
    seed: int,
    *,
    jobs: int = 1,
    placement: Placement = "packed",
    senders: int | None = None,
    workload: WorkloadSpec | None = None,
    qps: int = 1,
    background_load: float = 0.0,
    background_us: float = 0.0,
    nic_bytes_per_us: float = 0.0,
) -> Traffic:
    """The pattern run by ``jobs`` equal jobs placed on the cluster, plus background traffic.

    Every job gets ``gpus / jobs`` GPUs (whole nodes), ``packed`` or ``fragmented`` (see
    :func:`.traffic.place_jobs`), and runs the pattern on them as job ``i`` with the ``i``-th
    child of ``seed`` (:func:`~fabricplan.sim.seed.spawn_seeds`); with
    ``background_load`` > 0, Poisson arrivals at that share of every NIC's rate during the first
    ``background_us`` microseconds are added as a job of their own.

    >>> layout = GpuLayout(gpus=64, gpus_per_node=8, nics_per_node=8)
    >>> t = scenario_traffic("ring_all_reduce", layout, 2**20, 0, jobs=2)
    >>> sorted({s.job for s in t.steps}), t.flows
    ([0, 1], 64)
    """
    if jobs < 1 or layout.nodes < jobs:
        raise ModelError(
            "FP533", "--jobs", "must be between 1 and the nodes", jobs, f"use 1..{layout.nodes}"
        )
    per_job = layout.nodes // jobs * layout.gpus_per_node
    parts: list[Traffic] = []
    if jobs == 1:
        parts.append(
            pattern_traffic(pattern, layout, size_bytes, seed, senders, workload, None, qps)
        )
    else:
        placed = place_jobs(layout, [per_job] * jobs, placement, seed)
        for job, (ranks, job_seed) in enumerate(zip(placed, spawn_seeds(seed, jobs), strict=True)):
            part = pattern_traffic(
                pattern, layout, size_bytes, job_seed, senders, workload, ranks, qps
            )
            parts.append(for_job(part, job, f"job{job} "))
    if background_load > 0:
        noise = background(layout, background_load, background_us, nic_bytes_per_us, seed)
        parts.append(for_job(noise, jobs, ""))
    return combine(parts)
