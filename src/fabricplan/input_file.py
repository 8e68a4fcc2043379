"""The one way fabricplan reads a file a user names: spec, price book, calibration profile, switch
and NIC configurations, benchmark logs.

Every reader states what the file is to it with a :class:`FileKind` (its name in messages, the
error class and codes its callers document, a size cap); this module then refuses, in one line
``where: what (value); fix [CODE]``:

- what is not a regular file (a directory, a FIFO with no writer, ``/dev/zero``), checked with
  ``stat`` before anything is opened, so nothing blocks;
- a file above the kind's size cap (read with the cap, so a file that grows or a ``/proc`` file
  whose size reads 0 cannot exceed it);
- bytes that do not decode (unless the kind declares a replacing fallback, as benchmark logs do);
- YAML with duplicate keys, nesting deeper than :data:`MAX_YAML_DEPTH`, more than
  :data:`MAX_YAML_NODES` nodes once aliases are expanded (an "alias bomb"), recursive aliases, or
  an integer longer than :data:`MAX_NUMBER_DIGITS` digits;
- JSON with ``NaN``/``Infinity``, overlong integers, or nesting Python cannot parse.

Large logs are read line by line (:func:`iter_lines`), so their memory stays bounded.

>>> kind = FileKind("spec", FabricPlanError, "FP108", yaml_code="FP106")
>>> load_yaml("a: 1\\nb: [1, 2]\\n", "spec.yaml", kind)
{'a': 1, 'b': [1, 2]}
>>> load_yaml("a: 1\\na: 2\\n", "spec.yaml", kind)
Traceback (most recent call last):
...
fabricplan.errors.FabricPlanError: spec.yaml:2: duplicate key ('a'); keep one [FP106]
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from fabricplan.errors import FabricPlanError

__all__ = [
    "MAX_NUMBER_DIGITS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "FileKind",
    "SafeYamlLoader",
    "iter_lines",
    "load_json",
    "load_package_yaml",
    "load_yaml",
    "read_bytes",
    "read_text",
    "read_yaml_file",
]

DEFAULT_MAX_BYTES = 16 * 2**20
"""Default size cap of a file a user names, in bytes (16 MiB: a 100k-GPU spec is a few kB)."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of YAML collections accepted (a spec nests 4 deep; NVUE about 10)."""
MAX_YAML_NODES = 1_000_000
"""Most YAML nodes a document may expand to, counting an aliased node at each use."""
MAX_NUMBER_DIGITS = 40
"""Longest integer accepted in YAML or JSON, in digits (2**128 has 39): longer ones are not
figures of a cluster, and Python refuses to convert past 4300 digits anyway."""
READ_CHUNK_BYTES = 1 << 20
"""Bytes read at a time when streaming lines."""

SafeYamlBase: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's C parser when PyYAML was built with it (several times faster), else the Python one."""


class SafeYamlLoader(SafeYamlBase):  # type: ignore[misc]
    """The safe loader (C parser when available); :func:`load_yaml` checks its node tree."""


def load_package_yaml(text: str) -> Any:
    """One YAML document of package data (a file shipped inside fabricplan, not one a user
    names): the safe loader with the C parser where PyYAML has it, without :func:`load_yaml`'s
    checks, which guard against hostile input. The C parser builds the same objects as the
    Python one (the resolvers and constructors are PyYAML's Python ones in both), several times
    faster (the NCCL tuning tables: 0.057 s of CPU with the Python parser, 0.007 s with the C one).

    >>> load_package_yaml("- {a: 1, b: [2.5, x]}\\n")
    [{'a': 1, 'b': [2.5, 'x']}]
    """
    return yaml.load(text, Loader=SafeYamlLoader)


