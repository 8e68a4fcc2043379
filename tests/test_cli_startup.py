"""The command line answers at once: ``fabricplan --help`` lists every command from the command
table without importing a command module, every command's own ``--help`` imports no model,
numpy, numba, YAML or rich (about 0.15 s of CPU instead of 0.5-1.9 s; benchmarks/cli_startup.py),
the table says what the modules register, and a run whose numba kernels are not compiled yet
says so first."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from fabricplan.cli.app import create_app
from fabricplan.cli.commands import COMMANDS, load_command
from fabricplan.sim.kernel_cache import compile_notice, uncompiled_in, watching_compilation

SRC = Path(__file__).resolve().parents[1] / "src"


def _first_paragraph(help_text: str) -> str:
    return inspect.cleandoc(help_text).split("\n\n")[0].strip()


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda e: e.name)
def test_the_table_says_what_each_module_registers(entry: object) -> None:
    command = load_command(entry)  # type: ignore[arg-type]
    assert command.name == entry.name  # type: ignore[attr-defined]
    assert _first_paragraph(command.help or "") == entry.summary  # type: ignore[attr-defined]


def test_every_registered_command_is_in_the_table() -> None:
    modules = {e.module for e in COMMANDS}
    registered: set[str] = set()
    for module in modules:
        app = typer.Typer()

        @app.callback()
        def _group() -> None:
            """x"""

        __import__(f"fabricplan.cli.{module}", fromlist=["register"]).register(app)
        registered |= set(typer.main.get_group(app).commands)
    assert registered == {e.name for e in COMMANDS}


HELP_IMPORTS = textwrap.dedent(
    """
    import sys
    from typer.testing import CliRunner
    from fabricplan.cli.app import create_app
    result = CliRunner().invoke(create_app(), ARGS)
    assert result.exit_code == 0, result.output
    heavy = sorted(m for m in sys.modules
                   if m.split(".")[0] in ("numpy", "numba", "pydantic", "yaml", "rich")
                   or m.startswith("fabricplan.cli.") and m.endswith("_cmd"))
    print(repr(heavy))
    print(result.output)
    """
)


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_import_no_command_module_and_no_model(args: list[str]) -> None:
    script = HELP_IMPORTS.replace("ARGS", repr(args))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    heavy, _, output = done.stdout.partition("\n")
    assert heavy == "[]"
    if args == ["--help"]:
        for entry in COMMANDS:
            assert entry.name in output
        words = " ".join(output.split())
        for entry in COMMANDS:
            assert " ".join(entry.summary.split()) in words  # whole, not cut at a full stop
    else:
        assert output.startswith("fabricplan ")


HEAVY = ("numpy", "numba", "pydantic", "yaml", "rich")
"""What a command's own ``--help`` must not import: each took 0.1-0.6 s of CPU."""

COMMAND_HELP_IMPORTS = textwrap.dedent(
    """
    import sys
    from typer.testing import CliRunner
    from fabricplan.cli.app import create_app
    for args in ARGS:
        result = CliRunner().invoke(create_app(), [*args, "--help"])
        assert result.exit_code == 0, (args, result.output)
        assert "Usage:" in result.output and "--help" in result.output, result.output
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    print(repr(heavy))
    """
)


def test_every_commands_own_help_imports_no_model_numpy_numba_yaml_or_rich() -> None:
    args = [[entry.name] for entry in COMMANDS] + [["catalog", c] for c in ("list", "show")]
    script = COMMAND_HELP_IMPORTS.replace("ARGS", repr(args)).replace("HEAVY", repr(HEAVY))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_command_runs_through_the_lazy_group(tmp_path: Path) -> None:
    out = tmp_path / "spec.yaml"
    result = CliRunner().invoke(create_app(), ["init", str(out)])
    assert result.exit_code == 0, result.output
    assert "cluster:" in out.read_text()


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = CliRunner().invoke(create_app(), ["comprae"])
    assert result.exit_code == 2
    assert "compare" in result.output


