"""What a sweep varies: ``--vary KEY=VALUES`` and YAML files of explicit points.

A :class:`Dimension` is one axis of the grid: the spec paths it sets and, for each of its values,
the settings (path -> value). ``--vary cluster.gpus=512..4096x2`` is one path with four values;
a points file is one axis whose values each set several paths. The grid is the product of the
axes (:mod:`fabricplan.sweep.grid`).

``VALUES`` is one of

- a geometric range ``LO..HIxF`` (``512..65536x2``: 512, 1024, ..., 65536; F > 1),
- an arithmetic range ``LO..HI+S`` or ``LO..HI`` (step 1),
- a list ``a,b,c`` whose items are numbers (``2``, ``1.5``, ``1e-5``) or else YAML scalars or
  flow collections (``true``, ``qm9700``, ``[infiniband]``, ``{ports: 64, port_speed_gbps:
  400}``); commas inside brackets, braces or quotes do not split.

A range stops at the last value not above ``HI``.

>>> parse_vary("cluster.gpus=512..4096x2").values()
[512, 1024, 2048, 4096]
>>> parse_vary("fabric.lossless.pfc=true,false").values()
[True, False]
>>> parse_vary("fabric.technologies=[infiniband],[roce_v2]").values()
[['infiniband'], ['roce_v2']]
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from fabricplan.errors import SweepError
from fabricplan.model.base import Frozen

MAX_VALUES = 100_000
"""Most values one ``--vary`` may expand to (a guard against a typo such as ``1..1e9``)."""
RANGE_TOLERANCE = 1e-9
"""Relative slack when deciding whether a float range reaches ``HI`` (0.1 + 0.2 is 0.3)."""

_PATH_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$")
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE_RE = re.compile(rf"^({_NUMBER})\.\.({_NUMBER})(?:([x+])({_NUMBER}))?$")
POINTS_FILE_SUFFIXES = (".yaml", ".yml")


class Dimension(Frozen):
    """One axis of a sweep grid: the paths it sets and one settings mapping per value."""

    source: str
    """What the user wrote (``cluster.gpus=512..4096x2`` or the points file's path)."""
    keys: tuple[str, ...] = Field(min_length=1)
    """The spec paths this axis sets, in the order first seen."""
    points: tuple[dict[str, Any], ...] = Field(min_length=1)
    """Per value, the settings it makes (a points file may leave a path out: the spec's value)."""

    def values(self) -> list[Any]:
        """The values of a single-path axis, in order."""
        return [p[self.keys[0]] for p in self.points]


def _error(code: str, source: str, what: str, value: Any, fix: str) -> SweepError:
    return SweepError(code, f"--vary {source}", what, value, fix)


def _number(text: str) -> int | float:
    value = float(text)
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return value


def _expand_range(source: str, text: str, match: re.Match[str]) -> list[int | float]:
    low, high = _number(match.group(1)), _number(match.group(2))
    kind, step_text = match.group(3), match.group(4)
    step: int | float = 1 if step_text is None else _number(step_text)
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(step)):
        raise _error("FP1004", source, "a range needs finite numbers", text, "use e.g. 512..4096x2")
    if high < low:
        raise _error(
            "FP1004", source, "the range runs backwards", text, f"write it as {high}..{low}"
        )
    if kind == "x":
        if step <= 1 or low <= 0:
            raise _error(
                "FP1004",
                source,
                "a geometric range needs LO > 0 and a factor above 1",
                text,
                "use e.g. 512..65536x2",
            )
        count = math.floor(math.log(high / low) / math.log(step) + RANGE_TOLERANCE) + 1
    else:
        if step <= 0:
            raise _error(
                "FP1004",
                source,
                "an arithmetic range needs a step above 0",
                text,
                "use e.g. 1..4+1",
            )
        count = math.floor((high - low) / step + RANGE_TOLERANCE) + 1
    if count > MAX_VALUES:
        raise _error(
            "FP1005",
            source,
            f"the range has more than {MAX_VALUES:,} values",
            count,
            "use a coarser step or a factor",
        )
    exact = all(isinstance(v, int) for v in (low, high, step))
    values: list[int | float] = []
    for i in range(count):
        if kind == "x":
            value: int | float = low * step**i
        else:
            value = low + step * i
        values.append(int(value) if exact else float(value))
    return values


