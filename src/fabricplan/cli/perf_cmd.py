"""``fabricplan perf SPEC``: nccl-tests-like tables (perftest-like with ``--p2p``) per technology.

Sizes follow nccl-tests: ``8G`` is 8 x 2**30 bytes, all_gather/reduce_scatter sizes are the whole
gathered buffer, all_to_all sizes what one rank sends; GB/s are 10**9 bytes/s. perftest tables
report Gb/s as ``--report_gbits`` does, between two hosts ``--hops`` switches apart (default: the
longest path of the group). ``--algorithm`` forces one algorithm as ``NCCL_ALGO`` does;
``--sharp/--no-sharp`` turns the switches' in-network reduction on or off (default: the spec's
``fabric.sharp``, ``auto``: CollNet off, as NCCL runs without the SHARP plugin; forcing a CollNet
algorithm turns it on where the hardware has it). ``--config`` reads real switch and NIC
configurations into the lossless settings, whose effect the tables carry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer

from fabricplan.cli.guard import guarded
from fabricplan.cli.plan_cmd import SeedOpt, SeedsOpt
from fabricplan.errors import ModelError
from fabricplan.model.collective_name import ALGORITHMS, COLLECTIVES, AlgorithmName, CollectiveName
from fabricplan.units import parse_size

# The models, the spec and the evaluation are imported when the command runs, so that
# `fabricplan perf --help` imports none of them (tests/test_cli_startup.py).
if TYPE_CHECKING:
    from fabricplan.model.results import PerformanceResult, RoutingName
    from fabricplan.model.scenario import TechnologyName


class Format(StrEnum):
    table = "table"
    json = "json"


def register(app: typer.Typer) -> None:
    app.command("perf")(perf)


def parse_sizes(text: str) -> tuple[int, ...]:
    """``1M,64M,8G`` -> byte counts; a bad item is an FP510 error naming it.

    >>> parse_sizes("8, 1K,1M")
    (8, 1024, 1048576)
    """
    sizes = []
    for item in text.split(","):
        try:
            size = parse_size(item)
        except ValueError:
            raise ModelError(
                "FP510",
                "--sizes",
                "not a size",
                item.strip(),
                "use a comma-separated list such as 8,1M,64M,8G",
            ) from None
        if size <= 0:
            raise ModelError(
                "FP510",
                "--sizes",
                "a size must be positive",
                item.strip(),
                "use sizes such as 8, 1M, 8G",
            )
        sizes.append(size)
    return tuple(sizes)


def parse_collectives(names: list[str]) -> tuple[CollectiveName, ...]:
    """Validated collective names (FP511 for an unknown one)."""
    for name in names:
        if name not in COLLECTIVES:
            raise ModelError(
                "FP511",
                "--collective",
                "unknown collective",
                name,
                f"use one of {', '.join(COLLECTIVES)}",
            )
    return tuple(names)  # type: ignore[arg-type]  # checked against CollectiveName above


def parse_routing(items: list[str]) -> dict[TechnologyName, RoutingName]:
    """``TECH=MODE`` pairs, e.g. ``roce_v2=adaptive`` (FP512 when malformed).

    >>> parse_routing(["roce_v2=adaptive"])
    {'roce_v2': 'adaptive'}
    """
    from fabricplan.model.results import RoutingName
    from fabricplan.model.scenario import TechnologyName

    technologies: tuple[str, ...] = get_args(TechnologyName)
    routings: tuple[str, ...] = get_args(RoutingName)
    routing: dict[TechnologyName, RoutingName] = {}
    for item in items:
        tech, _, mode = item.partition("=")
        if tech not in technologies or mode not in routings:
            raise ModelError(
                "FP512",
                "--routing",
                "expected TECHNOLOGY=MODE",
                item,
                f"technology in {', '.join(technologies)}; mode in {', '.join(routings)}",
            )
        routing[tech] = mode  # type: ignore[index,assignment]  # both checked above
    return routing


def parse_algorithm(name: str | None) -> AlgorithmName | None:
    """A ``NCCL_ALGO``-like name, case-insensitive (FP514 for an unknown one).

    >>> parse_algorithm("CollNet_Chain")
    'collnet_chain'
    """
    if name is None:
        return None
    lowered = name.strip().lower()
    if lowered not in ALGORITHMS:
        raise ModelError(
            "FP514",
            "--algorithm",
            "unknown algorithm",
            name,
            f"use one of {', '.join(ALGORITHMS)}",
        )
    return lowered  # checked against ALGORITHMS above


def _time_text(time_us: float) -> str:
    """nccl-tests widens the time column by dropping decimals as it grows."""
    if time_us < 1e4:
        return f"{time_us:.2f}"
    if time_us < 1e5:
        return f"{time_us:.1f}"
    return f"{time_us:.0f}"


def _band_text(low: float | None, high: float | None, fmt: Callable[[float], str]) -> str:
    """``low-high`` of a band, ``-`` where the value has none."""
    if low is None or high is None:
        return "-"
    return f"{fmt(low)}-{fmt(high)}"


def collective_table(result: PerformanceResult, collective: str, ranks: int) -> str:
    """One nccl-tests-like table (out-of-place columns) with its average bus bandwidth."""
    points = [p for p in result.collectives if p.collective == collective]
    # 20 columns hold Ring/LL128 and flow/NVLSTree/Simple; a symmetric kernel's name is longer.
    wide = max([20, *(len(p.algorithm) for p in points)])
    lines = [
        f"# {result.technology}: {collective}, {ranks} GPUs ({result.backend} model)",
        "#",
        f"# {'size':>12} {'algorithm':>{wide}} {'time':>10} {'algbw':>8} {'busbw':>8}"
        f" {'time band':>21} {'busbw band':>17}",
        f"# {'(B)':>12} {'':>{wide}} {'(us)':>10} {'(GB/s)':>8} {'(GB/s)':>8}"
        f" {'(us)':>21} {'(GB/s)':>17}",
    ]
    lines += [
        f"  {p.size_bytes:>12} {p.algorithm:>{wide}} {_time_text(p.time_us):>10}"
        f" {p.algbw_GBps:>8.2f} {p.busbw_GBps:>8.2f}"
        f" {_band_text(p.time_us_low, p.time_us_high, _time_text):>21}"
        f" {_band_text(p.busbw_GBps_low, p.busbw_GBps_high, '{:.2f}'.format):>17}"
        for p in points
    ]
    if points:
        average = sum(p.busbw_GBps for p in points) / len(points)
        lines.append(f"# Avg bus bandwidth    : {average:.2f}")
    return "\n".join(lines)


def p2p_table(result: PerformanceResult, test: str) -> str:
    """One perftest-like table: ``t_typical`` for latency tests, ``BW average`` for bandwidth."""
    points = [p for p in result.p2p if p.test == test]
    latency = test.endswith("_lat")
    lines = [f"# {result.technology}: ib_{test} ({result.backend} model)"]
    fmt = "{:.2f}".format
    if latency:
        lines.append(f" {'#bytes':<10} {'t_typical[usec]':>16} {'band[usec]':>15}")
        lines += [
            f" {p.size_bytes:<10} {p.latency_us:>16.2f}"
            f" {_band_text(p.latency_us_low, p.latency_us_high, fmt):>15}"
            for p in points
        ]
    else:
        lines.append(
            f" {'#bytes':<10} {'BW average[Gb/sec]':>20} {'MsgRate[Mpps]':>15} {'band[Gb/sec]':>17}"
        )
        lines += [
            f" {p.size_bytes:<10} {p.bw_gbps:>20.2f} {1.0 / p.latency_us:>15.6f}"
            f" {_band_text(p.bw_gbps_low, p.bw_gbps_high, fmt):>17}"
            for p in points
        ]
    return "\n".join(lines)


@guarded
def perf(
    spec: Annotated[Path, typer.Argument(help="Cluster spec (YAML).")],
    collective: Annotated[
        list[str] | None,
        typer.Option("--collective", "-c", help=f"Repeatable: {', '.join(COLLECTIVES)}."),
    ] = None,
    sizes: Annotated[
        str | None, typer.Option("--sizes", "-s", help="Message sizes, e.g. 1M,64M,8G.")
    ] = None,
    gpus: Annotated[
        int | None, typer.Option("--gpus", "-g", help="GPUs taking part (default: all).")
    ] = None,
    p2p: Annotated[
        bool, typer.Option("--p2p", help="perftest-like point-to-point tables instead.")
    ] = False,
    routing: Annotated[
        list[str] | None,
        typer.Option("--routing", help="TECH=MODE, e.g. roce_v2=adaptive (repeatable)."),
    ] = None,
    algorithm: Annotated[
        str | None,
        typer.Option(
            "--algorithm", "-a", help=f"Force one algorithm (NCCL_ALGO): {', '.join(ALGORITHMS)}."
        ),
    ] = None,
    sharp: Annotated[
        bool | None,
        typer.Option(
            "--sharp/--no-sharp",
            help="In-network reduction on or off (default: the spec's fabric.sharp; auto ="
            " CollNet off).",
        ),
    ] = None,
    hops: Annotated[
        int | None,
        typer.Option(
            "--hops", min=0, help="perftest: switches between the two hosts (default: longest)."
        ),
    ] = None,
    backend: Annotated[
        str, typer.Option("--backend", help="Performance model: analytic | flow | packet.")
    ] = "analytic",
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    config: Annotated[
        list[Path] | None,
        typer.Option("--config", help="Real switch/NIC configuration files (repeatable)."),
    ] = None,
    seed: SeedOpt = 0,
    seeds: SeedsOpt = None,
) -> None:
    """Predicted nccl-tests (or perftest) tables for every technology of SPEC."""
    from fabricplan.backends import user_backend
    from fabricplan.cli.notice import announce_compilation
    from fabricplan.cli.plan_cmd import with_configs
    from fabricplan.evaluate import perform_each
    from fabricplan.model.results import DEFAULT_SIZES_BYTES, P2P_DEFAULT_SIZES_BYTES, PerfRequest
    from fabricplan.report.document import perf_document
    from fabricplan.spec import load_spec

    user_backend(backend)  # an unknown name fails here, before any work
    default_sizes = P2P_DEFAULT_SIZES_BYTES if p2p else DEFAULT_SIZES_BYTES
    request = PerfRequest(
        collectives=() if p2p else parse_collectives(collective or ["all_reduce"]),
        sizes_bytes=parse_sizes(sizes) if sizes else default_sizes,
        gpus=gpus,
        p2p=p2p,
        step=False,
        routing=parse_routing(routing or []),
        algorithm=parse_algorithm(algorithm),
        in_network_reduction=sharp,
        p2p_switch_hops=hops,
        seed=seed,
        seeds=seeds,
    )
    valid = with_configs(load_spec(spec), config)
    announce_compilation(backend)
    results, skipped = perform_each(valid, request, backend)
    ranks = gpus or valid.spec.cluster.gpus
    if fmt is Format.json:
        typer.echo(json.dumps(perf_document(backend, ranks, results, skipped, p2p), indent=2))
        return
    blocks = [f"# {tech}: not run: {why}" for tech, why in skipped.items()]
    for result in results:
        blocks.append("\n".join(f"# note: {note}" for note in result.notes))
        if p2p:
            tests = dict.fromkeys(p.test for p in result.p2p)
            blocks += [p2p_table(result, test) for test in tests]
        else:
            blocks += [collective_table(result, op, ranks) for op in request.collectives]
    typer.echo("\n\n".join(blocks))