def test_a_kernel_without_cached_machine_code_is_counted_until_it_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "kernelpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "hot.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert uncompiled_in("kernelpkg") == 1
    from kernelpkg.hot import twice  # type: ignore[import-not-found]

    assert twice(21) == 42  # compiles and writes the cache
    assert uncompiled_in("kernelpkg") == 0


def test_no_notice_for_a_level_without_kernels() -> None:
    assert compile_notice("analytic") is None
    assert compile_notice("fake") is None


def test_the_compilation_is_watched_until_every_function_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "watchedpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "hot.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef thrice(x):\n    return 3 * x\n\n"
        "@njit(cache=True)\ndef plus_one(x):\n    return x + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[tuple[int, int]] = []
    with watching_compilation("watchedpkg", lambda done, total: seen.append((done, total)), 0.01):
        from watchedpkg.hot import thrice  # type: ignore[import-not-found]

        assert thrice(14) == 42  # compiles one of the two and writes its cache
    assert seen[-1] == (1, 2)  # counted on leaving: the other one was never called
    assert {total for _, total in seen} == {2}


COMPARE_IMPORTS = textwrap.dedent(
    """
    import sys
    from typer.testing import CliRunner
    from fabricplan.cli.app import create_app
    result = CliRunner().invoke(create_app(), ["compare", SPEC, "-f", "json"])
    assert result.exit_code == 0, result.output
    print(repr(sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "rich")
                      or m in ("fabricplan.sim.flow.solver", "fabricplan.lint.model"))))
    """
)


def test_the_analytic_compare_imports_no_simulator_numba_lint_model_or_rich(
    tmp_path: Path,
) -> None:
    """Issue 10: the whole ``compare -f json`` runs in under a second only without the flow
    solver and numba (the decision asks ``sim.flow.duration`` for its cluster sizes), the
    config linter's model and rich, which it does not use (docs/performance.md)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 64}\nfabric: {technologies: [infiniband, roce_v2]}\n")
    done = subprocess.run(
        [sys.executable, "-c", COMPARE_IMPORTS.replace("SPEC", repr(str(spec)))],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_the_command_line_asks_openblas_for_one_thread_unless_the_user_chose() -> None:
    """fabricplan calls no BLAS routine; OpenBLAS's thread per core cost CPU at every start."""
    from fabricplan.cli.app import _quiet_blas

    environ: dict[str, str] = {}
    _quiet_blas(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "1"}
    chosen = {"OPENBLAS_NUM_THREADS": "4"}
    _quiet_blas(chosen)
    assert chosen == {"OPENBLAS_NUM_THREADS": "4"}


def test_the_console_script_sets_it_before_numpy_loads(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from fabricplan.cli import app\n"
        "sys.argv = ['fabricplan', '--version']\n"
        "try:\n"
        "    app.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "1 False"


EXIT_AT_ONCE = textwrap.dedent(
    """
    import atexit, sys, threading, time
    from fabricplan.cli.guard import exit_at_once
    atexit.register(lambda: print("atexit ran"))
    def run():
        print("answer", end="")
        sys.stderr.write("note")
        if CODE:
            sys.exit(CODE)
    if THREAD:
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread done"))).start()
    exit_at_once(run)
    print("not reached")
    """
)


@pytest.mark.parametrize(("code", "thread"), [(0, False), (2, False), (0, True)])
def test_the_fast_exit_flushes_runs_atexit_and_keeps_the_code(code: int, thread: bool) -> None:
    """The console script ends without the interpreter's teardown (0.13-0.2 s of CPU after a
    100k compare), but as a normal exit is seen: output flushed, atexit handlers run, the
    command's exit code; a thread still running is waited for (the normal exit)."""
    script = EXIT_AT_ONCE.replace("CODE", str(code)).replace("THREAD", str(thread))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == code
    assert done.stderr == "note"
    if thread:  # the normal exit: the thread ends first, then the atexit handlers
        assert done.stdout == "answerthread done\natexit ran\n"
    else:
        assert done.stdout == "answeratexit ran\n"
