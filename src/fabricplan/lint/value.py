"""Reading single values out of configuration text, with one-line errors that name the place.

Every parser reads numbers, lists and ranges through these functions, so that bad input always
becomes an :class:`~fabricplan.errors.InputFileError` (FP4xx) naming the file and the line or key,
never a Python exception.

>>> parse_int_set("3,4", "f:PORT_QOS_MAP|Ethernet0.pfc_enable")
frozenset({3, 4})
>>> expand_names("swp1-3,swp7")
['swp1', 'swp2', 'swp3', 'swp7']
>>> locate_line('{\\n "PORT": {\\n  "Ethernet0": {"mtu": "9100"}}}', ("PORT", "Ethernet0", "mtu"))
3
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fabricplan.errors import InputFileError

if TYPE_CHECKING:  # an annotation only: the compare imports this module without the lint model
    from fabricplan.lint.model import PortRole

MAX_RANGE_ITEMS = 4096
"""Largest range a name or number range may expand to (a 512-port switch with breakouts fits)."""
HOST_WORDS = ("server", "host", "gpu", "nic")
"""Words in a port description that mark a server-facing port."""
FABRIC_WORDS = ("spine", "leaf", "tor", "core", "uplink")
"""Words in a port description that mark a switch-facing port."""

_NUMBER_RE = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")
_TRAILING_NUMBER_RE = re.compile(r"^(.*?)(\d+)$")


DEFAULT_FIXES = {
    "FP405": "give the configuration as the device prints it (see docs/lint.md)",
    "FP406": "write the value as the device prints it",
    "FP409": "use a value in the range the message names",
}
"""What to do, for a reader's check that names none: the message keeps its ``; fix`` part."""


def input_error(
    code: str, where: str, what: str, value: object = None, fix: str = ""
) -> InputFileError:
    """An :class:`InputFileError` (codes FP400-FP449); without ``fix``, the code's default.

    >>> str(input_error("FP409", "leaf.cfg:3", "ToS must be 0-255", 300))
    'leaf.cfg:3: ToS must be 0-255 (300); use a value in the range the message names [FP409]'
    """
    return InputFileError(code, where, what, value, fix or DEFAULT_FIXES.get(code, ""))


def to_float(value: object, where: str) -> float:
    """A number from a JSON/YAML scalar or text, else FP406.

    >>> to_float("9100", "x"), to_float(0.5, "x")
    (9100.0, 0.5)
    """
    if isinstance(value, bool):
        raise input_error("FP406", where, "expected a number", value, "write a plain number")
    if isinstance(value, int | float) or (isinstance(value, str) and _NUMBER_RE.match(value)):
        number = float(value)
    else:
        raise input_error(
            "FP406", where, "expected a number", _short(value), "write a plain number"
        )
    if number != number or number in (float("inf"), float("-inf")):
        raise input_error("FP406", where, "expected a finite number", _short(value))
    return number


def to_int(value: object, where: str) -> int:
    """A whole number, else FP406.

    >>> to_int("26", "x")
    26
    """
    number = to_float(value, where)
    if not number.is_integer():
        raise input_error("FP406", where, "expected a whole number", _short(value))
    return int(number)


def to_ranged_int(value: object, where: str, low: int, high: int, name: str) -> int:
    """A whole number in ``low..high`` (a priority 0-7, a DSCP 0-63), else FP409."""
    number = to_int(value, where)
    if not low <= number <= high:
        raise input_error("FP409", where, f"{name} must be {low}-{high}", number)
    return number


def to_priority(value: object, where: str) -> int:
    """An 802.1p priority / traffic class (0-7)."""
    return to_ranged_int(value, where, 0, 7, "a priority")


def to_dscp(value: object, where: str) -> int:
    """A DSCP value (0-63)."""
    return to_ranged_int(value, where, 0, 63, "a DSCP")


