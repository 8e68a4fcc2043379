"""Training step: FLOPs, each parallel dimension's communication, overlap, and presets."""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.analytic.profile import FabricProfile, fabric_profile
from fabricplan.analytic.step import training_step
from fabricplan.analytic.workload import Workload, resolve_workload, workload_presets
from fabricplan.errors import ModelError
from fabricplan.model.results import PerfRequest, StepTimeResult
from fabricplan.model.scenario import TechnologyName, WorkloadSpec
from fabrics import cluster_scenario, designed_leaf_spine


def run(
    gpus: int = 1024,
    tech: TechnologyName = "infiniband",
    calibration: dict[str, float] | None = None,
    gpu: str = "h100",
    nccl: str | None = None,
    **workload: Any,
) -> tuple[StepTimeResult, Workload, FabricProfile]:
    sections: dict[str, Any] = {"cluster": {"gpus": gpus, "gpu": gpu}, "workload": workload}
    if nccl is not None:
        sections["nccl"] = {"version": nccl}
    valid = cluster_scenario(gpus, **sections)
    prof = fabric_profile(
        valid, designed_leaf_spine(valid, tech), PerfRequest(calibration=calibration)
    )
    job = resolve_workload(valid.spec.workload, gpus)
    return training_step(prof, job), job, prof


def test_step_is_compute_plus_exposed_communication() -> None:
    step, _, _ = run()
    assert step.step_s == pytest.approx(step.compute_s + step.comm_exposed_s)
    assert step.comm_exposed_s <= step.comm_total_s + 1e-12
    assert step.comm_total_s == pytest.approx(sum(step.comm_by_dimension_s.values()))
    assert set(step.comm_by_dimension_s) == {"tp", "pp", "dp", "ep"}


def test_compute_time_is_model_flops_over_delivered_flops() -> None:
    step, job, prof = run(model="llama3-8b", tp=1, global_batch_tokens=1024 * 8192)
    tokens = 1024 * 8192
    flops = (6 * 8e9 + 12 * 32 * 4096 * 8192) * tokens  # 6N + 12 L H S per token (PaLM)
    assert job.active_params == 8e9
    assert step.compute_s == pytest.approx(flops / (1024 * prof.dense_tflops * 1e12 * 0.40))


def test_fp8_doubles_the_tensor_rate() -> None:
    bf16, _, _ = run(precision="bf16")
    fp8, _, _ = run(precision="fp8")
    assert fp8.compute_s == pytest.approx(bf16.compute_s / 2)


def test_gpu_hours_lost_are_exposed_share_of_the_year() -> None:
    step, _, _ = run()
    assert step.exposed_fraction == pytest.approx(step.comm_exposed_s / step.step_s)
    assert step.gpu_hours_lost_per_year == pytest.approx(step.exposed_fraction * 1024 * 8760)


def test_overlap_hides_data_parallel_communication_only() -> None:
    none, _, _ = run(overlap=0.0)
    full, _, _ = run(overlap=1.0)
    dims = none.comm_by_dimension_s
    assert none.comm_exposed_s == pytest.approx(none.comm_total_s)
    # Everything but DP stays exposed; DP hides entirely while backward (2/3 compute) lasts.
    assert dims["dp"] < 2 / 3 * none.compute_s
    assert full.comm_exposed_s == pytest.approx(none.comm_total_s - dims["dp"])


def test_overlap_cannot_hide_more_than_the_backward_pass() -> None:
    # A tiny model on many GPUs: DP time exceeds the backward pass.
    step, _, _ = run(
        model="custom",
        params_b=20.0,
        layers=2,
        hidden=1024,
        tp=1,
        global_batch_tokens=1024 * 128,
        sequence_length=128,
        overlap=1.0,
    )
    dp = step.comm_by_dimension_s["dp"]
    assert dp > 2 / 3 * step.compute_s
    assert step.comm_exposed_s == pytest.approx(dp - 2 / 3 * step.compute_s)


def test_tensor_parallelism_stays_on_nvlink() -> None:
    ib, _, _ = run(tech="infiniband")
    roce, _, _ = run(tech="roce_v2")
    assert ib.comm_by_dimension_s["tp"] > 0
    assert ib.comm_by_dimension_s["tp"] == pytest.approx(roce.comm_by_dimension_s["tp"])