@dataclass(frozen=True)
class FileKind:
    """What a file is to the command that reads it: the words and codes of its errors.

    Parameters
    ----------
    noun
        What the file is, in messages (``"spec"``, ``"price book"``).
    error
        The error class its callers document (``FabricPlanError``, ``InputFileError``...).
    code
        Code for a file that cannot be read: missing, not a regular file, too large, not text.
    yaml_code
        Code for a document that is not acceptable YAML/JSON (syntax, duplicate key, limits).
    max_bytes
        Size cap in bytes.
    fix
        What to do when the file cannot be read.
    decode_fallback
        ``True`` where the format allows it: undecodable bytes become U+FFFD instead of an error.
    too_large_code
        Code for a file above the cap, when it has its own (else ``code``).
    """

    noun: str
    error: type[FabricPlanError]
    code: str
    yaml_code: str = ""
    max_bytes: int = DEFAULT_MAX_BYTES
    fix: str = "check the path"
    decode_fallback: bool = False
    too_large_code: str = ""

    def fail(self, code: str, where: str, what: str, value: Any = None, fix: str = "") -> Any:
        """The error to raise, of the kind's class."""
        return self.error(code, where, what, value, fix)


def _regular_file(path: str | os.PathLike[str], kind: FileKind) -> tuple[str, int]:
    """The path as text and its size, once ``stat`` says it is a regular file."""
    where = os.fspath(path)
    if where == "":
        raise kind.fail(kind.code, f"the {kind.noun}", "no file named", "", kind.fix)
    try:
        info = os.stat(where)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise kind.fail(
            kind.code, where, f"cannot read the {kind.noun}", reason, kind.fix
        ) from None
    if not stat.S_ISREG(info.st_mode):
        what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise kind.fail(
            kind.code, where, f"is {what}, not a {kind.noun} file", None, "name a regular file"
        )
    if info.st_size > kind.max_bytes:
        raise _too_large(where, kind, info.st_size)
    return where, info.st_size


def _too_large(where: str, kind: FileKind, size: int | str) -> FabricPlanError:
    return kind.fail(  # type: ignore[no-any-return]
        kind.too_large_code or kind.code,
        where,
        f"is too large for a {kind.noun}",
        f"{size} bytes" if isinstance(size, int) else size,
        f"the limit is {kind.max_bytes} bytes ({kind.max_bytes / 2**20:g} MiB)",
    )


def read_bytes(path: str | os.PathLike[str], kind: FileKind) -> bytes:
    """The bytes of a regular file no larger than the kind's cap.

    Examples
    --------
    >>> kind = FileKind("spec", FabricPlanError, "FP108")
    >>> try:
    ...     read_bytes("/dev/zero", kind)
    ... except FabricPlanError as exc:
    ...     print(exc.what, exc.code)
    is not a regular file, not a spec file FP108
    """
    where, _ = _regular_file(path, kind)
    try:
        with open(where, "rb") as handle:
            data = handle.read(kind.max_bytes + 1)
    except OSError as exc:
        raise kind.fail(
            kind.code, where, f"cannot read the {kind.noun}", exc.strerror or str(exc), kind.fix
        ) from None
    if len(data) > kind.max_bytes:
        raise _too_large(where, kind, f"more than {kind.max_bytes} bytes")
    return data


def _decode(data: bytes, where: str, kind: FileKind) -> str:
    if kind.decode_fallback:
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise kind.fail(
            kind.code,
            where,
            f"the {kind.noun} is not UTF-8 text",
            f"byte {exc.start}: 0x{data[exc.start]:02x}",
            "save it as UTF-8",
        ) from None


def read_text(path: str | os.PathLike[str], kind: FileKind) -> str:
    """The UTF-8 text of a regular file no larger than the kind's cap (a BOM is dropped).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "latin1.yaml")
    ...     _ = open(path, "wb").write(b"name: caf\\xe9\\n")
    ...     try:
    ...         read_text(path, FileKind("spec", FabricPlanError, "FP108"))
    ...     except FabricPlanError as exc:
    ...         print(exc.what, exc.value)
    the spec is not UTF-8 text byte 9: 0xe9
    """
    return _decode(read_bytes(path, kind), os.fspath(path), kind)


