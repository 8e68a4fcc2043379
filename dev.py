#!/usr/bin/env python3
"""Set up and run fabricplan with nothing but Python >= 3.11 and pip.

    python3 dev.py demo    # make .venv, install, run the main job on an example
    python3 dev.py test    # make .venv, install with test tools, run lint, types and all tests
    python3 dev.py bench   # run the benchmarks (speed and scale tables)

The virtual environment lives in .venv and is reinstalled when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if sys.platform == "win32" else "bin")
STAMP = VENV / ".fabricplan-installed"
DEMO_SPEC = "examples/training-2k/spec.yaml"


def _run(*cmd: str) -> None:
    print("+", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, cwd=ROOT, check=False)
    if result.returncode != 0:
        sys.exit(result.returncode)


def _ensure_venv() -> None:
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    if not (BIN / "python").exists():
        print(f"+ creating {VENV.name}", flush=True)
        venv.create(VENV, with_pip=True)
    _run(str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    print("+ installing fabricplan and its dependencies (a few minutes when new)", flush=True)
    _run(str(BIN / "python"), "-m", "pip", "install", "--progress-bar", "on", "-e", ".[dev]")
    STAMP.write_text(wanted)


def demo() -> None:
    _ensure_venv()
    _run(str(BIN / "fabricplan"), "compare", DEMO_SPEC)


def test() -> None:
    _ensure_venv()
    _run(str(BIN / "ruff"), "check", "src", "tests", "benchmarks", "dev.py")
    _run(str(BIN / "ruff"), "format", "--check", "src", "tests", "benchmarks", "dev.py")
    _run(str(BIN / "mypy"), "src")
    _run(str(BIN / "python"), "-m", "pytest")


def bench() -> None:
    _ensure_venv()
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        _run(str(BIN / "python"), str(script))


COMMANDS = {"demo": demo, "test": test, "bench": bench}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}}", file=sys.stderr)
        sys.exit(2)
    COMMANDS[sys.argv[1]]()
