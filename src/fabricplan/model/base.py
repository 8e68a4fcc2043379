"""The base of every model: frozen, strict about unknown keys, finite numbers and booleans.

Every model inherits three checks, so a field added later gets them without a word:

- unknown keys fail with their name (``extra="forbid"``);
- a float field refuses ``.inf`` and ``.nan`` (``allow_inf_nan=False``);
- a number field refuses ``true``/``false`` (YAML would otherwise give 1/0), while an integer
  still feeds a float field.

>>> class Link(Frozen):
...     speed_gbps: float
>>> Link.model_validate({"speed_gbps": 400}).speed_gbps
400.0
>>> Link.model_validate({"speed_gbps": True})
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Link
speed_gbps
  a true/false is not a number [type=bool_for_number, input_value=True, input_type=bool]
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError


def _admits_bool(annotation: Any) -> bool:
    """Whether a field's type accepts a boolean on purpose (bool, Any, Literal[True], unions)."""
    if annotation is bool or annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return any(isinstance(arg, bool) for arg in typing.get_args(annotation))
    if origin is typing.Union or origin is types.UnionType or origin is typing.Annotated:
        return any(_admits_bool(arg) for arg in typing.get_args(annotation))
    return False


def _is_number(annotation: Any) -> bool:
    """Whether a field's type is (or unions with) int or float."""
    if annotation is int or annotation is float:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType or origin is typing.Annotated:
        return any(_is_number(arg) for arg in typing.get_args(annotation))
    return False


def _holds_numbers(annotation: Any) -> bool:
    """Whether a field is a list, tuple or mapping of numbers (``dict[str, float]``)."""
    origin = typing.get_origin(annotation)
    if origin in {list, tuple, dict, frozenset, set}:
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        item = args[-1] if args else None
        return _is_number(item) and not _admits_bool(item)
    if origin is typing.Union or origin is types.UnionType:
        return any(_holds_numbers(arg) for arg in typing.get_args(annotation))
    return False


@functools.cache
def _number_fields(model: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    """A model's number fields, and its fields holding numbers (derived once per class)."""
    fields = model.model_fields.items()
    numbers = frozenset(
        name for name, f in fields if _is_number(f.annotation) and not _admits_bool(f.annotation)
    )
    holders = frozenset(name for name, f in fields if _holds_numbers(f.annotation))
    return numbers, holders


class Frozen(BaseModel):
    """A frozen pydantic model that rejects unknown keys, non-finite floats and bools as numbers."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_number(cls, value: Any, info: ValidationInfo) -> Any:
        numbers, holders = _number_fields(cls)
        name = info.field_name
        if value.__class__ is bool and name in numbers:
            raise PydanticCustomError("bool_for_number", "a true/false is not a number")
        if name in holders and isinstance(value, dict | list | tuple):
            items = value.values() if isinstance(value, dict) else value
            if any(item.__class__ is bool for item in items):
                raise PydanticCustomError("bool_for_number", "a true/false is not a number")
        return value
