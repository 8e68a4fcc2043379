"""A real Ray cluster head on loopback only, for joining it by address (``sweep --ray ADDRESS``).

Run as a script, it re-runs itself in new user, network and PID namespaces
(``unshare --user --map-root-user --net --pid --fork --mount-proc``), so that

- the only network interface is a private loopback: whatever Ray opens (the GCS, the raylet, the
  object manager, the client server, the workers' ports) can be reached from nowhere else, even
  where Ray binds a wildcard address;
- the script is PID 1 of its namespace: when it ends, the kernel kills every process still in it,
  so nothing is left running even if the script itself is killed;
- ``HOME`` is a fresh folder, so nothing of the head lands in the user's home (and, with no
  token there, Ray runs without token authentication: nothing outside can reach it anyway).

There it starts ``ray start --head`` (:data:`HEAD_CPUS` CPUs or ``--cpus``, no dashboard, a temp
folder of its own) in a process group of its own, runs the command given after ``--`` with
``{address}`` replaced by the head's ``127.0.0.1:PORT`` (the command joins the cluster as an
outside driver would), records the listening sockets seen while the command ran, then kills the
head's process group (by its id) and writes ``report.json`` into the work folder::

    python tests/ray_head.py [--cpus N] WORK -- fabricplan sweep s.yaml --vary ... --ray {address}

``--no-head`` runs the command alone in the namespaces (``sweep --ray`` then starts its own local
runtime there: Ray's servers bind every interface, and there the only one is loopback).

The namespaces need unprivileged user namespaces (``unshare`` of util-linux);
:func:`namespaces_work` says whether this machine has them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

UNSHARE = ["unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--mount-proc"]
"""A private user, network and PID namespace (and /proc of that PID namespace)."""
INSIDE = "FABRICPLAN_RAY_HEAD_INSIDE"
"""Set in the environment of the script's second run, inside the namespaces."""
HEAD_CPUS = 3
"""Logical CPUs of the head: not a core count of a 2-core machine, so that a driver that reports 3
CPUs is known to have joined this head and not started a runtime of its own."""
START_TIMEOUT_S = 180.0
COMMAND_TIMEOUT_S = 600.0
TIMEOUT_ENV = "FABRICPLAN_RAY_HEAD_TIMEOUT_S"
"""Overrides :data:`COMMAND_TIMEOUT_S` (a benchmark takes longer than a test)."""
POLL_S = 0.2
TCP_LISTEN = "0A"
"""The LISTEN state in /proc/net/tcp (include/net/tcp_states.h: TCP_LISTEN = 10)."""
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
"""Interface ioctls and flag of linux/sockios.h and linux/if.h."""