def iter_lines(path: str | os.PathLike[str], kind: FileKind) -> Iterator[str]:
    """The lines of a regular file, read a chunk at a time (newlines kept).

    Memory stays at one chunk plus the longest line, whatever the file's length; the size cap
    and the decoding rule of the kind apply as in :func:`read_text`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "log.txt")
    ...     _ = open(path, "wb").write(b"a\\nb\\r\\nc")
    ...     list(iter_lines(path, FileKind("log", FabricPlanError, "FP108")))
    ['a\\n', 'b\\r\\n', 'c']
    """
    where, _ = _regular_file(path, kind)
    decoder = codecs.getincrementaldecoder("utf-8")("replace" if kind.decode_fallback else "strict")
    total = 0
    first = True
    pending = ""
    try:
        handle = open(where, "rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise kind.fail(
            kind.code, where, f"cannot read the {kind.noun}", exc.strerror or str(exc), kind.fix
        ) from None
    try:
        while True:
            chunk = handle.read(READ_CHUNK_BYTES)
            total += len(chunk)
            if total > kind.max_bytes:
                raise _too_large(where, kind, f"more than {kind.max_bytes} bytes")
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                raise kind.fail(
                    kind.code,
                    where,
                    f"the {kind.noun} is not UTF-8 text",
                    f"near byte {total - len(chunk) + exc.start}",
                    "save it as UTF-8",
                ) from None
            if first:
                text = text.removeprefix("\ufeff")
                first = False
            pending += text
            if chunk and "\n" not in text and "\r" not in text:
                continue  # still inside one line: splitting it again each chunk is quadratic
            lines = pending.splitlines(keepends=True)
            # A last line ending in "\r" may be the first half of a "\r\n" cut by the chunk.
            open_end = lines and (not lines[-1].endswith(("\n", "\r")) or lines[-1][-1] == "\r")
            pending = lines.pop() if open_end and chunk else ""
            yield from lines
            if not chunk:
                break
        if pending:
            yield pending
    finally:
        handle.close()


def _yaml_problem(
    where: str, kind: FileKind, line: int | None, what: str, value: Any, fix: str
) -> FabricPlanError:
    at = f"{where}:{line}" if line is not None else where
    return kind.fail(kind.yaml_code or kind.code, at, what, value, fix)  # type: ignore[no-any-return]


_NUMBER_TAGS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}


def _check_tree(root: yaml.Node, where: str, kind: FileKind) -> None:
    """Depth, expanded size, cycles, duplicate keys and number lengths, without recursion."""
    expanded: dict[int, int] = {}
    on_path: set[int] = set()
    # Iterative post-order walk: (node, depth, children visited?).
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        line = node.start_mark.line + 1
        if done:
            on_path.discard(key)
            children = _children(node)
            size = 1 + sum(expanded[id(child)] for child in children)
            if size > MAX_YAML_NODES:
                raise _yaml_problem(
                    where,
                    kind,
                    line,
                    "expands to too many YAML nodes (aliases counted at each use)",
                    f"more than {MAX_YAML_NODES}",
                    "write the values out instead of through aliases",
                )
            expanded[key] = size
            continue
        if key in expanded:
            continue
        if key in on_path:
            raise _yaml_problem(
                where, kind, line, "a YAML alias refers to itself", None, "remove the recursion"
            )
        if depth > MAX_YAML_DEPTH:
            raise _yaml_problem(
                where,
                kind,
                line,
                "nests too deep",
                f"more than {MAX_YAML_DEPTH} levels",
                "flatten the document",
            )
        if isinstance(node, yaml.ScalarNode):
            if (
                node.tag in _NUMBER_TAGS
                and sum(c.isdigit() for c in node.value) > MAX_NUMBER_DIGITS
            ):
                raise _yaml_problem(
                    where,
                    kind,
                    line,
                    "number too long",
                    f"{len(node.value)} characters",
                    f"use at most {MAX_NUMBER_DIGITS} digits",
                )
            expanded[key] = 1
            continue
        if isinstance(node, yaml.MappingNode):
            _check_keys(node, where, kind)
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_keys(node: yaml.MappingNode, where: str, kind: FileKind) -> None:
    seen: set[tuple[str, str]] = set()
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = (key_node.tag, key_node.value)
        if key in seen:
            raise _yaml_problem(
                where,
                kind,
                key_node.start_mark.line + 1,
                "duplicate key",
                key_node.value,
                "keep one",
            )
        seen.add(key)


