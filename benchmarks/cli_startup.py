"""CPU time of ``fabricplan --help``, ``--version`` and every command's own ``--help``.

Each line runs ``python -m fabricplan.cli.app ARGS`` ``--runs`` times in a fresh process and
prints the median, lowest and highest CPU time (user + system, from ``os.wait4``'s resource
usage, so a loaded machine's waiting for a core does not count) and the median wall time.

    PYTHONPATH=src .venv/bin/python benchmarks/cli_startup.py [--runs 7] [--limit-s 0.3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

from fabricplan.cli.commands import COMMANDS

LIMIT_S = 0.3
"""The goal (issue 17): every help and the version answer within this much CPU."""


def cpu_and_wall_s(args: list[str]) -> tuple[float, float]:
    """CPU (user + system) and wall seconds of one ``fabricplan ARGS`` process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "fabricplan.cli.app", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"fabricplan {' '.join(args)} failed")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--limit-s", type=float, default=LIMIT_S)
    options = parser.parse_args()
    lines = [["--help"], ["--version"]]
    lines += [[entry.name, "--help"] for entry in COMMANDS]
    lines += [["catalog", sub, "--help"] for sub in ("list", "show", "prices")]
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cpus,"
        f" load average {os.getloadavg()[0]:.1f}, {options.runs} runs each"
    )
    print(f"{'command':<28} {'cpu median s':>12} {'min':>7} {'max':>7} {'wall median s':>13}")
    over = []
    for args in lines:
        cpu_and_wall_s(args)  # warm the file cache and the bytecode
        runs = [cpu_and_wall_s(args) for _ in range(options.runs)]
        cpu = [c for c, _ in runs]
        median = statistics.median(cpu)
        if median >= options.limit_s:
            over.append(" ".join(args))
        print(
            f"{' '.join(args):<28} {median:>12.3f} {min(cpu):>7.3f} {max(cpu):>7.3f}"
            f" {statistics.median(w for _, w in runs):>13.3f}"
        )
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    print(f"# over {options.limit_s} s of CPU: {', '.join(over) if over else 'none'}")


if __name__ == "__main__":
    main()