def _split_items(text: str) -> list[str]:
    """Split at commas outside brackets, braces and quotes."""
    items: list[str] = []
    depth, quote, start = 0, "", 0
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def _scalar(source: str, item: str) -> Any:
    text = item.strip()
    if not text:
        raise _error(
            "FP1003", source, "has an empty value", item, "remove the extra comma or give a value"
        )
    if re.fullmatch(_NUMBER, text):  # YAML 1.1 would read 1e-5 as text and 010 as octal
        return _number(text)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        raise _error(
            "FP1003", source, "a value is not a YAML scalar or list", text, "quote it or fix it"
        ) from None


def check_path(source: str, path: str) -> str:
    """A spec path's syntax (its meaning is checked against the spec in the grid)."""
    if not _PATH_RE.match(path):
        raise _error(
            "FP1002",
            source,
            "the key is not a dotted spec path",
            path,
            "use e.g. cluster.gpus or fabric.oversubscription",
        )
    return path


def _no_duplicates(source: str, points: list[dict[str, Any]]) -> None:
    seen: set[str] = set()
    for point in points:
        key = repr(sorted(point.items()))
        if key in seen:
            raise _error(
                "FP1006",
                source,
                "lists the same value twice",
                ", ".join(f"{k}={v!r}" for k, v in point.items()),
                "list each value once",
            )
        seen.add(key)


def parse_vary(text: str) -> Dimension:
    """One ``--vary`` argument as a grid axis.

    ``KEY=VALUES`` (see the module docstring); anything without ``=`` that ends in ``.yaml`` or
    ``.yml`` is read as a points file (:func:`read_points_file`).

    Examples
    --------
    >>> parse_vary("fabric.oversubscription=1..3").values()
    [1, 2, 3]
    >>> parse_vary("cost.years=3,5").keys
    ('cost.years',)
    >>> parse_vary("cluster.gpus=100..50")
    Traceback (most recent call last):
    ...
    fabricplan.errors.SweepError: --vary cluster.gpus=100..50: the range runs backwards \
('100..50'); write it as 50..100 [FP1004]
    """
    key, sep, values_text = text.partition("=")
    if not sep:
        if text.strip().lower().endswith(POINTS_FILE_SUFFIXES):
            return read_points_file(Path(text.strip()))
        raise _error(
            "FP1001",
            text,
            "is neither KEY=VALUES nor a YAML points file",
            None,
            "use e.g. --vary cluster.gpus=512..4096x2 or --vary points.yaml",
        )
    path = check_path(text, key.strip())
    body = values_text.strip()
    match = _RANGE_RE.match(body)
    values: list[Any]
    if match:
        values = list(_expand_range(text, body, match))
    else:
        values = [_scalar(text, item) for item in _split_items(body)]
    points = [{path: value} for value in values]
    _no_duplicates(text, points)
    return Dimension(source=text, keys=(path,), points=tuple(points))


def read_points_file(path: Path) -> Dimension:
    """A YAML file of explicit points: a list of mappings from spec path to value.

    The list may also sit under a top-level ``points:`` key. A path a point leaves out keeps the
    spec's value.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp) / "points.yaml"
    ...     _ = file.write_text("- {cluster.gpus: 1024, fabric.oversubscription: 2}\\n"
    ...                         "- {cluster.gpus: 4096}\\n")
    ...     read_points_file(file).keys
    ('cluster.gpus', 'fabric.oversubscription')
    """
    source = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _error(
            "FP1007", source, "cannot read the points file", exc.strerror, "check the path"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise _error(
            "FP1007", source, f"the points file is not valid YAML{line}", None, "fix the syntax"
        ) from None
    if isinstance(data, dict) and set(data) == {"points"}:
        data = data["points"]
    if not isinstance(data, list) or not data:
        raise _error(
            "FP1007",
            source,
            "a points file is a non-empty list of mappings",
            type(data).__name__,
            "write e.g. '- {cluster.gpus: 1024, fabric.oversubscription: 2}'",
        )
    keys: list[str] = []
    points: list[dict[str, Any]] = []
    for index, point in enumerate(data):
        if not isinstance(point, dict) or not point:
            raise _error(
                "FP1007",
                f"{source} point {index}",
                "a point is a non-empty mapping from spec path to value",
                type(point).__name__,
                "write e.g. '- {cluster.gpus: 1024}'",
            )
        for key in point:
            check_path(f"{source} point {index}", str(key))
            if key not in keys:
                keys.append(str(key))
        points.append({str(k): v for k, v in point.items()})
    _no_duplicates(source, points)
    return Dimension(source=source, keys=tuple(keys), points=tuple(points))
