"""The grid of a sweep: every point's spec, checked before any work, and its seeds.

A point is the base spec with settings at spec paths. Paths are resolved against the structure
of :class:`~fabricplan.model.scenario.ScenarioSpec` itself (its fields, sub-models, mappings and
unions), so a key the spec gains later works in a sweep without a change here. Every point is
then validated and resolved through :mod:`fabricplan.spec`, exactly as a spec file is; the first
invalid point stops the sweep with one line naming the point and the field.

Seeds: a point's seed ``i`` is the first word of ``SeedSequence(entropy, spawn_key=(i,))`` (what
``SeedSequence(entropy).spawn(n)[i]`` gives, for any ``n > i``), where ``entropy`` is a hash of
the point's whole validated spec and the sweep's base seed. A point therefore draws the same
seeds in any order, on any worker, locally or on Ray, and seed ``i`` of one point never
coincides by construction with seed ``i + 1`` of another.

>>> definition = sweep_definition({"cluster": {"gpus": 1024}}, ["cluster.gpus=1024,2048"])
>>> [p.label for p in sweep_points(definition)]
['cluster.gpus=1024', 'cluster.gpus=2048']
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import types
import typing
from collections.abc import Sequence
from typing import Any, get_args, get_origin

import numpy as np
from pydantic import BaseModel, Field

from fabricplan.catalog.loader import Catalog, load_catalog
from fabricplan.errors import SweepError
from fabricplan.model.base import Frozen
from fabricplan.model.scenario import ScenarioSpec, ValidScenario
from fabricplan.spec import read_spec, resolve
from fabricplan.sweep.vary import Dimension, parse_vary

MAX_POINTS = 100_000
"""Most points one sweep may have: every point is validated and held before any work (about
12 kB each, so about 1.2 GB at this limit), and a product this large is more often a typo."""
SWEEP_COLLECTIVES = ("all_reduce", "all_to_all")
"""Collectives whose busbw and time every row carries (the data-parallel and expert-parallel
patterns of a training step)."""
DEFAULT_SIZE_BYTES = 2**30
"""Message size of the collective columns: 1 GiB per rank, nccl-tests' bandwidth-bound end."""


class SweepDefinition(Frozen):
    """Everything that decides a sweep's rows (stored in the results file's metadata)."""

    spec: dict[str, Any]
    """The base spec as written (the YAML mapping)."""
    dimensions: tuple[Dimension, ...] = Field(min_length=1)
    backend: str = "analytic"
    seeds: int = Field(default=1, ge=1)
    base_seed: int = 0
    size_bytes: int = Field(default=DEFAULT_SIZE_BYTES, gt=0)

    @property
    def keys(self) -> tuple[str, ...]:
        """Every varied spec path, in the order of the ``--vary`` arguments."""
        return tuple(k for d in self.dimensions for k in d.keys)

    def fingerprint(self) -> str:
        """A hash of what decides the rows, apart from the number of seeds (which may grow)."""
        data = self.model_dump(mode="json", exclude={"seeds"})
        return _digest(data)


class SweepPoint(Frozen):
    """One point of the grid, before validation."""

    index: int
    settings: dict[str, Any]
    """Spec path -> value for every varied path this point sets."""
    data: dict[str, Any]
    """The base spec with the settings applied."""

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={_shown(v)}" for k, v in self.settings.items())


class PointTask(Frozen):
    """One validated point, as sent to a worker."""

    index: int
    key: str
    """A hash of the point's whole validated spec and of what the sweep asks of it."""
    label: str
    settings: dict[str, Any]
    """Spec path -> value for every varied path (``None``: a points file left it out)."""
    valid: ValidScenario
    backend: str
    size_bytes: int
    seeds: tuple[int, ...]
    """Seed indices still to run."""
    sim_seeds: tuple[int, ...]
    """The seed handed to the backend for each of :attr:`seeds`."""


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shown(value: Any) -> str:
    if isinstance(value, str | int | float | bool) or value is None:
        return str(value).lower() if isinstance(value, bool) else str(value)
    return json.dumps(value, sort_keys=True, default=str)


