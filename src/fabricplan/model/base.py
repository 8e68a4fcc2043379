"""The base of every model: frozen, strict about unknown keys, finite numbers and booleans.

Every model inherits four checks, so a field added later gets them without a word:

- unknown keys fail with their name (``extra="forbid"``);
- a float field refuses ``.inf`` and ``.nan`` (``allow_inf_nan=False``);
- a number field takes a number only: not ``true``/``false`` (YAML would otherwise give 1/0) and
  not a quoted ``"12"``, while an integer still feeds a float field;
- a bool field takes ``true``/``false`` only, not pydantic's flag words (``"yes"``, ``"on"``,
  ``"1"``) nor 0/1.

The last two are pydantic's strict mode set on the number and bool leaves of each model's core
schema, once, when the schema is built (:func:`_strict_leaves`): validation then runs in
pydantic-core with no Python call per field. A literal of numbers (``tiers: auto | 2 | 3``),
which pydantic lets ``True`` match as 1 even when strict, gets the one Python check. Enum,
path, tuple, list and nested-model fields keep pydantic's usual coercion (a YAML list still
feeds a tuple, a string an enum or a path); only the leaves inside them are strict.

A model's schema is built when it is first validated or serialized, not when its class is made
(pydantic's ``defer_build``): a command pays only for the models it uses, and a model met only
inside another's schema (or a catalog ``TypeAdapter``'s) is never built on its own. Of the 65
models, the analytic ``compare`` builds 44; deferring all of them took about a tenth off the
whole command's CPU time (docs/performance.md, issue 10).

>>> class Link(Frozen):
...     speed_gbps: float
...     lanes: int = 4
...     breakout: bool = False
>>> Link.model_validate({"speed_gbps": 400}).speed_gbps
400.0
>>> for bad in ({"speed_gbps": True}, {"speed_gbps": "400"}, {"speed_gbps": 1, "breakout": "yes"}):
...     try:
...         Link.model_validate(bad)
...     except ValidationError as exc:
...         print(exc.errors()[0]["type"])
float_type
float_type
bool_type
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

__all__ = ["Frozen", "ValidationError"]

STRICT_LEAVES = frozenset({"int", "float", "bool"})
"""Core-schema types made strict: pydantic's strict int and float refuse bools and strings
(strict float still takes an int), strict bool takes only ``True``/``False``."""

_WRAPPERS = ("schema", "items_schema", "keys_schema", "values_schema")
"""Keys under which a core schema holds the schemas of its parts (default, nullable, validator
functions, lists, sets, dicts; a tuple's ``items_schema`` is a list)."""


def _strict_leaves(schema: Any) -> None:
    """Set ``strict`` on every int, float and bool leaf of one model's own core schema, in
    place. A nested model is not entered (its class made its own schema strict), nor a
    reference to one."""
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind in STRICT_LEAVES:
        schema["strict"] = True
        return
    if kind == "literal" and _numbered(schema["expected"]):
        literal = dict(schema)
        schema.clear()
        schema.update(core_schema.no_info_before_validator_function(_no_bool, literal))
        return
    if kind in {"model", "dataclass", "definition-ref", "definitions"}:
        return
    if kind == "model-fields":
        for field in schema["fields"].values():
            _strict_leaves(field["schema"])
        return
    for key in _WRAPPERS:
        part = schema.get(key)
        for inner in part if isinstance(part, list) else (part,):
            _strict_leaves(inner)
    if kind == "chain":
        for step in schema["steps"]:
            _strict_leaves(step)
    elif kind == "union":
        for choice in schema["choices"]:
            _strict_leaves(choice[0] if isinstance(choice, tuple) else choice)
    elif kind == "tagged-union":
        for choice in schema["choices"].values():
            _strict_leaves(choice)


def _numbered(expected: list[Any]) -> bool:
    """Whether a literal's choices hold a number and no true/false (``tiers: auto | 2 | 3``):
    pydantic matches ``True`` to the choice ``1`` even in strict mode."""
    return any(isinstance(v, int | float) for v in expected) and not any(
        isinstance(v, bool) for v in expected
    )


def _no_bool(value: Any) -> Any:
    """Refuse a true/false where a literal's choices are numbers (a literal's only Python
    check, on the few fields of fixed numbers)."""
    if value.__class__ is bool:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def _own_fields(schema: Any) -> Any:
    """The model-fields schema of a model's schema, under the ``definitions`` and model-validator
    wrappers pydantic may put around it."""
    while isinstance(schema, dict) and schema.get("type") != "model":
        schema = schema.get("schema")
    return schema["schema"] if isinstance(schema, dict) else None


class Frozen(BaseModel):
    """A frozen pydantic model that rejects unknown keys, non-finite floats, bools and strings
    as numbers, and anything but true/false as a bool."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        schema = handler(source)
        _strict_leaves(_own_fields(schema))
        return schema