def test_each_dimension_appears_only_when_used() -> None:
    dense, _, _ = run(tp=8, pp=1)
    assert dense.comm_by_dimension_s["pp"] == 0 and dense.comm_by_dimension_s["ep"] == 0
    piped, _, _ = run(tp=8, pp=4)
    assert piped.comm_by_dimension_s["pp"] > 0
    moe, _, _ = run(model="mixtral-8x7b", ep=8)
    assert moe.comm_by_dimension_s["ep"] > 0
    no_tp, _, _ = run(tp=1)
    assert no_tp.comm_by_dimension_s["tp"] == 0


def test_mixture_of_experts_parameter_split() -> None:
    job = resolve_workload(WorkloadSpec(model="mixtral-8x7b"), 1024)
    per_expert = job.expert_params / job.experts
    assert job.dense_params + job.experts * per_expert == pytest.approx(job.params)
    assert job.dense_params + job.active_experts * per_expert == pytest.approx(job.active_params)


def test_fsdp_moves_one_and_a_half_all_reduces() -> None:
    # Reduce-scatter + 2 all-gathers of the same bytes = 1.5x an all-reduce's traffic (ZeRO-3),
    # when all of them run as rings (no NVLink SHARP on A100, no SHARP on RoCE). NCCL 2.24: from
    # 2.25 the ring's LL128 per-channel cap (perChMaxRingLL128Bws, 20 GB/s on Ampere) makes the
    # tuner run 2 GiB all-reduce buckets on 128 A100 nodes as Tree/LL128 instead.
    job = {"model": "llama3-8b", "tp": 1, "overlap": 0.0}
    ddp, _, _ = run(tech="roce_v2", gpu="a100", nccl="2.24", **job)
    fsdp, _, _ = run(tech="roce_v2", gpu="a100", nccl="2.24", fsdp=True, **job)
    ratio = fsdp.comm_by_dimension_s["dp"] / ddp.comm_by_dimension_s["dp"]
    # Bandwidth terms are exactly 1.5x; three collectives instead of one add latency on top.
    assert 1.5 * 0.99 < ratio < 1.75


def test_a_slower_fabric_lengthens_the_step() -> None:
    base, _, _ = run()
    slow, _, _ = run(calibration={"collective_efficiency": 0.5, "nic_bw_efficiency": 0.5})
    assert slow.step_s > base.step_s
    assert slow.compute_s == pytest.approx(base.compute_s)


# --- presets and checks ------------------------------------------------------------------------


def test_every_preset_names_its_source() -> None:
    presets = workload_presets()
    assert {"llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b", "mixtral-8x7b"} <= set(presets)
    for preset in presets.values():
        assert "arXiv" in preset.source or "model card" in preset.source


@pytest.mark.parametrize(
    ("model", "gpus"),
    [
        ("llama3-8b", 1024),
        ("llama3-70b", 1024),
        ("llama3-405b", 8192),
        ("gpt3-175b", 1024),
        ("mixtral-8x7b", 1024),
        ("deepseek-v3", 2048),
    ],
)
def test_every_preset_runs(model: str, gpus: int) -> None:
    step, _, _ = run(gpus, model=model)
    assert step.step_s > step.compute_s > 0


def test_preset_parallelism_applies_unless_the_user_sets_it() -> None:
    preset = resolve_workload(WorkloadSpec(model="llama3-405b"), 8192)
    assert (preset.tp, preset.pp, preset.dp) == (8, 16, 64)
    mine = resolve_workload(WorkloadSpec(model="llama3-405b", pp=8), 8192)
    assert (mine.tp, mine.pp, mine.dp) == (8, 8, 128)


@pytest.mark.parametrize(
    ("workload", "code"),
    [
        ({"model": "llama9"}, "FP501"),
        ({"tp": 3}, "FP502"),
        ({"dp": 7}, "FP502"),
        ({"model": "mixtral-8x7b", "ep": 3}, "FP503"),
        ({"model": "custom", "params_b": 7.0}, "FP507"),
    ],
)
def test_bad_workloads_name_their_field(workload: dict[str, Any], code: str) -> None:
    with pytest.raises(ModelError) as err:
        resolve_workload(WorkloadSpec(**workload), 1024)
    assert err.value.code == code


def test_batch_grows_to_one_sequence_per_replica() -> None:
    step, job, _ = run(model="llama3-70b", tp=1, global_batch_tokens=8192 * 100)
    assert job.dp == 1024
    assert any("rounded up to 1024 sequences" in a for a in step.assumptions)
