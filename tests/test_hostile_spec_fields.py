"""Every field of the spec, the catalog overrides within it included (``cluster.nic``,
``fabric.switch.<technology>``, ``cost.prices``, ``cost.operations_engineer_years``,
``decision.worth_usd``, ``fabric.routing``, ``fabric.sharp``), given values out of any cluster's
range ends in an answer with valid JSON or in one clean line — never a traceback or an internal
model's name (FP1399).

The field list is generated from the pydantic models (:func:`leaf_paths`): a field added to any
model reachable from :class:`ScenarioSpec` is walked without a change here, and
:func:`test_the_walk_covers_every_field_of_every_model` fails if the walk misses one.
Numbers get ``true``, negative, zero, huge, infinite, NaN and 30-digit values; strings, choices,
flags, lists and mappings get wrong types, empty, enormous and unknown values. Number fields
take numbers only and flags ``true``/``false`` only (``model/base.py``): generated quoted
numbers and flag words are refused with FP1412 / FP1413, naming the field."""

from __future__ import annotations

import types
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from fabricplan.errors import FabricPlanError, SpecError
from fabricplan.model.scenario import ScenarioSpec
from fabricplan.spec import SPEC_NUMBER_LIMIT, read_spec, resolve
from hostile_run import run

HOSTILE: dict[str, list[Any]] = {
    "number": [
        True,
        -1,
        0,
        1e308,
        float("inf"),
        float("nan"),
        10**30,
        -SPEC_NUMBER_LIMIT,
        "12",
        "inf",
        "1e400",
        "nan",
    ],
    "text": ["", "x" * 10_000, "\x00", "no_such_choice", 5, True, None, ["a"], {"a": 1}],
    "flag": [2, "yes", 1.5, None, [], "true"],
    "list": ["infiniband", [], [1], ["infiniband"] * 10_000, {"a": 1}, None],
    "mapping": [[], "x", 5, {"no_such_key": 1}, {"infiniband": None}],
    "section": [5, "x", [], True, {"no_such_field": 1}],
}
"""Hostile values by the kind of the field (:func:`_kind`)."""
LARGEST_ACCEPTED = [SPEC_NUMBER_LIMIT, -1]
"""The values that pass the edge's scale check and must still not break a model."""
EXAMPLE_KEY = {"prices": "qm9700"}
"""The key a mapping of free keys is walked with (a catalog part number); mappings keyed by
technology use ``infiniband``."""


def _args(annotation: Any) -> tuple[Any, ...]:
    """The parts of a union, ``Optional`` and ``Annotated`` annotation (itself otherwise)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _args(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return tuple(a for part in typing.get_args(annotation) for a in _args(part))
    return (annotation,)


def _models(annotation: Any) -> list[type[BaseModel]]:
    return [a for a in _args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]


def _kind(annotation: Any) -> str:
    """number, text (strings and choices), flag, list or mapping; a section holds a model."""
    kinds = set()
    for part in _args(annotation):
        origin = typing.get_origin(part)
        if part is bool:
            kinds.add("flag")
        elif part in {int, float}:
            kinds.add("number")
        elif part is str:
            kinds.add("text")
        elif origin is typing.Literal:
            values = typing.get_args(part)
            kinds.add("number" if all(isinstance(v, int) for v in values) else "text")
        elif origin in {tuple, list}:
            kinds.add("list")
        elif origin is dict:
            kinds.add("mapping")
        elif isinstance(part, type) and issubclass(part, BaseModel):
            kinds.add("section")
    for kind in ("section", "mapping", "list", "number", "flag", "text"):
        if kind in kinds:
            return kind
    raise AssertionError(f"a spec field of a kind the walk does not know: {annotation}")


def leaf_paths(
    model: type[BaseModel], prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], str]]:
    """Every field reachable from ``model`` with its kind: a section's fields, a mapping's
    values (through an example key) and, for fields that take an id or an override model (a
    catalog override), the override's fields too."""
    found: list[tuple[tuple[str, ...], str]] = []
    for name, field in model.model_fields.items():
        path = (*prefix, name)
        found.append((path, _kind(field.annotation)))
        for nested in _models(field.annotation):
            found += leaf_paths(nested, path)
        if typing.get_origin(field.annotation) is dict or _kind(field.annotation) == "mapping":
            for part in _args(field.annotation):
                if typing.get_origin(part) is not dict:
                    continue
                _key_type, value_type = typing.get_args(part)
                key = EXAMPLE_KEY.get(name, "infiniband")
                found.append(((*path, key), _kind(value_type)))
                for nested in _models(value_type):
                    found += leaf_paths(nested, (*path, key))
    return found


