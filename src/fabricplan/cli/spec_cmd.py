"""``fabricplan init``: write a commented starter spec."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fabricplan.cli.guard import check_output_format, check_output_path, fail, guarded, write_atomic

STARTER_SPEC = """\
# fabricplan cluster spec. Only `cluster.gpus` is required; everything else shows its default.
# Run: fabricplan compare {name}
name: my-cluster
cluster:
  gpus: 1024                # total GPUs
  gpus_per_node: 8
  nics_per_node: 8          # one scale-out NIC per GPU (a rail per NIC)
  nic_speed_gbps: 400
  gpu: h100                 # node model: a100 | h100 | h200 | b200 (see `fabricplan catalog list`)
  nic: auto                 # NIC catalog id, auto, or figures {speed_gbps, latency_ns, power_w}
  host: {}                  # where servers differ from the node's catalog entry:
                            #   {nic_slot: {generation: 4, lanes: 16}, gpu_nic_path: pxb}
fabric:
  technologies: [infiniband, roce_v2]   # also: roce_v1 (one L2 domain), spectrum_x, ddc, uec
  topology: auto            # auto (the design search tries both) | rail_optimized | fat_tree
  oversubscription: 1       # leaf downlinks : uplinks, built to the port
  tiers: auto               # auto | 2 | 3
  planes: auto              # auto | 1 | 2 | 4 | 8: independent parallel fabrics (multi-plane)
  switch: {}                # per technology: catalog id (pins it), auto (searched),
                            #   or {ports, port_speed_gbps, latency_ns}
  # cable_reach: {node_leaf_m: 3, leaf_spine_m: 30, spine_core_m: 100}   # fixed lengths
  #                         #   instead of the layout's
  sharp: auto               # auto (CollNet off, as plain NCCL) | on | off, or per technology
  lossless:                 # RoCE's lossless configuration as deployed (or: compare --config FILE)
    pfc: true
    ecn: true
    congestion_control: dcqcn   # dcqcn | none
    pfc_headroom_bytes: auto    # auto | bytes
    pfc_watchdog: true
  routing: {}               # per technology: ecmp | adaptive | static
layout:                     # where racks stand: cable lengths and reach classes come from it
  nodes_per_rack: auto      # auto: 4 servers of up to 8 GPUs; an NVL72 rack's trays
  row_length_racks: auto    # auto: a roughly square hall, 16-64 racks a row
  rack_width_m: 0.6
  row_pitch_m: 2.4          # rack depth + aisle
  tray_drop_m: 3.0          # up from one port to the tray and down to the other
  slack_m: 1.0
growth: null                # or {target_gpus: 4096}: what growing there costs counts
cost:
  years: 5                  # TCO horizon
  energy_usd_per_kwh: 0.12
  pue: 1.3
  price_book: null          # your own prices (YAML: `item: price_usd`), overriding the estimates
  prices: {}                # or inline: {qm9700: 28000}
team:
  infiniband: some          # none | some | expert
  ethernet_dcb: some        # PFC/ECN/DCQCN experience: none | some | expert
deployment: on_premises     # on_premises | cloud | hybrid
priorities: balanced        # balanced | max_performance | cost_sensitive | cloud_hybrid
                            #   | ethernet_team (docs/models.md, "The decision")
decision:
  performance_floor: 0.10   # cost_sensitive: at most 10 % slower than the fastest
  require: {}               # constraints: {min_vendors: 2, cloud_availability: wide}
  worth_usd: {}             # money-equivalents per technology, e.g. {roce_v2: 500000}
workload:
  model: llama3-70b         # llama3-8b | llama3-70b | llama3-405b | gpt3-175b | mixtral-8x7b
                            #   | deepseek-v3, or custom with params_b, layers, hidden
  sequence_length: 8192
  tp: 8
  pp: 1
  mfu: 0.4
nccl:
  version: "2.30"           # NCCL release whose tuning tables the model uses (2.19 or later)
  qps_per_connection: null  # NCCL_IB_QPS_PER_CONNECTION (default 1)
"""


def register(app: typer.Typer) -> None:
    app.command("init")(init)


@guarded
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the starter spec.")] = Path(
        "cluster.yaml"
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter spec."""
    check_output_format(check_output_path(path, "PATH"), "yaml", "PATH")
    if path.exists() and not force:
        raise fail(f"{path}: already exists; pass --force to overwrite it")
    write_atomic(path, STARTER_SPEC.replace("{name}", str(path)))
    typer.echo(f"wrote {path}")
