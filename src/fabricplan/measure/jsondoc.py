"""JSON as benchmark tools write it: one document, several concatenated, or one cut short.

>>> docs, error = json_documents('{"a": 1}\\n{"a": 2}\\n{"a": ')
>>> [d["a"] for d in docs], error
([1, 2], (3, 7, 'Expecting value'))
"""

from __future__ import annotations

import json
from typing import Any

JsonError = tuple[int, int, str]
"""1-based line and column, and what the decoder expected."""


def line_of(text: str, offset: int) -> int:
    """1-based line of a character offset."""
    return text.count("\n", 0, offset) + 1


def json_documents(text: str) -> tuple[list[Any], JsonError | None]:
    """Every JSON value in ``text`` one after another (JSON lines, concatenated objects).

    Returns the values read and, when reading stopped early, where and why.
    """
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    position, end = 0, len(text)
    while True:
        while position < end and text[position] in " \t\r\n,":
            position += 1
        if position >= end:
            return docs, None
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            return docs, (exc.lineno, exc.colno, exc.msg)
        except RecursionError:
            return docs, (line_of(text, position), 1, "nesting too deep")
        docs.append(value)


def objects_after(text: str, marker: str) -> list[tuple[int, Any]]:
    """Each complete JSON value that starts where ``marker`` starts (to salvage a cut file).

    >>> objects_after('[{"size": 8}, {"size": 16}, {"size": 3', '{"size"')
    [(1, {'size': 8}), (1, {'size': 16})]
    """
    decoder = json.JSONDecoder()
    found: list[tuple[int, Any]] = []
    start = text.find(marker)
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
            found.append((line_of(text, start), value))
        except (json.JSONDecodeError, RecursionError):
            pass
        start = text.find(marker, start + 1)
    return found


def value_after_key(text: str, key: str) -> Any:
    """The JSON value following the first ``"key":`` in ``text``, or ``None``."""
    marker = f'"{key}":'
    start = text.find(marker)
    if start < 0:
        return None
    position = start + len(marker)
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    try:
        return json.JSONDecoder().raw_decode(text, position)[0]
    except (json.JSONDecodeError, RecursionError):
        return None