PATHS = leaf_paths(ScenarioSpec)
NUMERIC = [path for path, kind in PATHS if kind == "number"]


def _reachable_models(model: type[BaseModel]) -> set[type[BaseModel]]:
    seen = {model}
    for field in model.model_fields.values():
        for part in _args(field.annotation):
            for inner in (part, *typing.get_args(part)):
                for nested in _models(inner):
                    if nested not in seen:
                        seen |= _reachable_models(nested)
    return seen


def _spec(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"cluster": {"gpus": 64}}
    if path[:2] == ("fabric", "switch") and len(path) > 3:
        spec["fabric"] = {"switch": {"infiniband": {"ports": 64, "port_speed_gbps": 400}}}
    if path[:2] == ("cluster", "nic") and len(path) > 2:
        spec["cluster"]["nic"] = {"speed_gbps": 400, "latency_ns": 1000}
    if path[0] == "workload" and len(path) > 1 and path[1] in {"params_b", "layers", "hidden"}:
        spec["workload"] = {"model": "custom", "params_b": 7, "layers": 32, "hidden": 4096}
    if path[0] == "growth" and len(path) > 1:
        spec["growth"] = {"target_gpus": 128}
    if path[:3] == ("cluster", "host", "nic_slot") and len(path) > 3:
        spec["cluster"]["host"] = {"nic_slot": {"generation": 5, "lanes": 16}}
    if path[:2] == ("fabric", "uec") and len(path) > 2:  # its features need the technology
        spec["fabric"] = {"technologies": ["uec"], "switch": {"uec": "th-ultra-64x800g"}}
    node = spec
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value
    return spec


def test_the_walk_covers_every_field_of_every_model() -> None:
    walked = {path[-1] for path, _ in PATHS} | {path[-2] for path, _ in PATHS if len(path) > 1}
    for model in _reachable_models(ScenarioSpec):
        missing = set(model.model_fields) - walked
        assert not missing, f"{model.__name__} fields not walked: {missing}"
    names = {".".join(p) for p, _ in PATHS}
    overrides = {
        "cluster.nic.speed_gbps",
        "fabric.switch.infiniband.ports",
        "fabric.switch.infiniband.price_usd",
        "cost.prices.qm9700",
        "cost.operations_engineer_years.infiniband",
        "decision.worth_usd.infiniband",
        "fabric.routing.infiniband",
    }
    assert overrides <= names, overrides - names
    assert len(PATHS) > 90 and {kind for _, kind in PATHS} == set(HOSTILE)


@pytest.mark.parametrize(("path", "kind"), PATHS, ids=[".".join(p) for p, _ in PATHS])
def test_hostile_values_are_refused_at_the_edge_or_resolve(
    path: tuple[str, ...], kind: str, fuzz_counts: Counter[str]
) -> None:
    for value in HOSTILE[kind]:
        try:
            resolve(read_spec(_spec(path, value)))
        except FabricPlanError as exc:
            assert exc.code.startswith("FP") and "\n" not in str(exc), (path, value)
            assert len(str(exc)) < 600, (path, str(exc)[:300])
            assert exc.code != "FP1399", (path, value, str(exc))
            fuzz_counts["clean errors"] += 1
        else:
            if kind == "number":
                assert isinstance(value, int | float) and value is not True, (path, value)
                assert value == value and abs(value) <= SPEC_NUMBER_LIMIT, (path, value)
            if kind == "flag":
                raise AssertionError(f"{'.'.join(path)} took {value!r} as a flag")
            fuzz_counts["answers"] += 1