def load_yaml(text: str, where: str, kind: FileKind) -> Any:
    """One YAML document, checked before it is built (see the module docstring).

    Examples
    --------
    >>> kind = FileKind("spec", FabricPlanError, "FP108", yaml_code="FP106")
    >>> load_yaml("a: &x [1]\\nb: *x\\n", "s.yaml", kind)
    {'a': [1], 'b': [1]}
    >>> try:
    ...     load_yaml("[" * 100 + "]" * 100, "s.yaml", kind)
    ... except FabricPlanError as exc:
    ...     print(exc)
    s.yaml:1: nests too deep ('more than 64 levels'); flatten the document [FP106]
    """
    loader = SafeYamlLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise _yaml_problem(
                where,
                kind,
                mark.line + 1 if mark is not None else None,
                f"not valid YAML: {problem}",
                None,
                "fix the syntax at that line",
            ) from None
        except RecursionError:
            raise _yaml_problem(
                where, kind, None, "nests too deep", None, "flatten the document"
            ) from None
        if node is None:
            return None
        _check_tree(node, where, kind)
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise _yaml_problem(
                where,
                kind,
                mark.line + 1 if mark is not None else None,
                f"not valid YAML: {problem}",
                None,
                "fix the value at that line",
            ) from None
        except (ValueError, OverflowError) as exc:
            raise _yaml_problem(
                where, kind, None, "a value cannot be read", str(exc)[:80], "fix the value"
            ) from None
    finally:
        loader.dispose()


def _json_int(text: str) -> int:
    if sum(c.isdigit() for c in text) > MAX_NUMBER_DIGITS:
        raise ValueError(f"number too long ({len(text)} characters)")
    return int(text)


def _json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def load_json(text: str, where: str, kind: FileKind) -> Any:
    """A JSON document; ``NaN``/``Infinity``, overlong integers and runaway nesting are refused.

    Examples
    --------
    >>> kind = FileKind("config", FabricPlanError, "FP108", yaml_code="FP106")
    >>> load_json('{"a": [1, 2.5]}', "c.json", kind)
    {'a': [1, 2.5]}
    >>> try:
    ...     load_json('{"a": NaN}', "c.json", kind)
    ... except FabricPlanError as exc:
    ...     print(exc.what, exc.value)
    not valid JSON NaN is not a number JSON allows
    """
    try:
        return json.loads(text, parse_int=_json_int, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise kind.fail(
            kind.yaml_code or kind.code,
            f"{where}:{exc.lineno}:{exc.colno}",
            "not valid JSON",
            exc.msg,
            "fix the syntax at that line",
        ) from None
    except ValueError as exc:
        raise kind.fail(
            kind.yaml_code or kind.code, where, "not valid JSON", str(exc), "fix the value"
        ) from None
    except RecursionError:
        raise kind.fail(
            kind.yaml_code or kind.code, where, "nests too deep", None, "flatten the document"
        ) from None


def read_yaml_file(path: str | os.PathLike[str], kind: FileKind) -> Any:
    """:func:`read_text` then :func:`load_yaml`, naming the file in every message."""
    return load_yaml(read_text(path, kind), os.fspath(path), kind)
