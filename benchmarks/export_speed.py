"""How long each export format takes, and the peak memory of the process, for a 16,384-GPU design.

Three fabrics of 16,384 H100 GPUs (2,048 nodes, 8 x 400G NICs): InfiniBand on QM9700 (64-port
NDR), RoCEv2 on the Tomahawk-5 box at 400G, and DDC (Jericho3-AI leaves, Ramon3 fabric elements)
in two planes. Each format runs in a fresh Python process, so that the
peak RSS it reports is that format's alone: seconds are those of ``export_files`` from the
validated scenario (design and expansion included); the baseline row is the process after
imports and the spec alone. Prints a Markdown table; docs/performance.md records it.

    PYTHONPATH=src .venv/bin/python benchmarks/export_speed.py
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

from fabricplan.export.formats import EXPORT_FORMATS

GPUS = 16_384
FABRICS = {
    "infiniband": {"technologies": ["infiniband"], "switch": {"infiniband": "qm9700"}},
    "roce_v2": {"technologies": ["roce_v2"], "switch": {"roce_v2": "ufispace-s9321-64e"}},
    # A scheduled fabric: one two-stage plane reaches 9,216 host ports at 400G, so two planes.
    "ddc": {"technologies": ["ddc"], "planes": 2},
}

CHILD = """
import json, resource, sys, time
from fabricplan.errors import FabricPlanError
from fabricplan.export.formats import export_files
from fabricplan.spec import parse_spec
technology, fmt, fabric, gpus = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
valid = parse_spec({"cluster": {"gpus": gpus}, "fabric": fabric})
out = {"code": None}
if fmt != "baseline":
    start = time.perf_counter()
    try:
        files = export_files(valid, technology, fmt)
        out["seconds"] = time.perf_counter() - start
        out["files"] = len(files)
        out["bytes"] = sum(len(c.encode() if isinstance(c, str) else c) for c in files.values())
    except FabricPlanError as exc:
        out["code"] = exc.code
out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(technology: str, fmt: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, technology, fmt, json.dumps(FABRICS[technology]), str(GPUS)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    data: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    load = os.getloadavg()[0]
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, load {load:.1f}; {GPUS:,} GPUs"
    )
    print()
    print("| technology | format | files | bytes | seconds | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for technology in FABRICS:
        base = run(technology, "baseline")
        print(f"| {technology} | (imports + spec) | - | - | - | {base['rss_mib']:.0f} |")
        for fmt in EXPORT_FORMATS:
            data = run(technology, fmt)
            if data["code"]:
                print(f"| {technology} | {fmt} | - | - | not applicable ({data['code']}) | - |")
                continue
            print(
                f"| {technology} | {fmt} | {data['files']} | {data['bytes']:,} |"
                f" {data['seconds']:.2f} | {data['rss_mib']:.0f} |"
            )


if __name__ == "__main__":
    main()