@pytest.mark.parametrize("path", NUMERIC, ids=".".join)
def test_the_largest_accepted_values_reach_an_answer_or_one_line(
    path: tuple[str, ...], tmp_path: Path, fuzz_counts: Counter[str]
) -> None:
    for value in LARGEST_ACCEPTED:
        file = tmp_path / "spec.yaml"
        file.write_text(yaml.safe_dump(_spec(path, value)))
        result = run(["compare", str(file), "-f", "json"], fuzz_counts)
        assert "FP1399" not in result.stderr, (path, value, result.stderr)


FLAGS = [path for path, kind in PATHS if kind == "flag"]
QUOTED_NUMBERS = st.one_of(
    st.integers(min_value=-(10**15), max_value=10**15).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["12", " 12 ", "1_000", "1e3", "12.0", "+5", "-0"]),
)
"""What a quoted number looks like in YAML (``gpus: "2048"``): every form pydantic's lax mode
would have read as a number."""
FLAG_WORDS = st.one_of(
    st.sampled_from(["yes", "no", "on", "off", "y", "n", "1", "0", "true", "false", "True"]),
    st.sampled_from([0, 1, 0.0, 1.0]),
    st.integers(min_value=2, max_value=10**6),
)
"""Pydantic's lax words and numbers for a bool, and other integers."""


def _field_of(path: tuple[str, ...]) -> Any:
    """The annotation of the field at ``path`` (through sections, mappings and overrides)."""
    annotation: Any = ScenarioSpec
    for key in path:
        models = _models(annotation)
        model = next((m for m in models if key in m.model_fields), None)
        if model is not None:
            annotation = model.model_fields[key].annotation
            continue
        mapping = next(a for a in _args(annotation) if typing.get_origin(a) is dict)
        annotation = typing.get_args(mapping)[1]
    return annotation


def _takes_numbers(path: tuple[str, ...]) -> bool:
    """Whether the field takes any int or float (not only a fixed choice such as tiers 2 or 3)."""
    return any(part in {int, float} for part in _args(_field_of(path)))


def _refused(path: tuple[str, ...], value: object) -> SpecError:
    """The edge's error for ``value`` at ``path``, which must name that field."""
    with pytest.raises(SpecError) as refused:
        read_spec(_spec(path, value), "spec.yaml")
    assert refused.value.where == f"spec.yaml: {'.'.join(path)}", (path, str(refused.value))
    return refused.value


@settings(max_examples=200, deadline=None, derandomize=True)
@given(path=st.sampled_from(NUMERIC), text=QUOTED_NUMBERS)
def test_a_quoted_number_is_refused_naming_its_field(path: tuple[str, ...], text: str) -> None:
    error = _refused(path, text)
    assert error.code == ("FP1412" if _takes_numbers(path) else "FP104"), str(error)
    assert "\n" not in str(error) and repr(text)[:40].strip("'") in str(error)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(path=st.sampled_from(FLAGS), word=FLAG_WORDS)
def test_a_flag_word_is_refused_naming_its_field(path: tuple[str, ...], word: object) -> None:
    error = _refused(path, word)
    assert error.code == "FP1413" and str(error).endswith("write true or false [FP1413]")


@pytest.mark.parametrize("path", FLAGS, ids=".".join)
def test_a_flag_takes_true_and_false(path: tuple[str, ...]) -> None:
    for value in (True, False):
        read_spec(_spec(path, value))


def test_numbers_from_yaml_and_the_coerced_kinds_still_read() -> None:
    """YAML gives real numbers (an integer feeds a float field); lists still feed tuples,
    strings choices, mappings sections: only the number and flag leaves are strict."""
    text = (
        "cluster: {gpus: 64, nic_speed_gbps: 400}\n"
        "fabric: {technologies: [infiniband], topology: fat_tree, lossless: {pfc: false}}\n"
        "cost: {prices: {qm9700: 25000}, price_book: prices.yaml}\n"
    )
    spec = read_spec(yaml.safe_load(text))
    assert spec.cluster.nic_speed_gbps == 400.0 and isinstance(spec.cluster.nic_speed_gbps, float)
    assert spec.fabric.technologies == ("infiniband",) and spec.fabric.topology == "fat_tree"
    assert spec.cost.prices == {"qm9700": 25000.0} and spec.fabric.lossless.pfc is False
