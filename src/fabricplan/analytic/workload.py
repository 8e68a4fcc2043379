"""Training-job presets and the resolved job the step-time model runs.

Presets (``analytic/data/workloads.yaml``) are data with sources: each names the paper or model
card its figures come from. :func:`resolve_workload` merges a preset with the user's
:class:`~fabricplan.model.scenario.WorkloadSpec`: what the user wrote wins, then the preset, then
the spec's defaults; and it checks the parallelism against the cluster.

>>> sorted(workload_presets())[:3]
['deepseek-v3', 'gpt3-175b', 'llama3-405b']
>>> from fabricplan.model.scenario import WorkloadSpec
>>> job = resolve_workload(WorkloadSpec(model="llama3-405b"), gpus=8192)
>>> job.tp, job.pp, job.dp, job.sequence_length
(8, 16, 64, 8192)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import Field, ValidationError

from fabricplan.errors import ModelError
from fabricplan.input_file import load_package_yaml
from fabricplan.model.base import Frozen
from fabricplan.model.scenario import WorkloadSpec

CUSTOM = "custom"
DEFAULT_GLOBAL_BATCH_TOKENS = 4 * 2**20
"""Tokens per optimizer step when neither the spec nor the preset says (the WorkloadSpec default:
"4M tokens", the batch Llama 3 405B started with, arXiv:2407.21783 section 3.4.1)."""

Precision = Literal["bf16", "fp8"]


class WorkloadPreset(Frozen):
    """A named model with its architecture and, where published, its training setup."""

    id: str
    name: str
    source: str = Field(min_length=3)
    date: str
    params_b: float = Field(gt=0)
    active_params_b: float | None = Field(default=None, gt=0)
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    experts: int = Field(default=1, gt=0)
    active_experts: int = Field(default=1, gt=0)
    sequence_length: int | None = Field(default=None, gt=0)
    global_batch_tokens: int | None = Field(default=None, gt=0)
    precision: Precision | None = None
    tp: int | None = Field(default=None, gt=0)
    pp: int | None = Field(default=None, gt=0)
    ep: int | None = Field(default=None, gt=0)


@dataclass(frozen=True, slots=True)
class Workload:
    """A training job with every figure decided."""

    name: str
    params: float
    active_params: float
    layers: int
    hidden: int
    experts: int
    active_experts: int
    sequence_length: int
    global_batch_tokens: int
    precision: Precision
    mfu: float
    tp: int
    pp: int
    dp: int
    ep: int
    fsdp: bool
    overlap: float
    source: str

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def expert_params(self) -> float:
        """Parameters in routed experts, summed over experts and layers.

        From ``total = dense + E * e`` and ``active = dense + k * e`` (``E`` experts, top-``k``).
        """
        if not self.is_moe or self.experts == self.active_experts:
            return 0.0
        per_expert = (self.params - self.active_params) / (self.experts - self.active_experts)
        return self.experts * per_expert

    @property
    def dense_params(self) -> float:
        """Parameters every token uses (attention, embeddings, shared experts)."""
        return self.params - self.expert_params


@lru_cache(maxsize=1)
def workload_presets() -> dict[str, WorkloadPreset]:
    """Every preset by id (read once; the file ships inside the package)."""
    text = (resources.files("fabricplan.analytic") / "data" / "workloads.yaml").read_text(
        encoding="utf-8"
    )
    return parse_presets(text)


def parse_presets(text: str) -> dict[str, WorkloadPreset]:
    """The presets of a ``workloads.yaml`` text, by id (FP500 names the first invalid field)."""
    presets: dict[str, WorkloadPreset] = {}
    for raw in load_package_yaml(text):
        try:
            preset = WorkloadPreset.model_validate(raw)
        except ValidationError as exc:  # a packaging bug, not a user error
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ModelError(
                "FP500",
                f"workloads.yaml: {raw.get('id')}.{field}",
                str(first["msg"]).lower(),
                None,
                "fix the preset file",
            ) from None
        presets[preset.id] = preset
    return presets


def _preset(spec: WorkloadSpec) -> WorkloadPreset | None:
    if spec.model == CUSTOM:
        missing = [f for f in ("params_b", "layers", "hidden") if getattr(spec, f) is None]
        if missing:
            raise ModelError(
                "FP507",
                f"workload.{missing[0]}",
                "a custom model needs params_b, layers and hidden",
                None,
                f"add workload.{missing[0]}",
            )
        return None
    presets = workload_presets()
    if spec.model not in presets:
        raise ModelError(
            "FP501",
            "workload.model",
            "is not a known preset",
            spec.model,
            f"use one of {', '.join(sorted(presets))} or custom",
        )
    return presets[spec.model]


def _pick(spec: WorkloadSpec, preset: WorkloadPreset | None, field: str) -> object:
    """The user's value if written, else the preset's, else the spec's default."""
    given = getattr(spec, field)
    if (field in spec.model_fields_set and given is not None) or preset is None:
        return given
    value = getattr(preset, field, None)
    return getattr(spec, field) if value is None else value


