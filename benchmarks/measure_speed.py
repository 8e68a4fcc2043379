"""Reading very long benchmark logs: time and peak memory of ``read_bench_file`` on generated
nccl-tests and perftest logs of many rows, rccl-tests CSV and JSON lines files of many records,
and a log of many NCCL INFO lines around one table.

Each read runs in its own process (peak RSS is that process's). ``--src DIR`` reads with another
checkout's sources (e.g. the previous version, for a before/after on the same machine).
Run: ``python benchmarks/measure_speed.py [--rows N] [--src DIR] [--only NAME]`` (``--only``
reads the logs whose name contains NAME, e.g. ``rccl``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

NCCL_HEAD = (
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5"
    " iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n"
    "#                                                              out-of-place"
    "                       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
    "            (us)  (GB/s)  (GB/s)\n"
)
NCCL_FOOT = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.5\n"
PERFTEST_HEAD = (
    "---------------------------------------------------------------------------------------\n"
    "                    RDMA_Write BW Test\n"
    " Number of qps   : 1\t\tTransport type : IB\n"
    " Mtu             : 4096[B]\n Link type       : IB\n"
    "---------------------------------------------------------------------------------------\n"
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
)
PERFTEST_FOOT = (
    "---------------------------------------------------------------------------------------\n"
)
INFO = "node{0}:1234:1234 [0] NCCL INFO Channel {1:02d}/32 : 0 1 2 3 4 5 6 7 via P2P/IPC\n"

READ = """
import resource, sys, time
from fabricplan.measure.reader import read_bench_file
started = time.perf_counter()
record = read_bench_file(sys.argv[1])
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime
print(seconds, usage.ru_maxrss * 1024, len(record.measurements), cpu)
"""


def _write_logs(folder: Path, rows: int) -> dict[str, Path]:
    nccl, perftest, info = folder / "nccl.log", folder / "perftest.log", folder / "info.log"
    with nccl.open("w") as out:
        out.write(NCCL_HEAD)
        for i in range(rows):
            size = 8 * (i + 1)
            out.write(
                f"{size:>12} {size // 4:>13}     float     sum      -1    {10 + i * 1e-3:7.2f}"
                "    0.00    0.00      0    10.31    0.00    0.00      0\n"
            )
        out.write(NCCL_FOOT)
    with perftest.open("w") as out:
        out.write(PERFTEST_HEAD)
        for i in range(rows):
            out.write(f" {2 * (i + 1):<10} 5000             0.13               0.13   \t\t 8.07\n")
        out.write(PERFTEST_FOOT)
    with info.open("w") as out:
        for i in range(rows):
            out.write(INFO.format(i % 64, i % 32))
        out.write(NCCL_HEAD)
        out.write(f"{1048576:>12} {262144:>13}     float     sum      -1    60.1   17.45   32.72")
        out.write("      0    59.8   17.53   32.87      0\n")
        out.write(NCCL_FOOT)
    csv_file, jsonl = folder / "rccl.csv", folder / "rccl.json"
    with csv_file.open("w") as out:
        out.write("name,size,type,redop,inPlace,time,algBw,busBw,#wrong,gpus\n")
        for i in range(rows):
            out.write(
                f'"AllReduce",{8 * (i + 1)},"float","sum",0,{10 + i * 1e-3:.3f},0.1,0.2,"0",8\n'
            )
    with jsonl.open("w") as out:
        for i in range(rows):
            out.write(
                f'{{"name":"AllReduce","size":{8 * (i + 1)},"type":"float","redop":"sum",'
                f'"inPlace":0,"time":{10 + i * 1e-3:.3f},"algBw":0.1,"busBw":0.2,'
                '"#wrong":"0","gpus":8}\n'
            )
    return {
        "nccl-tests rows": nccl,
        "perftest rows": perftest,
        "NCCL INFO lines": info,
        "rccl-tests CSV rows": csv_file,
        "rccl-tests JSON lines": jsonl,
    }


def main() -> None:
    rows = int(sys.argv[sys.argv.index("--rows") + 1]) if "--rows" in sys.argv else 1_000_000
    src = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv else None
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": src or str(root / "src")}
    print("| log | lines | MiB | rows read | wall s | CPU s | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in _write_logs(Path(tmp), rows).items():
            if only not in name:
                continue
            lines = sum(1 for _ in path.open())
            out = subprocess.run(
                [sys.executable, "-c", READ, str(path)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            seconds, peak, read, cpu = float(out[0]), int(out[1]), int(out[2]), float(out[3])
            size = path.stat().st_size / 2**20
            print(
                f"| {name} | {lines:,} | {size:,.0f} | {read:,} | {seconds:.1f} | {cpu:.1f}"
                f" | {peak / 2**20:,.0f} |"
            )


if __name__ == "__main__":
    main()
