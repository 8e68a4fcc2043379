"""One example per error code of docs/errors.md: run it, judge it, and write it into the doc.

Each code has a small YAML file ``tests/data/error_examples/FPnnn.yaml`` of one of these kinds:

``cli``
    ``args`` of ``fabricplan`` run in an empty folder holding ``files`` (text, ``!!binary``
    bytes, ``{size: N, head: TEXT, fill: C}`` for a file of N bytes, sparse without ``fill``,
    or ``{folder: true}``), after the ``setup`` commands, with ``stdin``; it must exit with
    ``exit`` (default 2) and print one line on stderr, the message, ending in ``[FPnnn]``.
``finding``
    a ``cli`` run that succeeds (``exit`` 0) and whose JSON output holds a finding of the code.
``web``
    a ``request`` (``method``, ``path``, ``json`` or ``content``, ``headers``) to the web app
    built with ``settings``; it must answer ``status`` (default 422) with the code and one line.
``call``
    ``python`` statements that raise the error (or set ``line`` to an answer's error line):
    for codes reached only through the Python API, only after heavy work, or only by a bug
    (``guard`` then says why no user input reaches it, and ``raised_in`` lists the only source
    files that may raise it). ``note`` says how a user meets the code.
``retired``
    ``reason``: no source file raises the code any more.

``python tests/error_examples.py --write`` runs every example and rewrites the examples section of
docs/errors.md; ``tests/test_error_examples.py`` checks that the doc equals what it would write.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "fabricplan"
EXAMPLES = Path(__file__).resolve().parent / "data" / "error_examples"
DOC = ROOT / "docs" / "errors.md"
BEGIN = "<!-- examples: written by `python tests/error_examples.py --write`; do not edit below -->"
KINDS = frozenset(("cli", "finding", "web", "call", "retired"))
KEYS = frozenset(
    (
        "kind",
        "args",
        "setup",
        "files",
        "stdin",
        "exit",
        "request",
        "settings",
        "status",
        "python",
        "guard",
        "raised_in",
        "reason",
        "note",
    )
)
SHAPE = re.compile(r"^.+?: .+; .+ \[FP\d{3,5}\]$")
"""The one line of an error: ``where: what (value); fix [CODE]``."""


@dataclass(frozen=True)
class Example:
    """One code's example, as its YAML file states it."""

    code: str
    kind: str
    args: tuple[str, ...] = ()
    setup: tuple[tuple[str, ...], ...] = ()
    """Commands run first in the same folder (each must succeed), e.g. a sweep to resume."""
    files: dict[str, Any] = field(default_factory=dict)
    stdin: str | None = None
    exit: int = 2
    request: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    status: int = 422
    python: str = ""
    guard: str = ""
    raised_in: tuple[str, ...] = ()
    reason: str = ""
    note: str = ""


@dataclass(frozen=True)
class Outcome:
    """What running an example printed: its exit code (HTTP status for the web) and lines."""

    exit: int
    lines: tuple[str, ...]
    """stderr of a command, the error of a web answer or a call, the finding's line."""
    problem: str = ""
    """Why the run does not count as the example (a traceback, a wrong exit), empty when it does."""

    def message(self, code: str) -> str:
        found = [line for line in self.lines if line.endswith(f"[{code}]")]
        return found[0] if found else ""