def _branches(annotation: Any) -> list[Any]:
    """The alternatives of a (possibly optional or union) annotation."""
    origin = get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return [b for arg in get_args(annotation) for b in _branches(arg)]
    if origin is typing.Annotated:
        return _branches(get_args(annotation)[0])
    return [annotation]


def _step(annotation: Any, part: str) -> tuple[list[Any], list[str]]:
    """Annotations reached from ``annotation`` by the path segment ``part``, and the names
    that would have been valid there (for the error's suggestion)."""
    reached: list[Any] = []
    names: list[str] = []
    for branch in _branches(annotation):
        if isinstance(branch, type) and issubclass(branch, BaseModel):
            fields = branch.model_fields
            names += list(fields)
            if part in fields:
                reached.append(fields[part].annotation)
        elif get_origin(branch) is dict:
            key_type, value_type = get_args(branch)
            allowed = [str(a) for a in get_args(key_type)] if get_origin(key_type) else []
            names += allowed
            if not allowed or part in allowed:
                reached.append(value_type)
    return reached, names


def check_spec_path(path: str, source: str) -> None:
    """Raise unless ``path`` names something in the spec's structure.

    Examples
    --------
    >>> check_spec_path("fabric.switch.roce_v2.ports", "--vary")
    >>> check_spec_path("cluster.gpu_count", "--vary")
    Traceback (most recent call last):
    ...
    fabricplan.errors.SweepError: --vary: cluster.gpu_count is not a spec path ('gpu_count'); \
did you mean gpu? [FP1002]
    """
    annotations: list[Any] = [ScenarioSpec]
    parts = path.split(".")
    for depth, part in enumerate(parts):
        reached: list[Any] = []
        names: list[str] = []
        for annotation in annotations:
            found, valid_names = _step(annotation, part)
            reached += found
            names += valid_names
        if not reached:
            choices = list(dict.fromkeys(names))
            close = difflib.get_close_matches(part, choices, n=3, cutoff=0.5)
            if close:
                fix = f"did you mean {', '.join(close)}?"
            elif choices:
                fix = f"use one of {', '.join(choices)}"
            else:
                fix = f"{'.'.join(parts[:depth])} holds a single value; vary it whole"
            raise SweepError("FP1002", source, f"{path} is not a spec path", part, fix)
        annotations = reached