def _pick_int(spec: WorkloadSpec, preset: WorkloadPreset | None, field: str, default: int) -> int:
    value = _pick(spec, preset, field)
    return value if isinstance(value, int) else default


def _parallelism(spec: WorkloadSpec, tp: int, pp: int, ep: int, experts: int, gpus: int) -> int:
    if gpus % (tp * pp):
        raise ModelError(
            "FP502",
            "workload.tp x workload.pp",
            f"does not divide the cluster's {gpus} GPUs",
            tp * pp,
            "choose tp and pp whose product divides gpus",
        )
    dp = gpus // (tp * pp) if spec.dp == "auto" else spec.dp
    if tp * pp * dp != gpus:
        raise ModelError(
            "FP502",
            "workload.dp",
            f"tp x pp x dp must equal the cluster's {gpus} GPUs",
            dp,
            f"use dp: auto ({gpus // (tp * pp)})",
        )
    if ep > 1 and (dp % ep or experts % ep):
        raise ModelError(
            "FP503",
            "workload.ep",
            f"must divide dp ({dp}) and the experts ({experts})",
            ep,
            "choose an expert-parallel size that divides both",
        )
    return dp


def resolve_workload(spec: WorkloadSpec, gpus: int) -> Workload:
    """The job a spec describes on ``gpus`` GPUs, preset and user values merged and checked.

    Raises
    ------
    ModelError
        FP501 unknown preset; FP502 parallelism does not fit the GPUs; FP503 expert parallelism
        does not divide dp or the experts; FP507 a custom model lacks its size.
    """
    preset = _preset(spec)
    if spec.params_b is not None:
        params_b = spec.params_b
    else:
        assert preset is not None  # _preset raised for a custom model without params_b
        params_b = preset.params_b
    experts = _pick_int(spec, preset, "experts", 1)
    active_experts = min(experts, _pick_int(spec, preset, "active_experts", 1))
    active_b = spec.active_params_b
    if active_b is None and preset is not None and "params_b" not in spec.model_fields_set:
        active_b = preset.active_params_b
    active_b = params_b if active_b is None else min(active_b, params_b)
    tp = _pick_int(spec, preset, "tp", spec.tp)
    pp = _pick_int(spec, preset, "pp", spec.pp)
    ep = _pick_int(spec, preset, "ep", spec.ep)
    dp = _parallelism(spec, tp, pp, ep, experts, gpus)
    layers = _pick_int(spec, preset, "layers", 1)
    precision = _pick(spec, preset, "precision")
    return Workload(
        name=preset.name if preset else CUSTOM,
        params=params_b * 1e9,
        active_params=active_b * 1e9,
        layers=layers,
        hidden=_pick_int(spec, preset, "hidden", 1),
        experts=experts,
        active_experts=active_experts,
        sequence_length=_pick_int(spec, preset, "sequence_length", spec.sequence_length),
        global_batch_tokens=_pick_int(
            spec, preset, "global_batch_tokens", DEFAULT_GLOBAL_BATCH_TOKENS
        ),
        precision="fp8" if precision == "fp8" else "bf16",
        mfu=spec.mfu,
        tp=tp,
        pp=pp,
        dp=dp,
        ep=ep,
        fsdp=spec.fsdp,
        overlap=spec.overlap,
        source=preset.source if preset else "given in the spec",
    )


def sequences_per_replica(job: Workload) -> tuple[int, bool]:
    """Sequences one data-parallel replica processes per step, and whether the global batch had to
    grow to give every replica at least one whole sequence."""
    sequences = max(1, round(job.global_batch_tokens / job.sequence_length))
    per_replica = math.ceil(sequences / job.dp)
    return per_replica, per_replica * job.dp != sequences


def workload_summary(job: Workload) -> str:
    """What the step model runs, in one line: every report prints this, never the spec's raw
    fields (a preset's parallelism, precision and sequence override the spec's defaults).

    Examples
    --------
    >>> from fabricplan.model.scenario import WorkloadSpec
    >>> text = workload_summary(resolve_workload(WorkloadSpec(model="deepseek-v3"), gpus=2048))
    >>> text.split(": ")[1]
    'TP1 PP16 DP128 EP64, fp8, seq 4,096, 62,914,560 tokens per step, MFU 0.4'
    """
    return (
        f"{job.name}: TP{job.tp} PP{job.pp} DP{job.dp} EP{job.ep}, {job.precision}, seq"
        f" {job.sequence_length:,}, {job.global_batch_tokens:,} tokens per step, MFU {job.mfu:g}"
    )