def load(path: Path) -> Example:
    """The example in ``path`` (named after its code)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: not a mapping")
    unknown = set(data) - KEYS
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {sorted(unknown)}")
    if data.get("kind") not in KINDS:
        raise ValueError(f"{path.name}: kind is not one of {sorted(KINDS)}")
    data["args"] = tuple(str(a) for a in data.get("args", ()))
    data["setup"] = tuple(tuple(str(a) for a in cmd) for cmd in data.get("setup", ()))
    data["raised_in"] = tuple(data.get("raised_in", ()))
    if data["kind"] == "finding":
        data.setdefault("exit", 0)
    return Example(code=path.stem, **data)


def examples() -> dict[str, Example]:
    """Every example, by code."""
    return {p.stem: load(p) for p in sorted(EXAMPLES.glob("FP*.yaml"))}


def code_order(code: str) -> int:
    return int(code[2:])


@contextlib.contextmanager
def _folder(files: dict[str, Any]) -> Iterator[Path]:
    """An empty folder holding ``files``, as the working directory."""
    with tempfile.TemporaryDirectory(prefix="fp-example-") as name:
        folder = Path(name)
        for rel, content in files.items():
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, dict) and "size" in content:
                with open(target, "wb") as out:  # sparse: zeros after the head cost no disk
                    head = str(content.get("head", "")).encode("utf-8")
                    out.write(head)
                    if "fill" in content:  # or the rest filled with one character
                        fill = str(content["fill"]).encode("utf-8")
                        out.write(fill * (int(content["size"]) - len(head)))
                    out.truncate(int(content["size"]))
            elif isinstance(content, dict) and set(content) == {"folder"}:
                target.mkdir()
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(str(content), encoding="utf-8")
        with contextlib.chdir(folder):
            yield folder


def _local(text: str, folder: Path) -> str:
    """``text`` without the temporary folder's name (the doc names files as the example does)."""
    for name in {str(folder.resolve()), str(folder)}:
        text = text.replace(name + os.sep, "").replace(name, ".")
    return text


_APP: Any = None


def _no_compilation(level: str) -> None:
    """Stands for :func:`fabricplan.cli.notice.announce_compilation` while examples run."""


