"""The export formats by name: :func:`export_files` is the one entry point the CLI calls.

Each format returns ``{file name: content}`` (text, or bytes for XLSX); one-file formats return
one entry.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
>>> sorted(export_files(valid, "roce_v2", "netbox"))
['netbox-cables.csv', 'netbox-devices.csv', 'netbox-interfaces.csv']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan, cabling_plan
from fabricplan.export.layout import Layout
from fabricplan.export.scheduler import DEFAULT_LABEL_PREFIX
from fabricplan.model.front_panel import SwitchOs
from fabricplan.model.scenario import TechnologyName, ValidScenario

__all__ = ["EXPORT_FORMATS", "ExportFormat", "ExportOptions", "check_technology", "export_files"]

ExportFormat = Literal[
    "cutsheet",
    "cutsheet-xlsx",
    "bom",
    "bom-xlsx",
    "netbox",
    "slurm-conf",
    "slurm-yaml",
    "ibnetdiscover",
    "cvt",
    "ip-plan",
    "roce-config",
    "k8s-labels",
    "targets",
    "cloudai-sol",
    "svg",
]
EXPORT_FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)

IB_ONLY: frozenset[str] = frozenset({"ibnetdiscover"})
ROUTED_ONLY: frozenset[str] = frozenset({"ip-plan", "roce-config"})
NOT_SCHEDULED: frozenset[str] = frozenset({"roce-config"})
"""Formats that do not apply to a scheduled (DDC) fabric (the reason is in the refusal)."""


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """Choices a format may take (each has a default)."""

    switch_os: SwitchOs | None = None
    """Whose port names (and, for roce-config, whose configuration) to write."""
    label_prefix: str = DEFAULT_LABEL_PREFIX
    site: str = "fabricplan-site"
    """NetBox site of every device."""
    loopback_pool: str = "10.0.0.0/16"
    p2p_pool: str = "10.64.0.0/10"
    layout: Layout | None = None
    """Row, rack and U of the devices the user placed (cut sheet and CVT columns)."""


def _check_format(fmt: str, technology: TechnologyName, valid: ValidScenario) -> ExportFormat:
    if fmt not in EXPORT_FORMATS:
        raise InputFileError(
            "FP1201",
            "--format",
            "unknown export format",
            fmt,
            f"use one of {', '.join(EXPORT_FORMATS)}",
        )
    tech = valid.technologies[technology]
    if fmt in NOT_SCHEDULED and tech.fabric_element_asics:
        raise InputFileError(
            "FP1203",
            "--format",
            f"{fmt} is the PFC/ECN lossless baseline of a packet-switched Ethernet fabric; a"
            " scheduled fabric is lossless by its credit grants (virtual output queues), has no"
            " PFC to configure, and its fabric ports carry cells",
            technology,
            "export cutsheet, bom, netbox, ip-plan, slurm-*, k8s-labels, targets or svg for it",
        )
    if fmt in IB_ONLY and tech.scope != "ib_subnet":
        raise InputFileError(
            "FP1203",
            "--format",
            f"{fmt} describes an InfiniBand subnet",
            technology,
            "export an infiniband technology, or use cutsheet / cvt for Ethernet",
        )
    if fmt in ROUTED_ONLY and tech.switch_family != "ethernet":
        raise InputFileError(
            "FP1203",
            "--format",
            f"{fmt} is for a routed Ethernet (RoCE) fabric",
            technology,
            "export a roce technology",
        )
    return fmt


def check_technology(valid: ValidScenario, technology: str) -> TechnologyName:
    """The technology, which must be one of the spec's.

    Parameters
    ----------
    valid
        The validated scenario.
    technology
        The name given (``--technology``).

    Returns
    -------
    TechnologyName
        The same name, now known to be one of the spec's.

    Raises
    ------
    InputFileError
        FP1202 otherwise.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> check_technology(parse_spec({"cluster": {"gpus": 64}}), "roce_v2")
    'roce_v2'
    """
    if technology not in valid.technologies:
        raise InputFileError(
            "FP1202",
            "--technology",
            "not in the spec's fabric.technologies",
            technology,
            f"use one of {', '.join(valid.technologies)}",
        )
    return technology


def export_files(
    valid: ValidScenario,
    technology: str,
    fmt: str,
    options: ExportOptions | None = None,
) -> dict[str, str | bytes]:
    """The files of one export format for one technology's designed fabric.

    Parameters
    ----------
    valid
        The validated scenario.
    technology
        One of its technologies.
    fmt
        An export format (:data:`EXPORT_FORMATS`).
    options
        Settings of the formats that take any (default: :class:`ExportOptions`).

    Returns
    -------
    dict
        File name to contents (text, or bytes for binary formats), written by the caller.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> sorted(export_files(valid, "roce_v2", "bom"))
    ['bom.csv']

    Raises
    ------
    InputFileError
        FP1201 unknown format, FP1202 technology not in the spec, FP1203 a format that does not
        apply to the technology, FP1220-FP1223 bad options.
    DesignError
        When the fabric cannot be designed.
    """
    options = options or ExportOptions()
    tech = check_technology(valid, technology)
    chosen = _check_format(fmt, tech, valid)
    if chosen in ("targets", "cloudai-sol"):
        from fabricplan.evaluate import evaluate_one
        from fabricplan.export.targets import cloudai_sol_toml, nccl_thresholds, targets_csv

        performance = evaluate_one(valid, tech, "analytic").performance
        ranks = valid.spec.cluster.gpus
        if chosen == "cloudai-sol":
            return {
                "cloudai-sol.toml": cloudai_sol_toml(performance, ranks, valid.spec.cluster.nodes)
            }
        return {
            "targets.csv": targets_csv(performance, ranks),
            "nccl-thresholds.txt": nccl_thresholds(performance, ranks),
        }
    from fabricplan.topology.designer import design_fabric

    design = design_fabric(valid, tech)
    if chosen == "roce-config":
        from fabricplan.export.switch_config import roce_config_files

        return dict(roce_config_files(valid, design, options.switch_os))
    plan = cabling_plan(design, valid, options.switch_os)
    if chosen in ("bom", "bom-xlsx"):
        from fabricplan.analytic.cost import fabric_cost
        from fabricplan.export.cutsheet import rows_xlsx
        from fabricplan.export.inventory import bom_csv, bom_rows

        cost = fabric_cost(valid, design)  # the lines and prices `fabricplan cost` shows
        if chosen == "bom":
            return {"bom.csv": bom_csv(valid, plan, cost)}
        return {
            "bom.xlsx": rows_xlsx(
                {"BOM": bom_rows(valid, plan, cost)},
                numeric={"quantity", "unit_price_usd", "total_usd"},
            )
        }
    return _plan_files(valid, plan, chosen, options)


def _plan_files(
    valid: ValidScenario,
    plan: CablingPlan,
    fmt: ExportFormat,
    options: ExportOptions,
) -> dict[str, str | bytes]:
    infiniband = valid.technologies[plan.design.technology].scope == "ib_subnet"
    if fmt == "cutsheet":
        from fabricplan.export.cutsheet import cutsheet_csv

        return {"cutsheet.csv": cutsheet_csv(plan, options.layout)}
    if fmt == "cutsheet-xlsx":
        from fabricplan.export.cutsheet import cutsheet_xlsx

        return {"cutsheet.xlsx": cutsheet_xlsx(plan, options.layout)}
    if fmt == "netbox":
        from fabricplan.export.inventory import netbox_files

        return dict(netbox_files(valid, plan, options.site))
    if fmt == "slurm-conf":
        from fabricplan.export.scheduler import slurm_topology_conf

        return {"topology.conf": slurm_topology_conf(plan)}
    if fmt == "slurm-yaml":
        from fabricplan.export.scheduler import slurm_topology_yaml

        return {"topology.yaml": slurm_topology_yaml(plan)}
    if fmt == "k8s-labels":
        from fabricplan.export.scheduler import k8s_labels

        return {"k8s-labels.yaml": k8s_labels(plan, options.label_prefix)}
    if fmt == "ibnetdiscover":
        from fabricplan.export.infiniband import ibnetdiscover_text

        return {
            "expected.ibnetdiscover": ibnetdiscover_text(
                plan, valid.nics[plan.design.technology].id
            )
        }
    if fmt == "cvt":
        from fabricplan.export.infiniband import cvt_xlsx

        nics = valid.spec.cluster.nics_per_node
        return {"cvt-p2p.xlsx": cvt_xlsx(plan, infiniband, nics, options.layout)}
    if fmt == "ip-plan":
        from fabricplan.export.ip_plan import ip_plan_csv

        return {"ip-plan.csv": ip_plan_csv(plan, options.loopback_pool, options.p2p_pool)}
    from fabricplan.export.drawing import fabric_svg

    return {"fabric.svg": fabric_svg(plan)}
