"""One training step of a transformer: compute, the communication of each parallel dimension on
NVLink or on the fabric, how much of it hides behind compute, and the GPU-hours it costs.

Compute (PaLM's model-FLOPs accounting, Chowdhery et al. 2022, appendix B):
``flops/token = 6 * N_active + 12 * layers * hidden * sequence``; the step's compute time is
``flops / (GPUs * peak * MFU)``, where MFU is the share of peak the compute phase reaches
(kernels and pipeline bubbles; communication is added on top, not folded in).

Communication, ranks laid out as Megatron-LM does (tensor fastest, then data, pipeline outermost),
each collective timed by :mod:`.collective`:

- TP: 4 all-reduces of one micro-batch's activations per layer (2 forward, 2 backward; Shoeybi et
  al. 2019; sequence parallelism turns them into all-gather + reduce-scatter of the same volume,
  Korthikanti et al. 2022), on NVLink while ``tp`` fits the NVLink domain.
- PP: activations (and their gradients) of one micro-batch, split over the TP ranks, sent between
  neighbouring stages; ``2 (m + pp - 1)`` sends lie on the 1F1B critical path (Narayanan et al.,
  SC'21, section 2.2).
- DP: the gradient all-reduce of the dense parameters one rank holds over its data-parallel peers
  (one rank per node and rail when ``tp`` fills a node), in Megatron-LM's buckets of
  ``max(40M, 1M x dp)`` parameters; FSDP/ZeRO-3 instead reduce-scatters the gradients and
  all-gathers the parameters twice (forward and backward, Rajbhandari et al. 2020). Expert
  gradients are reduced over the ``dp / ep`` expert-data-parallel peers.
- EP: 4 all-to-alls per MoE layer and micro-batch (dispatch and combine, forward and backward,
  Lepikhin et al. 2021) of the micro-batch's tokens x top-k x hidden, split over the TP ranks.

Link errors (``fabric.frame_error_ratio``): each collective that leaves the NVLink domain pays
the expected delay of its corrupted frames (:func:`.link_error.collective_link_error_us`: link
replays with LLR, end-to-end recovery without), as the nccl-tests rows do; so does each
pipeline send between stages in different NVLink domains, over its own frames and path
(:func:`.link_error.send_link_error_us`).

Overlap: only DP communication hides, behind the backward pass (2/3 of the compute, as backward
costs twice the forward), up to ``workload.overlap`` of it; TP, PP and EP are exposed.
``step = compute + exposed`` and the GPU-hours a year lost to the network are
``exposed / step * GPUs * 8760``.
"""

from __future__ import annotations

import math

from fabricplan.analytic.collective import (
    NCCL_PATH_IN_NET_STEP_US,
    collective_point,
)
from fabricplan.analytic.link_error import collective_link_error_us, send_link_error_us
from fabricplan.analytic.profile import FabricProfile, path_latency_ns
from fabricplan.analytic.traffic import (
    CommGroup,
    pair_pattern,
    pattern_throughput,
    span_switch_hops,
)
from fabricplan.analytic.workload import Workload, sequences_per_replica
from fabricplan.errors import ModelError
from fabricplan.model.results import CollectiveName, StepTimeResult
from fabricplan.units import (
    HOURS_PER_YEAR,
    GBps_to_bytes_per_s,
    ns_to_us,
    s_to_ns,
    tflops_to_flops_per_s,
    us_to_s,
)

FP8_TENSOR_SPEEDUP = 2.0
"""Dense FP8 over dense BF16 tensor throughput on Hopper and Blackwell (H100 SXM datasheet: 3,958
vs 1,979 TFLOPS with sparsity; B200: 4.5 vs 2.25 PFLOPS dense per GPU)."""

ATTENTION_FLOPS_PER_TOKEN_LAYER = 12
"""Model FLOPs per token, layer, hidden unit and context position for attention (PaLM, App. B)."""
PARAM_FLOPS_PER_TOKEN = 6
"""Model FLOPs per token and parameter: 2 forward + 4 backward (Kaplan et al. 2020)."""
BACKWARD_SHARE_OF_COMPUTE = 2.0 / 3.0
"""Backward pass share of a step's FLOPs (4 of the 6 per parameter): the window DP hides in."""

ACTIVATION_BYTES = 2
"""Bytes per activation element exchanged by TP, PP and EP (BF16; FP8 recipes such as Transformer
Engine's keep BF16 communication by default)."""
GRADIENT_BYTES = 2
"""Bytes per gradient element in the DP reduction (Megatron-LM ``grad_reduce_in_fp32`` defaults
to off: gradients are reduced in the parameter dtype, BF16)."""
PARAMETER_BYTES = 2
"""Bytes per parameter all-gathered by FSDP/ZeRO-3 (BF16 weights)."""