def to_bool(value: object, where: str) -> bool:
    """``true/false``, ``on/off``, ``enable(d)/disable(d)``, ``yes/no``, ``1/0``, ``True(1)``.

    >>> to_bool("True(1)", "x"), to_bool("disable", "x"), to_bool(True, "x")
    (True, False, True)
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    text = re.sub(r"\(\d+\)$", "", text)
    if text in {"true", "on", "enable", "enabled", "yes", "1"}:
        return True
    if text in {"false", "off", "disable", "disabled", "no", "0"}:
        return False
    raise input_error("FP406", where, "expected on/off", _short(value), "write true or false")


def int_range(text: str, where: str, low: int = 0, high: int = 7) -> list[int]:
    """``3``, ``3-4`` or ``0-2,5-6`` as a list of numbers within ``low..high``.

    >>> int_range("0-2,5", "x")
    [0, 1, 2, 5]
    """
    numbers: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        first, sep, last = part.partition("-")
        start = to_ranged_int(first, where, low, high, "a number")
        stop = to_ranged_int(last, where, low, high, "a number") if sep else start
        if stop < start:
            raise input_error("FP406", where, "range runs backwards", part)
        numbers.extend(range(start, stop + 1))
    return numbers


def parse_int_set(text: object, where: str, low: int = 0, high: int = 7) -> frozenset[int]:
    """A comma-separated set of priorities (``""`` is the empty set)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return frozenset(int_range(str(text), where, low, high))
    if not isinstance(text, str):
        raise input_error("FP405", where, "expected a comma-separated list", _short(text))
    return frozenset(int_range(text, where, low, high))


def expand_names(text: str, where: str = "") -> list[str]:
    """Port names from a list with ranges: ``swp1-4,swp6``, ``swp2,6``, ``Ethernet0,Ethernet4``.

    A bare number reuses the previous name's prefix (``swp2,6`` is swp2 and swp6).

    >>> expand_names("swp10-12,14")
    ['swp10', 'swp11', 'swp12', 'swp14']
    >>> expand_names("swp1s0-1"), expand_names("Port-Channel1")
    (['swp1s0', 'swp1s1'], ['Port-Channel1'])
    """
    names: list[str] = []
    prefix = ""
    for raw in str(text).split(","):
        part = raw.strip()
        if not part:
            continue
        if part.isdigit():
            names.append(prefix + part)
            continue
        head, sep, tail = part.rpartition("-")
        start = _TRAILING_NUMBER_RE.match(head) if sep and tail.isdigit() else None
        if start is None:
            whole = _TRAILING_NUMBER_RE.match(part)
            prefix = whole.group(1) if whole else ""
            names.append(part)
            continue
        prefix, first = start.group(1), int(start.group(2))
        last = int(tail)
        if last < first or last - first >= MAX_RANGE_ITEMS:
            raise input_error("FP406", where or part, "name range is empty or too long", part)
        names.extend(f"{prefix}{number}" for number in range(first, last + 1))
    return names


def strip_reference(value: object, where: str) -> str:
    """A SONiC reference as a plain name: ``[BUFFER_PROFILE|x]`` and ``x`` both give ``x``.

    >>> strip_reference("[DSCP_TO_TC_MAP|AZURE]", "x")
    'AZURE'
    """
    if not isinstance(value, str):
        raise input_error("FP405", where, "expected a name", _short(value))
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return text.rsplit("|", 1)[-1]


def role_from_description(description: str) -> PortRole | None:
    """The port's role as its description names it (host words win); ``None`` when it does not.

    >>> role_from_description("to GPU server 12"), role_from_description("Spine-3 uplink")
    ('host', 'fabric')
    """
    text = description.lower()
    if any(word in text for word in HOST_WORDS):
        return "host"
    if any(word in text for word in FABRIC_WORDS):
        return "fabric"
    return None


def locate_line(text: str, path: Sequence[str]) -> int | None:
    """The line of the last key of ``path``, finding each key after the previous one.

    Good enough for pretty-printed JSON and YAML, where keys appear in nesting order.
    """
    position = 0
    for key in path:
        found = -1
        for pattern in (f'"{key}"', f"'{key}'", f"{key}:"):
            found = text.find(pattern, position)
            if found >= 0:
                break
        if found < 0:
            return None
        position = found + 1
    return text.count("\n", 0, position) + 1


def _short(value: object, limit: int = 60) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."