def _cli(args: tuple[str, ...], stdin: str | None) -> tuple[int, str, str, BaseException | None]:
    global _APP
    from typer.testing import CliRunner

    from fabricplan.cli.app import create_app

    if _APP is None:
        _APP = create_app()
    # The notice that compiles a simulation level's kernels ahead of a run is not part of any
    # error, and compiling the packet level takes about 40 s on an empty numba cache.
    with mock.patch("fabricplan.cli.notice.announce_compilation", _no_compilation):
        result = CliRunner().invoke(_APP, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr, result.exception


def _findings(doc: Any, code: str) -> list[str]:
    """Every finding of ``code`` in a JSON document, as ``severity: message [code]``."""
    if isinstance(doc, dict):
        if doc.get("code") == code and isinstance(doc.get("message"), str):
            return [f"{doc.get('severity', 'finding')}: {doc['message']} [{code}]"]
        return [line for value in doc.values() for line in _findings(value, code)]
    if isinstance(doc, list):
        return [line for value in doc for line in _findings(value, code)]
    return []


def _run_cli(example: Example) -> Outcome:
    with _folder(example.files) as folder:
        for command in example.setup:
            done = _cli(command, None)
            if done[0] != 0:
                return Outcome(done[0], (), f"setup {command} failed: {done[2][-400:]}")
        exit_code, stdout, stderr, exc = _cli(example.args, example.stdin)
        lines = tuple(_local(line, folder) for line in stderr.splitlines() if line.strip())
        problem = ""
        if exc is not None and not isinstance(exc, SystemExit):
            tb = "".join(traceback.format_exception(exc))
            problem = f"raised {type(exc).__name__}: {exc}\n{tb[-1500:]}"
        elif exit_code != example.exit:
            problem = f"exit {exit_code}, not {example.exit}: {stderr[-400:]} {stdout[-400:]}"
        elif example.kind == "finding":
            try:
                lines = tuple(_findings(json.loads(stdout), example.code)[:1])
            except json.JSONDecodeError:
                problem = f"the output is not JSON: {stdout[:300]}"
        elif len(lines) != 1:
            problem = f"{len(lines)} lines on stderr, not one: {stderr[-600:]}"
        return Outcome(exit_code, lines, problem)


_CLIENTS: dict[str, Any] = {}


def _run_web(example: Example) -> Outcome:
    from fastapi.testclient import TestClient

    from fabricplan.web.app import create_app
    from fabricplan.web.limit import WebSettings

    key = json.dumps(example.settings, sort_keys=True)
    if key not in _CLIENTS:
        _CLIENTS[key] = TestClient(create_app(WebSettings(**example.settings)))
    client = _CLIENTS[key]
    request = dict(example.request)
    method = request.pop("method", "POST")
    path = request.pop("path")
    answer = client.request(method, path, **request)
    try:
        body = answer.json()
    except ValueError:
        return Outcome(answer.status_code, (), f"not JSON: {answer.text[:300]}")
    line = body.get("error", "") if isinstance(body, dict) else ""
    problem = ""
    if answer.status_code != example.status:
        problem = f"HTTP {answer.status_code}, not {example.status}: {answer.text[:400]}"
    elif body.get("code") != example.code or "\n" in line:
        problem = f"answer {body}"
    return Outcome(answer.status_code, (line,) if line else (), problem)


def _run_call(example: Example) -> Outcome:
    from fabricplan.errors import FabricPlanError

    space: dict[str, Any] = {"__name__": "example"}
    with _folder(example.files) as folder:
        try:
            exec(compile(example.python, f"{example.code}.yaml", "exec"), space)
        except FabricPlanError as exc:
            return Outcome(2, (_local(str(exc), folder),))
        except Exception as exc:  # reported as the example's problem
            tb = "".join(traceback.format_exception(exc))
            return Outcome(1, (), f"raised {type(exc).__name__}: {exc}\n{tb[-1500:]}")
    if isinstance(space.get("line"), str):  # an error that is an answer, not an exception
        return Outcome(0, (space["line"],))
    return Outcome(0, (), "raised nothing")


_OUTCOMES: dict[str, Outcome] = {}


def run(example: Example) -> Outcome:
    """Run ``example`` once (its outcome is kept for the rest of the process)."""
    key = repr(example)
    if key not in _OUTCOMES:
        runner = {"cli": _run_cli, "finding": _run_cli, "web": _run_web, "call": _run_call}
        if example.kind == "retired":
            _OUTCOMES[key] = Outcome(0, ())
        else:
            outcome = runner[example.kind](example)
            if not outcome.problem and not outcome.message(example.code):
                outcome = Outcome(
                    outcome.exit,
                    outcome.lines,
                    f"no line ends in [{example.code}]: {outcome.lines}",
                )
            _OUTCOMES[key] = outcome
    return _OUTCOMES[key]


def _shell_word(word: str) -> str:
    return word if re.fullmatch(r"[\w@%+=:,./-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def _file_lines(name: str, content: Any) -> list[str]:
    if isinstance(content, dict) and "size" in content:
        head = content.get("head")
        shown = str(head).replace("\\", "\\\\").replace("\n", "\\n")
        start = [f"$ printf {_shell_word(shown)} > {name}"] if head else []
        if "fill" in content:
            fill = _shell_word(str(content["fill"]))
            return [*start, f"$ (fill the file with {fill} up to {content['size']} bytes)"]
        return [*start, f"$ truncate -s {content['size']} {name}"]
    if isinstance(content, dict) and "folder" in content:
        return [f"$ mkdir {name}"]
    if isinstance(content, bytes):
        shown = "".join(
            chr(b) if 32 <= b < 127 and chr(b) not in "\\'%" else f"\\x{b:02x}" for b in content
        )
        return [f"$ printf '{shown}' > {name}"]
    text = str(content)
    if len(text.splitlines()) > 40:
        return [f"$ cat {name}   # {len(text.splitlines())} lines, see the example file"]
    return [f"$ cat {name}", *text.rstrip("\n").splitlines()]


def render_one(example: Example, outcome: Outcome) -> list[str]:
    """The example's part of the doc: its input and the message it printed."""
    out = [f"### {example.code}", ""]
    message = outcome.message(example.code)
    if example.kind == "retired":
        return [*out, f"Retired: {example.reason.strip()}", ""]
    if example.note:
        out += [example.note.strip(), ""]
    if example.kind in ("cli", "finding"):
        out.append("```console")
        for name, content in example.files.items():
            out += _file_lines(name, content)
        for before in example.setup:
            out.append("$ " + " ".join(_shell_word(a) for a in ("fabricplan", *before)))
            out.append("(exit 0)")
        command = " ".join(_shell_word(a) for a in ("fabricplan", *example.args))
        if example.stdin is not None:
            command = f"$ printf {_shell_word(example.stdin)} | {command}"
        else:
            command = f"$ {command}"
        out.append(command)
        if example.kind == "finding":
            out += [f"(exit {outcome.exit}; the finding in its JSON output:)", message]
        else:
            out += [message, f"(exit {outcome.exit})"]
        out.append("```")
    elif example.kind == "web":
        request = dict(example.request)
        method = request.pop("method", "POST")
        path = request.pop("path")
        body = request.get("json")
        shown = json.dumps(body) if body is not None else request.get("content", "")
        headers = request.get("headers", {})
        settings = ", ".join(f"{k}={v!r}" for k, v in example.settings.items())
        out.append("```text")
        if settings:
            out.append(f"(server: {settings})")
        for name, value in headers.items():
            out.append(f"{name}: {value}")
        out.append(f"{method} {path} {shown}".rstrip())
        out += [f"HTTP {outcome.exit}: {message}", "```"]
    else:
        if example.guard:
            out += [f"No user input reaches it: {example.guard.strip()}", ""]
        out.append("```python")
        for line in example.python.rstrip().splitlines():
            out.append(f"... {line}" if line[:1].isspace() else f">>> {line}")
        if re.search(r"^line = ", example.python, re.MULTILINE):
            out.append(">>> print(line)")
        out += [message, "```"]
    return [*out, ""]


def render(found: dict[str, Example]) -> str:
    """The examples section of docs/errors.md."""
    lines = [
        BEGIN,
        "",
        "## Examples: one input per code and the line it prints",
        "",
        "Each input is the smallest one found that reaches the code; the line below it is what",
        "fabricplan printed (`tests/test_error_examples.py` runs every example and checks this",
        "section; the inputs are `tests/data/error_examples/FPnnn.yaml`). A command runs in an",
        "empty folder holding the files shown; a web request goes to `fabricplan serve` (HTTP",
        "status and the answer's `error`); a code that only the Python API reaches, or only a",
        "bug, is shown as the Python call that raises it, with the reason no command does.",
        "",
    ]
    for code in sorted(found, key=code_order):
        lines += render_one(found[code], run(found[code]))
    return "\n".join(lines).rstrip("\n") + "\n"


def written(doc: str, found: dict[str, Example]) -> str:
    """``doc`` with its examples section replaced by the one ``found`` renders."""
    head = doc.split(BEGIN)[0].rstrip("\n")
    return head + "\n\n" + render(found)


def main(argv: list[str]) -> int:
    """``--write``: rewrite docs/errors.md; codes (``FP101 FP102``): show only their examples."""
    found = examples()
    only = [a for a in argv if a.startswith("FP")]
    if only:
        for code in only:
            start = time.perf_counter()
            outcome = run(found[code])
            took = time.perf_counter() - start
            print("\n".join(render_one(found[code], outcome)), outcome.problem, f"{took:.2f} s")
        return 0
    bad = {c: run(e).problem for c, e in found.items() if run(e).problem}
    for code, problem in sorted(bad.items(), key=lambda kv: code_order(kv[0])):
        print(f"{code}: {problem}", file=sys.stderr)
    text = written(DOC.read_text(encoding="utf-8"), found)
    if "--write" in argv:
        DOC.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text.split(BEGIN)[1])
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