def namespaces_work() -> bool:
    """Whether this machine lets an unprivileged user make the namespaces (``unshare``)."""
    if shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run([*UNSHARE, "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _loopback_up() -> None:
    """Bring ``lo`` up (a new network namespace starts with it down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _address(hex_address: str) -> str:
    """``0100007F:1F90`` (/proc/net/tcp, little-endian words) as ``127.0.0.1:8080``."""
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    family = socket.AF_INET if len(words) == 4 else socket.AF_INET6
    return f"{socket.inet_ntop(family, words)}:{int(port, 16)}"


def listening() -> set[str]:
    """Every listening TCP socket of this network namespace, as ``address:port``."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == TCP_LISTEN:
                    found.add(_address(fields[1]))
    return found


def is_loopback(address: str) -> bool:
    """``127.0.0.0/8``, ``::1`` or ``::ffff:127.x.y.z``, given as ``address:port``.

    >>> [is_loopback(a) for a in ("127.0.0.1:1", "::1:2", "::ffff:127.0.0.1:3", "0.0.0.0:4")]
    [True, True, True, False]
    """
    host = address.rsplit(":", 1)[0]
    return host.startswith("127.") or host in ("::1",) or host.startswith("::ffff:127.")


def _processes() -> list[str]:
    """The command lines of every other process of this PID namespace."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                found.append(entry.joinpath("cmdline").read_bytes().replace(b"\0", b" ").decode())
    return [command for command in found if command.strip()]


def _stop(group: int) -> None:
    """Kill a process group (by its id): SIGTERM, then SIGKILL for what is left after 10 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(-1, os.WNOHANG)
        time.sleep(POLL_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


def _run(command: list[str], env: dict[str, str], work: Path, report: dict[str, Any]) -> None:
    """Run the command, noting every listening socket while it runs, its exit code and output."""
    seen = listening()
    started = time.monotonic()
    timeout_s = float(env.get(TIMEOUT_ENV, COMMAND_TIMEOUT_S))
    with open(work / "command.out", "w") as out, open(work / "command.err", "w") as err:
        run = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        deadline = started + timeout_s
        while run.poll() is None and time.monotonic() < deadline:
            seen |= listening()
            time.sleep(POLL_S)
        if run.poll() is None:
            run.kill()
        run.wait()
    report["command_s"] = round(time.monotonic() - started, 2)
    report["command_rc"] = run.returncode
    report["stdout"] = (work / "command.out").read_text()
    report["stderr"] = (work / "command.err").read_text()[-3000:]
    report["listening"] = sorted(seen)


def _inside(work: Path, command: list[str], cpus: int) -> dict[str, Any]:
    _loopback_up()
    report: dict[str, Any] = {"interfaces": [name for _, name in socket.if_nameindex()]}
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop(INSIDE, None)
    if cpus == 0:  # no head: the command alone (a local Ray runtime of its own, say)
        try:
            _run(command, env, work, report)
        finally:
            report["left_running"] = _processes()
        return report
    port = _free_port()
    address = f"127.0.0.1:{port}"
    ray_bin = str(Path(sys.executable).with_name("ray"))
    # Ray's socket paths must stay under 108 bytes: a short folder of its own.
    ray_temp = tempfile.mkdtemp(prefix="rayhead")
    head_log = open(work / "head.out", "w")  # noqa: SIM115 (a file: the daemons keep a pipe open)
    head = subprocess.Popen(
        [
            ray_bin,
            "start",
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            f"--num-cpus={cpus}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={ray_temp}",
        ],
        env=env,
        stdout=head_log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        started = time.monotonic()
        head.wait(timeout=START_TIMEOUT_S)
        head_log.close()
        report["head_start_s"] = round(time.monotonic() - started, 2)
        report["head_rc"] = head.returncode
        report["head_output"] = (work / "head.out").read_text()[-3000:]
        if head.returncode != 0:
            return report
        filled = [part.replace("{address}", address) for part in command]
        _run(filled, env, work, report)
        report["address"] = address
    finally:
        head_log.close()
        _stop(head.pid)  # the head's group: ray start set it up as the group leader
        time.sleep(1)
        report["left_running"] = _processes()
        shutil.rmtree(ray_temp, ignore_errors=True)
    return report


def main(argv: list[str]) -> int:
    given = list(argv)
    cpus = HEAD_CPUS
    if argv[:1] == ["--cpus"] and len(argv) > 1 and argv[1].isdigit():
        cpus, argv = int(argv[1]), argv[2:]
    elif argv[:1] == ["--no-head"]:
        cpus, argv = 0, argv[1:]
    if "--" not in argv or argv.index("--") != 1:
        print(
            "usage: ray_head.py [--cpus N | --no-head] WORK -- COMMAND ... ({address}: the head)",
            file=sys.stderr,
        )
        return 2
    work = Path(argv[0]).resolve()
    command = argv[2:]
    if os.environ.get(INSIDE) != "1":
        work.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, INSIDE: "1"}
        return subprocess.run(
            [*UNSHARE, sys.executable, str(Path(__file__).resolve()), *given], env=env
        ).returncode
    report = _inside(work, command, cpus)
    (work / "report.json").write_text(json.dumps(report, indent=1))
    shown = {k: v for k, v in report.items() if k not in ("stderr", "head_output")}
    print(json.dumps(shown, indent=1))
    return 0 if report.get("command_rc") == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
