"""``export`` (the files a build team loads) and ``verify-cabling`` (the built fabric against
the cut sheet)."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from fabricplan.cli.guard import (
    check_output_folder,
    check_output_path,
    guarded,
    write_atomic,
    write_atomic_set,
)
from fabricplan.errors import InputFileError

EXIT_DIFFERENCES = 1


class ExportFormatChoice(StrEnum):
    cutsheet = "cutsheet"
    cutsheet_xlsx = "cutsheet-xlsx"
    bom = "bom"
    bom_xlsx = "bom-xlsx"
    netbox = "netbox"
    slurm_conf = "slurm-conf"
    slurm_yaml = "slurm-yaml"
    ibnetdiscover = "ibnetdiscover"
    cvt = "cvt"
    ip_plan = "ip-plan"
    roce_config = "roce-config"
    k8s_labels = "k8s-labels"
    targets = "targets"
    cloudai_sol = "cloudai-sol"
    svg = "svg"


class SwitchOsChoice(StrEnum):
    mlnx_os = "mlnx-os"
    cumulus = "cumulus"
    nvue = "nvue"
    sonic = "sonic"
    eos = "eos"


BINARY_FORMATS = frozenset({"cutsheet-xlsx", "bom-xlsx", "cvt"})
DIRECTORY_FORMATS = frozenset({"netbox", "targets", "roce-config"})
"""Formats that write several files (``-o`` is a directory)."""


def _check_output(fmt: str, output: Path | None) -> None:
    """Refuse, before any work, an output the format cannot be written to (FP1206; the output
    layer's FP1301 for a path or folder that cannot be written)."""
    if output is None:
        if fmt in BINARY_FORMATS or fmt in DIRECTORY_FORMATS:
            what = "is binary" if fmt in BINARY_FORMATS else "writes several files"
            raise InputFileError(
                "FP1206", "--output", f"{fmt} {what}", None, "give -o FILE or -o DIRECTORY"
            )
        return
    # os.path's checks, not Path's: a name too long to look up is False here (Python 3.11's
    # Path.exists raises), and check_output_path / check_output_folder refuse it in one line
    if fmt in DIRECTORY_FORMATS and os.path.exists(output) and not os.path.isdir(output):
        raise InputFileError(
            "FP1206",
            str(output),
            "is a file; this format writes a directory",
            None,
            "give -o DIRECTORY",
        )
    if fmt in DIRECTORY_FORMATS or os.path.isdir(output):
        check_output_folder(output, "--output")
    else:
        check_output_path(output)


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("verify-cabling")(verify_cabling)


@guarded
def export(
    spec: Annotated[Path, typer.Argument(help="The cluster spec (YAML).")],
    technology: Annotated[
        str, typer.Option("--technology", "-t", help="Which of the spec's technologies.")
    ],
    fmt: Annotated[ExportFormatChoice, typer.Option("--format", "-f", help="What to write.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="File to write (a directory for formats of several files); stdout if absent.",
        ),
    ] = None,
    switch_os: Annotated[
        SwitchOsChoice | None,
        typer.Option("--os", help="Switch OS whose port names (and config) to write."),
    ] = None,
    label_prefix: Annotated[
        str, typer.Option("--label-prefix", help="Kubernetes label prefix (k8s-labels).")
    ] = "network.topology.nvidia.com",
    site: Annotated[str, typer.Option("--site", help="NetBox site of the devices.")] = (
        "fabricplan-site"
    ),
    loopback_pool: Annotated[
        str, typer.Option("--loopback-pool", help="IPv4 network for loopbacks (ip-plan).")
    ] = "10.0.0.0/16",
    layout: Annotated[
        Path | None,
        typer.Option("--layout", help="CSV device,row,rack[,u]: rows and racks of the devices."),
    ] = None,
    p2p_pool: Annotated[
        str, typer.Option("--p2p-pool", help="IPv4 network for the /31 links (ip-plan).")
    ] = "10.64.0.0/10",
) -> None:
    """Write the files a build team loads: cut sheet, BOM, NetBox, Slurm, IB, IP plan, configs,
    Kubernetes labels, acceptance targets, a drawing. See docs/export.md."""
    from fabricplan.export.formats import ExportOptions, export_files
    from fabricplan.export.scheduler import check_label_prefix
    from fabricplan.spec import load_spec

    check_label_prefix(label_prefix)
    _check_output(fmt.value, output)
    placed = None
    if layout is not None:
        from fabricplan.export.layout import read_layout
        from fabricplan.export.neighbour import read_text

        placed = read_layout(read_text(layout), str(layout))
    valid = load_spec(spec)
    os_name = (
        None if switch_os is None else ("cumulus" if switch_os.value == "nvue" else switch_os.value)
    )
    options = ExportOptions(
        switch_os=os_name,  # type: ignore[arg-type]
        label_prefix=label_prefix,
        site=site,
        loopback_pool=loopback_pool,
        p2p_pool=p2p_pool,
        layout=placed,
    )
    files = export_files(valid, technology, fmt.value, options)
    if len(files) == 1:
        ((name, content),) = files.items()
        if output is None:
            if isinstance(content, bytes):
                raise InputFileError(
                    "FP1206", "--output", f"{fmt.value} is binary", None, f"give -o {name}"
                )
            typer.echo(content, nl=False)
            return
        target = output / name if output.is_dir() else output
        write_atomic(target, content)
        typer.echo(f"wrote {target}")
        return
    if output is None:
        raise InputFileError(
            "FP1206",
            "--output",
            f"{fmt.value} writes {len(files)} files",
            None,
            "give -o DIRECTORY",
        )
    if output.exists() and not output.is_dir():
        raise InputFileError(
            "FP1206",
            str(output),
            "is a file; this format writes a directory",
            None,
            "give -o DIRECTORY",
        )
    write_atomic_set(output, files)  # all the files or none
    typer.echo(f"wrote {len(files)} files to {output}: {', '.join(sorted(files))}")


@guarded
def verify_cabling(
    plan: Annotated[Path, typer.Argument(help="The cut sheet (export --format cutsheet).")],
    observed: Annotated[
        list[Path],
        typer.Argument(
            help="What the fabric reports: ibnetdiscover output, SONiC `show lldp table` (one"
            " file per switch, named after it), NVUE/lldpd LLDP JSON, or CSV."
        ),
    ],
) -> None:
    """Compare the built fabric with the cut sheet: missing, extra, miswired and swapped cables.

    Exit 0 when they agree, 1 when anything differs, 2 when a file cannot be read.
    """
    from fabricplan.export.cutsheet import SheetLink, read_cutsheet
    from fabricplan.export.neighbour import read_observation, read_text
    from fabricplan.export.verify import compare_cabling

    planned = read_cutsheet(read_text(plan), str(plan))
    links: list[SheetLink] = []
    reporters: set[str] = set()
    for path in observed:
        observation = read_observation(read_text(path), str(path))
        links.extend(observation.links)
        reporters |= observation.reporters
    result = compare_cabling(planned, links, reporters)
    typer.echo(
        f"planned {result.planned} cables in scope, observed {result.observed},"
        f" matched {result.matched}, differences {len(result.differences)}"
    )
    for difference in result.differences:
        typer.echo(difference.describe())
    if result.by_switch:
        typer.echo("by switch:")
        for device in sorted(result.by_switch):
            counts = ", ".join(f"{n} {k}" for k, n in sorted(result.by_switch[device].items()))
            typer.echo(f"  {device}: {counts}")
    if not result.equal:
        raise typer.Exit(EXIT_DIFFERENCES)