DP_BUCKET_MIN_PARAMS = 40_000_000
DP_BUCKET_PARAMS_PER_RANK = 1_000_000
"""Megatron-LM DistributedDataParallel: gradient buckets of ``max(40M, 1M x dp size)``
parameters when ``bucket_size`` is not set (megatron/core/distributed)."""

MICRO_BATCH_SEQUENCES = 1
"""Sequences per micro-batch (Megatron-LM's default ``--micro-batch-size 1``)."""
TP_ALL_REDUCES_PER_LAYER = 4
EP_ALL_TO_ALLS_PER_LAYER = 4
PP_SENDS_PER_SLOT = 2


def _local_ranks(group_ranks: int, per_domain: int) -> int:
    """Ranks of a group inside one NVLink domain (they must split evenly)."""
    return math.gcd(group_ranks, max(1, per_domain))


def _collective_s(
    profile: FabricProfile, group: CommGroup, op: CollectiveName, size_bytes: float
) -> float:
    if group.ranks < 2 or size_bytes <= 0:
        return 0.0
    point = collective_point(profile, group, op, max(1, round(size_bytes)))
    errors_us = collective_link_error_us(profile, point, group.ranks) if group.domains > 1 else 0.0
    return us_to_s(point.time_us + errors_us)


def _pipeline_send_s(profile: FabricProfile, job: Workload, size_bytes: float) -> float:
    """One activation send between neighbouring stages (each TP rank sends its share at once);
    across the fabric it pays its corrupted frames' expected delay as a collective does."""
    stage_gpus = job.tp * job.dp
    distance_nodes = stage_gpus / profile.gpus_per_node
    software = profile.step_software_us
    if stage_gpus < profile.nvlink_domain_gpus:  # the next stage shares the NVLink domain
        step = profile.nccl.nvlink_step_us["Ring"]["Simple"] if software is None else software
        latency_us = profile.nccl.base_latency_us["Ring"]["Simple"] + step
        return us_to_s(latency_us) + size_bytes / GBps_to_bytes_per_s(
            profile.nvlink_GBps * profile.collective_efficiency
        )
    pattern = pair_pattern(distance_nodes, profile.nodes_per_leaf, profile.nodes_per_pod)
    rate = profile.nic_goodput_GBps * pattern_throughput(profile, pattern, 2 * distance_nodes)
    hops = span_switch_hops(profile, distance_nodes + 1)
    net_step = profile.nccl.net_step_us["Ring"]["Simple"]
    step = net_step - NCCL_PATH_IN_NET_STEP_US if software is None else software
    latency_us = (
        profile.nccl.base_latency_us["Ring"]["Simple"]
        + step
        + ns_to_us(path_latency_ns(profile, hops, profile.mtu_bytes))
    )
    clean_s = us_to_s(latency_us) + size_bytes / GBps_to_bytes_per_s(
        rate * profile.collective_efficiency
    )
    errors_us = send_link_error_us(profile, size_bytes, job.tp, hops, ns_to_us(s_to_ns(clean_s)))
    return clean_s + us_to_s(errors_us)


def _gradient_sync_s(profile: FabricProfile, group: CommGroup, params: float, fsdp: bool) -> float:
    """Gradient reduction (and FSDP's parameter gathers) of ``params`` per rank, in buckets."""
    if group.ranks < 2 or params <= 0:
        return 0.0
    bucket_params = max(DP_BUCKET_MIN_PARAMS, DP_BUCKET_PARAMS_PER_RANK * group.ranks)
    buckets = max(1, math.ceil(params / bucket_params))
    per_bucket = params / buckets
    if fsdp:
        one = _collective_s(
            profile, group, "reduce_scatter", per_bucket * GRADIENT_BYTES
        ) + 2 * _collective_s(profile, group, "all_gather", per_bucket * PARAMETER_BYTES)
    else:
        one = _collective_s(profile, group, "all_reduce", per_bucket * GRADIENT_BYTES)
    return buckets * one


