"""``lint`` (check lossless-RoCE configurations) and ``roce-config`` (write a baseline that lints
clean)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from fabricplan.cli.guard import check_output_folder, guarded, write_atomic_set
from fabricplan.errors import InputFileError

EXIT_FINDINGS = 1
_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


class Format(StrEnum):
    table = "table"
    json = "json"
    sarif = "sarif"


class DeviceTypeChoice(StrEnum):
    auto = "auto"
    sonic = "sonic"
    nvue = "nvue"
    eos = "eos"
    mlnx_qos = "mlnx_qos"
    nic_cc = "nic_cc"


class VendorChoice(StrEnum):
    sonic = "sonic"
    nvue = "nvue"
    eos = "eos"


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
    app.command("roce-config")(roce_config)


def _priorities(text: str | None) -> frozenset[int] | None:
    if text is None:
        return None
    from fabricplan.lint.value import parse_int_set

    return parse_int_set(text, "--pfc-priorities")


def _ranged(value: int | None, option: str, high: int) -> int | None:
    if value is not None and not 0 <= value <= high:
        raise InputFileError("FP409", option, f"must be 0-{high}", value, f"use 0 to {high}")
    return value


@guarded
def lint(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Configuration files: SONiC config_db.json, NVUE yaml, EOS "
            "running-config, mlnx_qos output, NIC CC settings. Checked as one fabric."
        ),
    ],
    output_format: Annotated[
        Format, typer.Option("--format", "-f", help="table, json or sarif (for CI).")
    ] = Format.table,
    device_type: Annotated[
        DeviceTypeChoice,
        typer.Option("--device-type", help="Format of every file (auto detects each file)."),
    ] = DeviceTypeChoice.auto,
    pfc_priorities: Annotated[
        str | None,
        typer.Option("--pfc-priorities", help="Lossless priorities, e.g. 3 (default: inferred)."),
    ] = None,
    roce_dscp: Annotated[
        int | None, typer.Option("--roce-dscp", help="RoCE data DSCP (default: inferred).")
    ] = None,
    cnp_dscp: Annotated[
        int | None, typer.Option("--cnp-dscp", help="CNP DSCP (default: the NICs', else 48).")
    ] = None,
) -> None:
    """Check lossless-RoCE settings of switches and NICs, each and against each other.

    Exit 0 when no error-severity finding exists, 1 when one does, 2 when a file cannot be read.
    """
    from fabricplan.lint.checking.linter import lint_files
    from fabricplan.lint.checking.rule import IntentSpec
    from fabricplan.lint.checking.sarif import sarif_log

    intent = IntentSpec(
        lossless_priorities=_priorities(pfc_priorities),
        roce_dscp=_ranged(roce_dscp, "--roce-dscp", 63),
        cnp_dscp=_ranged(cnp_dscp, "--cnp-dscp", 63),
    )
    result = lint_files(files, device_type.value, intent)
    if output_format is Format.json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
    elif output_format is Format.sarif:
        typer.echo(json.dumps(sarif_log(result.findings), indent=2))
    else:
        _print_table(result)
    if result.exit_code:
        raise typer.Exit(EXIT_FINDINGS)


def _print_table(result: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from fabricplan.lint.checking.linter import LintResult

    assert isinstance(result, LintResult)
    console = Console(soft_wrap=False)
    devices = ", ".join(f"{d.name} ({d.format})" for d in result.devices)
    intent = result.intent
    console.print(
        f"checked {len(result.devices)} devices: {devices}\n"
        f"lossless priorities {sorted(intent.lossless_priorities)}, RoCE DSCP "
        f"{intent.roce_dscp if intent.roce_dscp is not None else 'unknown'}, CNP DSCP"
        f" {intent.cnp_dscp}",
        highlight=False,
    )
    if not result.findings:
        console.print("[green]no findings[/green]")
        return
    table = Table(show_lines=True)
    for column in ("rule", "severity", "device", "finding", "fix", "where"):
        table.add_column(column, overflow="fold")
    for item in result.findings:
        where = item.file if item.line is None else f"{item.file}:{item.line}"
        table.add_row(
            item.rule,
            f"[{_SEVERITY_STYLE[item.severity]}]{item.severity}[/]",
            item.device,
            f"{item.message}\n[dim]{item.why}[/dim]",
            item.fix,
            where,
        )
    console.print(table)
    counts = {
        s: sum(1 for f in result.findings if f.severity == s) for s in ("error", "warning", "info")
    }
    console.print(", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n))


@guarded
def roce_config(
    spec: Annotated[Path, typer.Argument(help="The cluster spec (YAML).")],
    vendor: Annotated[VendorChoice, typer.Option("--vendor", help="Switch OS to write for.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory to write the files into.")
    ] = Path("roce-config"),
) -> None:
    """Write the baseline lossless configuration for the designed RoCE fabric.

    Written for the designed box: its OS (NVUE only on NVIDIA Spectrum boxes, SONiC or EOS on
    Broadcom ones), its front-panel port names and count, its buffer. One switch configuration
    per role (leaf, spine, core), the host NIC commands and their
    expected output, and a summary of headroom and ECN per port class. The files lint clean:
    ``fabricplan lint OUT/*.json OUT/host-nic-expected.txt``.
    """
    from fabricplan.export.switch_config import spec_roce_config_files
    from fabricplan.spec import load_spec

    check_output_folder(out, "--out")
    files = spec_roce_config_files(load_spec(spec), vendor.value, str(spec))
    write_atomic_set(out, files)
    typer.echo(f"wrote {len(files)} files to {out}: {', '.join(sorted(files))}")