def with_setting(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``data`` with ``value`` at the dotted ``path`` (missing levels are created;
    a level holding a scalar, such as a preset name, is replaced by a mapping).

    >>> with_setting({"cluster": {"gpus": 8}}, "fabric.lossless.pfc", False)
    {'cluster': {'gpus': 8}, 'fabric': {'lossless': {'pfc': False}}}
    """
    result = copy.deepcopy(data)
    level = result
    parts = path.split(".")
    for part in parts[:-1]:
        if not isinstance(level.get(part), dict):
            level[part] = {}
        level = level[part]
    level[parts[-1]] = copy.deepcopy(value)
    return result


def sweep_definition(
    spec: dict[str, Any],
    vary: Sequence[str],
    backend: str = "analytic",
    seeds: int = 1,
    base_seed: int = 0,
    size_bytes: int = DEFAULT_SIZE_BYTES,
) -> SweepDefinition:
    """Parse the ``--vary`` arguments and check that every path is a spec path.

    Parameters
    ----------
    spec
        The base spec as written (the YAML mapping).
    vary
        The ``--vary`` arguments (:func:`fabricplan.sweep.vary.parse_vary`).
    backend, seeds, base_seed, size_bytes
        The performance backend, the runs per point, the sweep's base seed and the message size
        of the collective columns.

    Examples
    --------
    >>> definition = sweep_definition({"cluster": {"gpus": 1024}},
    ...                               ["cluster.gpus=512..2048x2", "fabric.tiers=auto,3"])
    >>> definition.keys, len(sweep_points(definition))
    (('cluster.gpus', 'fabric.tiers'), 6)
    """
    if not vary:
        raise SweepError(
            "FP1001",
            "--vary",
            "a sweep needs at least one",
            None,
            "add e.g. --vary cluster.gpus=512..4096x2",
        )
    dimensions = tuple(parse_vary(text) for text in vary)
    seen: dict[str, str] = {}
    for dimension in dimensions:
        for key in dimension.keys:
            check_spec_path(key, f"--vary {dimension.source}")
            if key in seen:
                raise SweepError(
                    "FP1008",
                    f"--vary {dimension.source}",
                    "varies a key another --vary already varies",
                    key,
                    f"merge it with --vary {seen[key]}",
                )
            seen[key] = dimension.source
    count = 1
    for dimension in dimensions:
        count *= len(dimension.points)
    if count > MAX_POINTS:
        raise SweepError(
            "FP1005",
            "--vary",
            f"the grid has more than {MAX_POINTS:,} points",
            count,
            "vary fewer keys",
        )
    return SweepDefinition(
        spec=spec,
        dimensions=dimensions,
        backend=backend,
        seeds=seeds,
        base_seed=base_seed,
        size_bytes=size_bytes,
    )


def sweep_points(definition: SweepDefinition) -> list[SweepPoint]:
    """The product of the dimensions, in order (the last ``--vary`` changes fastest)."""
    points = []
    for index, combination in enumerate(
        itertools.product(*(d.points for d in definition.dimensions))
    ):
        settings: dict[str, Any] = {}
        data = definition.spec
        for part in combination:
            settings.update(part)
        for path, value in settings.items():
            data = with_setting(data, path, value)
        points.append(SweepPoint(index=index, settings=settings, data=data))
    return points


def seed_entropy(spec: ScenarioSpec, base_seed: int) -> int:
    """The entropy of a point's seeds: a hash of its whole validated spec and the base seed."""
    return int(_digest({"spec": spec.model_dump(mode="json"), "base_seed": base_seed}), 16)


def point_seed(spec: ScenarioSpec, base_seed: int, seed_index: int) -> int:
    """The seed a point's run ``seed_index`` hands to the backend (see the module docstring).

    >>> spec = ScenarioSpec.model_validate({"cluster": {"gpus": 64}})
    >>> point_seed(spec, 0, 1) == point_seed(spec, 0, 1) != point_seed(spec, 0, 0)
    True
    """
    return _child_seed(seed_entropy(spec, base_seed), seed_index)


def _child_seed(entropy: int, seed_index: int) -> int:
    sequence = np.random.SeedSequence(entropy, spawn_key=(seed_index,))
    return int(sequence.generate_state(1, dtype=np.uint32)[0])


def validate_point(point: SweepPoint, catalog: Catalog) -> ValidScenario:
    """The point's spec, validated and resolved; the error names the point and the field."""
    origin = f"sweep point {point.index} ({point.label})"
    return resolve(read_spec(point.data, origin), catalog=catalog, origin=origin)


def point_tasks(
    definition: SweepDefinition, done: frozenset[tuple[str, int]] = frozenset()
) -> tuple[list[PointTask], int]:
    """Every point validated (the first invalid one raises), as tasks for the seeds not in
    ``done`` (pairs of point key and seed index); and the number of points in the grid."""
    catalog = load_catalog()
    tasks = []
    points = sweep_points(definition)
    for point in points:
        valid = validate_point(point, catalog)
        spec_data = valid.spec.model_dump(mode="json")
        key = _digest(
            {
                "spec": spec_data,
                "backend": definition.backend,
                "size_bytes": definition.size_bytes,
                "base_seed": definition.base_seed,
            }
        )[:32]
        seeds = tuple(i for i in range(definition.seeds) if (key, i) not in done)
        if seeds:
            entropy = int(_digest({"spec": spec_data, "base_seed": definition.base_seed}), 16)
            tasks.append(
                PointTask(
                    index=point.index,
                    key=key,
                    label=point.label,
                    settings={k: point.settings.get(k) for k in definition.keys},
                    valid=valid,
                    backend=definition.backend,
                    size_bytes=definition.size_bytes,
                    seeds=seeds,
                    sim_seeds=tuple(_child_seed(entropy, i) for i in seeds),
                )
            )
    return tasks, len(points)