def training_step(profile: FabricProfile, job: Workload) -> StepTimeResult:
    """Step time of ``job`` on the whole cluster of ``profile``.

    Parameters
    ----------
    profile
        The fabric (and the cluster's GPUs and NVLink).
    job
        The resolved training job (:func:`.workload.resolve_workload`).

    Returns
    -------
    StepTimeResult
        ``step_s = compute_s + comm_exposed_s``, communication per dimension before overlap.

    Examples
    --------
    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.workload import resolve_workload
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> step = training_step(profile, resolve_workload(valid.spec.workload, 1024))
    >>> step.step_s == step.compute_s + step.comm_exposed_s
    True
    """
    gpus = profile.gpus
    if job.tp * job.pp * job.dp != gpus:
        raise ModelError(
            "FP502",
            "workload",
            "tp x pp x dp does not equal the cluster's GPUs",
            job.tp * job.pp * job.dp,
            f"use dp: auto ({gpus // (job.tp * job.pp)})",
        )
    domain = profile.nvlink_domain_gpus
    per_replica, grown = sequences_per_replica(job)
    micro_batches = max(1, per_replica // MICRO_BATCH_SEQUENCES)
    sequences = per_replica * job.dp
    tokens = sequences * job.sequence_length
    layers_per_stage = math.ceil(job.layers / job.pp)

    flops_per_token = (
        PARAM_FLOPS_PER_TOKEN * job.active_params
        + ATTENTION_FLOPS_PER_TOKEN_LAYER * job.layers * job.hidden * job.sequence_length
    )
    peak = tflops_to_flops_per_s(profile.dense_tflops) * (
        FP8_TENSOR_SPEEDUP if job.precision == "fp8" else 1.0
    )
    compute = flops_per_token * tokens / (gpus * peak * job.mfu)

    micro_tokens = MICRO_BATCH_SEQUENCES * job.sequence_length
    activation = micro_tokens * job.hidden * ACTIVATION_BYTES
    gpn = profile.gpus_per_node
    tp_s = pp_s = ep_s = 0.0
    if job.tp > 1:
        tp_group = CommGroup(job.tp, _local_ranks(job.tp, domain), gpn)
        tp_s = (
            TP_ALL_REDUCES_PER_LAYER
            * layers_per_stage
            * micro_batches
            * _collective_s(profile, tp_group, "all_reduce", activation)
        )
    if job.pp > 1:
        send = _pipeline_send_s(profile, job, activation / job.tp)
        pp_s = PP_SENDS_PER_SLOT * (micro_batches + job.pp - 1) * send

    dp_local = _local_ranks(job.dp, domain // job.tp if job.tp <= domain else 1)
    dp_group = CommGroup(job.dp, dp_local, gpn)
    shard = job.tp * job.pp
    dp_s = _gradient_sync_s(profile, dp_group, job.dense_params / shard, job.fsdp)
    if job.expert_params > 0:
        expert_dp = job.dp // job.ep
        expert_group = CommGroup(
            expert_dp, _local_ranks(expert_dp, max(1, dp_local // job.ep)), gpn
        )
        dp_s += _gradient_sync_s(
            profile, expert_group, job.expert_params / (shard * job.ep), job.fsdp
        )
    if job.is_moe and job.ep > 1:
        ep_group = CommGroup(job.ep, _local_ranks(job.ep, dp_local), gpn)
        tokens_bytes = activation * job.active_experts / job.tp
        ep_s = (
            EP_ALL_TO_ALLS_PER_LAYER
            * layers_per_stage
            * micro_batches
            * _collective_s(profile, ep_group, "all_to_all", tokens_bytes)
        )

    hidden_dp = min(job.overlap * dp_s, BACKWARD_SHARE_OF_COMPUTE * compute)
    exposed = tp_s + pp_s + ep_s + (dp_s - hidden_dp)
    # Groups that never leave one NVLink domain take the same time on every fabric.
    in_domain = (
        (tp_s if job.tp <= domain else 0.0)
        + (pp_s if job.tp * job.dp < domain else 0.0)
        + (ep_s if math.gcd(job.ep, dp_local) == job.ep else 0.0)
        + ((dp_s - hidden_dp) if dp_local == job.dp else 0.0)
    )
    step = compute + exposed
    assumptions = [
        f"{job.name}: {job.params / 1e9:g}B parameters ({job.active_params / 1e9:g}B active),"
        f" tp={job.tp} pp={job.pp} dp={job.dp} ep={job.ep}, {job.precision}, MFU {job.mfu:g}",
        f"{sequences} sequences of {job.sequence_length} tokens per step, micro-batch"
        f" {MICRO_BATCH_SEQUENCES}, {micro_batches} micro-batches per replica",
        "TP on NVLink" if job.tp <= domain else f"TP spans NVLink domains of {domain} GPUs",
        f"DP group: {job.dp} ranks, {dp_local} per NVLink domain"
        + (" (FSDP: reduce-scatter + 2 all-gathers)" if job.fsdp else " (all-reduce)"),
        f"overlap: DP hides up to {job.overlap:g} of its time behind the backward pass;"
        " TP, PP and EP are exposed; MFU covers kernels and pipeline bubbles",
    ]
    if grown:
        assumptions.append(
            f"global batch rounded up to {sequences} sequences: a whole number"
            " per data-parallel replica"
        )
    return StepTimeResult(
        compute_s=compute,
        comm_total_s=tp_s + pp_s + dp_s + ep_s,
        comm_exposed_s=exposed,
        step_s=step,
        comm_by_dimension_s={"tp": tp_s, "pp": pp_s, "dp": dp_s, "ep": ep_s},
        exposed_fraction=exposed / step,
        gpu_hours_lost_per_year=exposed / step * gpus * HOURS_PER_YEAR,
        comm_exposed_in_domain_s=min(exposed, in_domain),
        assumptions=tuple(assumptions),
    )
