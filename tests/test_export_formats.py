"""Every export format of the golden designs: agreement with the design, readers, round trips."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabricplan.catalog.front_panel import front_panel
from fabricplan.catalog.loader import load_catalog
from fabricplan.cli.app import create_app
from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan, PlannedCable, cabling_plan
from fabricplan.export.cutsheet import CUTSHEET_COLUMNS, SheetLink, cutsheet_csv, read_cutsheet
from fabricplan.export.formats import export_files
from fabricplan.export.infiniband import ibnetdiscover_text, read_ibnetdiscover
from fabricplan.export.inventory import (
    NETBOX_CABLE_COLUMNS,
    NETBOX_DEVICE_COLUMNS,
    NETBOX_INTERFACE_COLUMNS,
)
from fabricplan.export.ip_plan import PRIVATE_ASN_FIRST, ip_plan_rows
from fabricplan.export.neighbour import read_lldp_json, read_observation, read_sonic_lldp
from fabricplan.export.scheduler import expand_hostlist, hostlist, read_topology_conf
from fabricplan.export.verify import compare_cabling
from fabricplan.lint.checking.linter import lint_files
from fabricplan.model.hardware import SwitchSpec
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabrics import GOLDEN, golden, plan_of

NAMES = [g[0] for g in GOLDEN]
IB_NAMES = [g[0] for g in GOLDEN if g[2]["technologies"] == ["infiniband"]]
runner = CliRunner()
app = create_app()


def _csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("name", NAMES)
def test_cutsheet_round_trip_has_no_differences(name: str) -> None:
    _, plan = plan_of(name)
    text = cutsheet_csv(plan)
    header = "a_device,a_port,z_device,z_port,link_group,speed_gbps,part,reach_class,length_m"
    assert ",".join(CUTSHEET_COLUMNS) == header  # the documented cut-sheet header, exactly
    assert text.splitlines()[0].startswith(header + ",")
    sheet = read_cutsheet(text, "plan.csv")
    assert len(sheet) == len(plan.cables)
    observation = read_observation(text, "built.csv")
    result = compare_cabling(sheet, observation.links, observation.reporters)
    assert result.equal and result.matched == len(plan.cables)


def _free_spine_port(plan: CablingPlan) -> tuple[str, str] | None:
    used = {(c.z_device, c.z_port) for c in plan.cables} | {
        (c.a_device, c.a_port) for c in plan.cables
    }
    for device in plan.devices_of("spine"):
        for port in plan.ports_of(device):
            if (device.name, port) not in used:
                return device.name, port
    return None


def test_each_planted_fault_is_found_once() -> None:
    _, plan = plan_of("roce-fat-tree-free-spine-ports")
    sheet = read_cutsheet(cutsheet_csv(plan), "plan.csv")
    uplinks = [i for i, s in enumerate(sheet) if s.link_group == "leaf_spine"]
    hosts = [i for i, s in enumerate(sheet) if s.link_group == "node_leaf"]
    built = list(sheet)
    # 1. swapped pair: two host cables swapped at the leaf.
    i, j = hosts[3], hosts[40]
    a, b = built[i], built[j]
    built[i] = SheetLink(a.a_device, a.a_port, b.z_device, b.z_port)
    built[j] = SheetLink(b.a_device, b.a_port, a.z_device, a.z_port)
    # 2. missing link.
    missing = built.pop(hosts[100])
    # 3. link to the wrong spine: a free port of another spine.
    free = _free_spine_port(plan)
    assert free is not None, "the fabric needs a free spine port for this fault"
    k = uplinks[5]
    wrong = built[k - 1] if k > hosts[100] else built[k]
    index = built.index(wrong)
    assert wrong.z_device != free[0]
    built[index] = SheetLink(wrong.a_device, wrong.a_port, free[0], free[1])
    result = compare_cabling(sheet, built, {d.name for d in plan.devices})
    kinds = Counter(d.kind for d in result.differences)
    assert kinds == {"swapped": 1, "missing": 1, "miswired": 1}
    missing_diff = next(d for d in result.differences if d.kind == "missing")
    assert missing_diff.planned == (
        tuple(sorted([(missing.a_device, missing.a_port), (missing.z_device, missing.z_port)])),
    )
    miswired = next(d for d in result.differences if d.kind == "miswired")
    assert free[0] in miswired.fix and wrong.z_device in miswired.fix
    # An extra cable on two free ports is reported as extra.
    extra = [*built, SheetLink("node-9999", "nic0", free[0], free[1] + "x")]
    everyone = {d.name for d in plan.devices} | {"node-9999"}
    kinds = Counter(d.kind for d in compare_cabling(sheet, extra, everyone).differences)
    assert kinds == {"swapped": 1, "missing": 1, "miswired": 1, "extra": 1}
    # Only what the reporting devices cover is compared: one switch's LLDP table.
    leaf = sheet[hosts[0]].z_device
    own = [link for link in sheet if leaf in (link.a_device, link.z_device)]
    assert compare_cabling(sheet, own, {leaf}).equal


@pytest.mark.parametrize("name", IB_NAMES)
def test_ibnetdiscover_parses_back_to_the_plan(name: str) -> None:
    valid, plan = plan_of(name)
    text = ibnetdiscover_text(plan, valid.nics["infiniband"].id)
    links = read_ibnetdiscover(text, "expected.ibnetdiscover")
    assert len(links) == len(plan.cables)
    sheet = read_cutsheet(cutsheet_csv(plan), "plan.csv")
    observation = read_observation(text, "fabric.ibnetdiscover")
    assert observation.format == "ibnetdiscover"
    assert compare_cabling(sheet, observation.links, observation.reporters).equal


@pytest.mark.parametrize(("name", "rate"), [("h100-superpod-4su", "4xNDR"), ("b300-xdr", "4xXDR")])
def test_ibnetdiscover_rates_follow_the_catalogs_lane_rate(
    name: str, rate: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # IBTA: NDR 400G = 4 lanes of 100G, XDR 800G = 4 lanes of 200G (switches.yaml lane_gbps).
    valid, plan = plan_of(name)
    text = ibnetdiscover_text(plan, valid.nics["infiniband"].id)
    assert f" {rate}\n" in text and text.count(rate) == 2 * len(plan.cables)
    # One source of the fact: the rate follows the catalog's lane_gbps, not the front panel.
    import fabricplan.export.infiniband as infiniband
    from fabricplan.catalog.loader import Catalog
    from fabricplan.model.hardware import Figure

    catalog = load_catalog()
    switch = catalog.get_typed(plan.design.switch_id, SwitchSpec)
    assert switch.lane_gbps is not None
    half = switch.model_copy(
        update={"lane_gbps": Figure(value=switch.lane_gbps.value / 2, basis="estimate")}
    )
    items = [half if item.id == switch.id else item for item in catalog]
    monkeypatch.setattr(infiniband, "load_catalog", lambda: Catalog(items, catalog.prices))
    halved = ibnetdiscover_text(plan, valid.nics["infiniband"].id)
    assert f" 8x{infiniband.IB_LANE_RATE_NAMES[switch.lane_gbps.value / 2]}\n" in halved


def test_slurm_tree_and_block_parse_and_cover_every_node() -> None:
    for name in ("h100-superpod-4su", "b200-16su-3tier", "roce-sn5600-fat-tree"):
        valid, design = golden(name)
        tech = design.technology
        conf = export_files(valid, tech, "slurm-conf")["topology.conf"]
        assert isinstance(conf, str)
        tree = read_topology_conf(conf)
        leaves = {n for kind, names in tree.values() if kind == "nodes" for n in names}
        counted = Counter(n for kind, names in tree.values() if kind == "nodes" for n in names)
        assert len(leaves) == design.nodes and set(counted.values()) == {1}
        children = {c for kind, names in tree.values() if kind == "switches" for c in names}
        assert children <= set(tree)  # every child switch is defined
        roots = set(tree) - children
        assert len(roots) == 1
        document = yaml.safe_load(export_files(valid, tech, "slurm-yaml")["topology.yaml"])
        assert [t["topology"] for t in document] == ["tree", "block"]
        block = document[1]["block"]
        sizes = block["block_sizes"]
        assert all(b == sizes[0] * 2**i for i, b in enumerate(sizes))  # powers of two
        nodes = [n for b in block["blocks"] for n in expand_hostlist(b["nodes"])]
        assert len(nodes) == len(set(nodes)) == design.nodes
        assert max(len(expand_hostlist(b["nodes"])) for b in block["blocks"]) == sizes[0]
    # The 4-SU SuperPOD: 4 blocks of 32 node slots (31 nodes in the last, the UFM's SU).
    valid, design = golden("h100-superpod-4su")
    document = yaml.safe_load(export_files(valid, "infiniband", "slurm-yaml")["topology.yaml"])
    assert [len(expand_hostlist(b["nodes"])) for b in document[1]["block"]["blocks"]] == [
        32,
        32,
        32,
        31,
    ]


def test_netbox_csvs_have_the_documented_columns_and_agree() -> None:
    valid, plan = plan_of("roce-th5-400g")
    files = export_files(valid, "roce_v2", "netbox")
    devices = _csv(str(files["netbox-devices.csv"]))
    cables = _csv(str(files["netbox-cables.csv"]))
    interfaces = _csv(str(files["netbox-interfaces.csv"]))
    assert tuple(devices[0]) == NETBOX_DEVICE_COLUMNS
    assert tuple(cables[0]) == NETBOX_CABLE_COLUMNS
    assert tuple(interfaces[0]) == NETBOX_INTERFACE_COLUMNS
    assert {"side_a_device", "side_a_type", "side_a_name", "side_b_device"} <= set(cables[0])
    assert len(cables) - 1 == len(plan.cables) and len(devices) - 1 == len(plan.devices)
    names = {row[0] for row in devices[1:]}
    assert {row[0] for row in cables[1:]} | {row[3] for row in cables[1:]} <= names
    assert len(interfaces) - 1 == 2 * len(plan.cables)


@pytest.mark.parametrize("name", ["h100-superpod-4su", "roce-th5-400g", "ddc-400g-fat-tree"])
def test_bom_csv_agrees_with_the_design_and_the_cost(name: str) -> None:
    from fabricplan.analytic.cost import fabric_cost

    valid, design = golden(name)
    rows = _csv(str(export_files(valid, design.technology, "bom")["bom.csv"]))
    body = rows[1:-1]
    assert [(r[0], int(r[4])) for r in body] == [(b.item, b.quantity) for b in design.bom]
    capex = fabric_cost(valid, design).capex_usd
    assert float(rows[-1][6]) == pytest.approx(capex, abs=0.01)
    assert sum(float(r[6]) for r in body) == pytest.approx(capex, abs=1)
    switch_rows = [r for r in body if r[1] == "switch"]
    for row in switch_rows:  # each switch line (a DDC's leaves and elements) its own part
        panel = front_panel(row[0])
        assert panel is not None
        assert row[3] == panel.part_number
    assert {r[0] for r in switch_rows} >= {design.switch_id}


def test_ip_plan_gives_a_31_per_link_and_rfc7938_asns() -> None:
    _, plan = plan_of("roce-th5-400g")
    rows = ip_plan_rows(plan)[1:]
    p2p = [r for r in rows if r[0] == "p2p"]
    assert len(p2p) == 2 * len(plan.cables)
    addresses = [r[3] for r in rows]
    assert len(addresses) == len(set(addresses))
    assert all(r[3].endswith("/31") for r in p2p)
    asn = {r[1]: int(r[7]) for r in rows if r[0] == "loopback"}
    leaves = [d.name for d in plan.devices_of("leaf")]
    spines = [d.name for d in plan.devices_of("spine")]
    assert len({asn[n] for n in leaves}) == len(leaves)  # one ASN per leaf
    assert len({asn[n] for n in spines}) == 1  # one ASN for the spine tier of a 2-tier plane
    assert min(asn.values()) == PRIVATE_ASN_FIRST
    bgp = [r for r in p2p if r[9] == "yes"]
    assert len(bgp) == 2 * sum(1 for c in plan.cables if c.link_group == "leaf_spine")


def test_a_scheduled_fabric_routes_as_one_system() -> None:
    # DDC: /31s on host links only (leaf-element links carry cells), a loopback per leaf, one
    # ASN for the plane's leaves, nothing on a fabric element, no BGP inside the fabric.
    _, plan = plan_of("ddc-400g-fat-tree")
    rows = ip_plan_rows(plan)[1:]
    p2p = [r for r in rows if r[0] == "p2p"]
    hosts = [c for c in plan.cables if c.link_group == "node_leaf"]
    assert len(p2p) == 2 * len(hosts) < 2 * len(plan.cables)
    spines = {d.name for d in plan.devices_of("spine")}
    assert not any(r[1] in spines or r[4] in spines for r in rows)
    loopbacks = [r for r in rows if r[0] == "loopback"]
    assert {r[1] for r in loopbacks} == {d.name for d in plan.devices_of("leaf")}
    assert len({r[7] for r in loopbacks}) == 1
    assert all(r[9] == "no" for r in rows)
    addresses = [r[3] for r in rows]
    assert len(addresses) == len(set(addresses))


def test_every_format_that_applies_to_a_scheduled_fabric_exports() -> None:
    from fabricplan.export.formats import EXPORT_FORMATS

    valid, plan = plan_of("ddc-800g")
    refused = {}
    for fmt in EXPORT_FORMATS:
        try:
            files = export_files(valid, "ddc", fmt)
        except InputFileError as error:
            refused[fmt] = error
            continue
        assert files and all(files.values()), fmt
    # ibnetdiscover is InfiniBand's; roce-config is PFC, which a credit-scheduled fabric lacks.
    assert set(refused) == {"ibnetdiscover", "roce-config"}
    assert {e.code for e in refused.values()} == {"FP1203"}
    assert "credit" in str(refused["roce-config"])
    devices = _csv(str(export_files(valid, "ddc", "netbox")["netbox-devices.csv"]))
    models = {row[1]: row[3] for row in devices[1:]}
    assert models["spine"] == valid.fabric_elements["ddc"].name
    assert models["leaf"] == valid.switches["ddc"].name
    sheet = read_cutsheet(str(export_files(valid, "ddc", "cutsheet")["cutsheet.csv"]), "p.csv")
    assert len(sheet) == len(plan.cables)


def _ethernet_switches() -> list[SwitchSpec]:
    """Ethernet switches that can be RoCEv2 leaves (not a scheduled fabric's leaf or element)."""
    return [
        s
        for s in load_catalog().of_kind(SwitchSpec)
        if s.family == "ethernet" and s.role == "switch" and not s.fabric_port_modes
    ]


@pytest.mark.parametrize("switch", _ethernet_switches(), ids=lambda s: s.id)
def test_roce_config_lints_clean_for_every_os_the_box_runs(
    switch: SwitchSpec, tmp_path: Path
) -> None:
    panel = front_panel(switch.id)
    assert panel is not None
    speed = min(mode.speed_gbps for mode in switch.port_modes if mode.speed_gbps >= 100)
    speed = 400 if any(m.speed_gbps == 400 for m in switch.port_modes) else speed
    valid = parse_spec(
        {
            "cluster": {"gpus": 512, "nic_speed_gbps": speed},
            "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": switch.id}},
        }
    )
    for os in panel.oses:
        files = export_files(valid, "roce_v2", "roce-config", _options(os))
        paths = []
        for name, text in files.items():
            if name.endswith((".json", ".yaml", ".cfg")) or name == "host-nic-expected.txt":
                path = tmp_path / f"{os}-{name}"
                path.write_text(str(text))
                paths.append(path)
        result = lint_files(paths, "auto")
        assert not result.findings, (os, [f.message for f in result.findings][:3])
        design = design_fabric(valid, "roce_v2")
        config = next(str(t) for n, t in files.items() if n.endswith((".json", ".yaml", ".cfg")))
        plan = cabling_plan(design, valid, os)
        # The config names the box's real ports (the cut sheet's names).
        assert plan.switch_ports[0] in config and plan.switch_ports[1] in config


def _configured_ports(name: str, text: str) -> list[str]:
    """The interfaces a generated switch config configures, in its own syntax."""
    if name.endswith(".cfg"):
        return [line.split()[1] for line in text.splitlines() if line.startswith("interface ")]
    if name.endswith(".json"):
        return list(json.loads(text)["PORT"])
    document = yaml.safe_load(text)
    return [port for key in document[1]["set"]["interface"] for port in key.split(",")]


BROADCOM_ASICS = ("Tomahawk", "Jericho")


@pytest.mark.parametrize("switch", _ethernet_switches(), ids=lambda s: s.id)
def test_roce_config_fits_the_box_its_os_ports_and_asic_buffer(switch: SwitchSpec) -> None:
    # For every catalog Ethernet switch: the right OS (SONiC/EOS on Broadcom, NVUE only on
    # Spectrum, EOS on Arista), the box's own port names at the design's mode and no more ports
    # than it has, and SONiC headroom from that ASIC (a Broadcom platform profile, sourced or
    # marked estimate; the Spectrum formula with that Spectrum's ASIC_TABLE row), never the
    # Spectrum-3 stand-in.
    from fabricplan.catalog.front_panel import port_names
    from fabricplan.lint.headroom import (
        ASIC_BUFFER_BY_ASIC,
        HeadroomRecord,
        speed_scaled_headroom,
    )

    panel = front_panel(switch.id)
    assert panel is not None and switch.asic is not None
    broadcom = switch.asic.startswith(BROADCOM_ASICS)
    if broadcom:
        assert set(panel.oses) <= {"sonic", "eos"} and panel.oses[0] == "sonic"
    else:
        assert switch.asic.startswith("Spectrum")
        assert panel.oses[0] == "cumulus" and set(panel.oses) <= {"cumulus", "sonic"}
    speed = 400 if any(m.speed_gbps == 400 for m in switch.port_modes) else 100
    valid = parse_spec(
        {
            "cluster": {"gpus": 512, "nic_speed_gbps": speed},
            "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": switch.id}},
        }
    )
    design = design_fabric(valid, "roce_v2")
    plan = cabling_plan(design, valid)
    for os in panel.oses:
        files = export_files(valid, "roce_v2", "roce-config", _options(os))
        names = port_names(panel, design.radix, os)
        assert len(names) == design.radix
        leaf_config = next(n for n in files if n.split(".")[0].endswith("-leaf"))
        configured = _configured_ports(leaf_config, str(files[leaf_config]))
        leaf = design.tier("leaf")
        assert leaf is not None
        assert len(configured) == leaf.down_ports + leaf.up_ports <= design.radix
        assert configured == list(names[: len(configured)])
        if os == plan.switch_os:  # every leaf port the cut sheet cables is configured
            cabled = {c.z_port for c in plan.cables if c.z_device == "leaf-001"}
            assert cabled <= set(configured)
        summary = str(files["baseline.md"])
        assert "stand in (an assumption" not in summary
        if os != "sonic":
            continue
        config = json.loads(str(files[leaf_config]))
        xoffs = {int(p["xoff"]) for p in config.get("BUFFER_PROFILE", {}).values() if "xoff" in p}
        assert xoffs, switch.id
        if broadcom:  # the platform's own profile, or the nearest speed's scaled by speed
            listed = {p.speed_gbps for p in panel.sonic_pg_profiles}
            assert listed, switch.id
            nearest = min(listed, key=lambda s: abs(s - speed))
            expected = {
                speed_scaled_headroom(HeadroomRecord(0, p.xoff_bytes, 0), nearest, speed).xoff_bytes
                for p in panel.sonic_pg_profiles
                if p.speed_gbps == nearest
            }
            assert xoffs <= expected, (switch.id, xoffs, expected)
            basis = [p.basis for p in panel.sonic_pg_profiles]
            headroom = summary.split("SONiC platform profiles:")[1]
            assert ("estimate" in headroom) == ("estimate" in basis or nearest != speed)
        else:
            assert ASIC_BUFFER_BY_ASIC[switch.asic].name in summary


def test_a_broadcom_port_at_a_speed_its_platform_file_lacks_scales_that_profile(
    tmp_path: Path,
) -> None:
    # The Tomahawk 5 platform file lists 400G only; 800G ports take its xoff x 2 (bytes in
    # flight at twice the rate), say so as an estimate, and still lint clean.
    valid = parse_spec(
        {
            "cluster": {"gpus": 512, "nic_speed_gbps": 800},
            "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": "ufispace-s9321-64e"}},
        }
    )
    files = export_files(valid, "roce_v2", "roce-config", _options("sonic"))
    config = json.loads(str(files["sonic-leaf.json"]))
    xoffs = {int(p["xoff"]) for p in config["BUFFER_PROFILE"].values() if "xoff" in p}
    assert xoffs == {2 * 612_140}
    assert "800G: estimate, the 400G profile scaled by speed" in str(files["baseline.md"])
    paths = []
    for name, text in files.items():
        if name.endswith(".json") or name == "host-nic-expected.txt":
            paths.append(tmp_path / name)
            paths[-1].write_text(str(text))
    assert not lint_files(paths, "auto").findings


def _options(os: str) -> object:
    from fabricplan.export.formats import ExportOptions

    return ExportOptions(switch_os=os)  # type: ignore[arg-type]


def test_nvue_on_a_broadcom_box_is_refused() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 512},
            "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": "ufispace-s9321-64e"}},
        }
    )
    with pytest.raises(InputFileError, match="FP1224"):
        export_files(valid, "roce_v2", "roce-config", _options("cumulus"))  # type: ignore[arg-type]
    files = export_files(valid, "roce_v2", "roce-config")
    assert "sonic-leaf.json" in files
    ports = json.loads(str(files["sonic-leaf.json"]))["PORT"]
    assert len(ports) <= 128 and "Ethernet4" in ports and ports["Ethernet4"]["lanes"] == "4,5,6,7"


def test_k8s_labels_and_targets_and_svg() -> None:
    valid, design = golden("b200-16su-3tier")
    labels = yaml.safe_load(str(export_files(valid, "infiniband", "k8s-labels")["k8s-labels.yaml"]))
    assert len(labels) == design.nodes
    first = labels["node-0001"]
    assert set(first) == {f"network.topology.nvidia.com/{k}" for k in ("leaf", "spine", "core")}
    from fabricplan.export.formats import ExportOptions

    mine = export_files(
        valid, "infiniband", "k8s-labels", ExportOptions(label_prefix="net.example.org")
    )
    relabelled = yaml.safe_load(str(mine["k8s-labels.yaml"]))
    assert set(relabelled["node-0001"]) == {
        f"net.example.org/{k}" for k in ("leaf", "spine", "core")
    }
    assert [relabelled["node-0001"][f"net.example.org/{k}"] for k in ("leaf", "spine", "core")] == [
        first[f"network.topology.nvidia.com/{k}"] for k in ("leaf", "spine", "core")
    ]
    targets = _csv(str(export_files(valid, "infiniband", "targets")["targets.csv"]))
    header, body = targets[0], targets[1:]
    busbw, low = header.index("busbw_GBps"), header.index("busbw_low_GBps")
    assert body and all(float(r[low]) <= float(r[busbw]) for r in body)
    svg = str(export_files(valid, "infiniband", "svg")["fabric.svg"])
    assert svg.startswith("<svg") and svg.count("<rect") <= 4 * 16
    drawn = sum(int(part.split('"')[0]) for part in svg.split('data-cables="')[1:])
    assert drawn == len(cabling_plan(design, valid).cables)  # one plane: every cable drawn once


def test_lldp_readers() -> None:
    nvue = {
        "swp1s0": {
            "lldp": {
                "neighbor": {
                    "spine-001": {"chassis": {"system-name": "spine-001"}, "port": {"name": "swp3"}}
                }
            }
        }
    }
    links = read_lldp_json(json.dumps(nvue), "leaf-001.json")
    assert [(x.a_device, x.a_port, x.z_device, x.z_port) for x in links] == [
        ("leaf-001", "swp1s0", "spine-001", "swp3")
    ]
    lldpd = {
        "lldp": {
            "interface": {
                "swp2": {
                    "chassis": {"spine-002": {}},
                    "port": {"id": {"type": "ifname", "value": "swp9"}},
                }
            }
        }
    }
    assert read_lldp_json(json.dumps(lldpd), "leaf-001.json")[0].z_port == "swp9"
    with pytest.raises(InputFileError, match="FP1214"):
        read_sonic_lldp("nothing here", "leaf-001.txt")


_name = st.from_regex(r"[a-z][a-z0-9]{0,6}-[0-9]{1,4}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(_name, min_size=1, max_size=40))
def test_hostlist_round_trips(names: list[str]) -> None:
    assert sorted(expand_hostlist(hostlist(names))) == sorted(set(names))


_port = st.from_regex(
    r"(Ethernet[0-9]{1,3}|swp[0-9]{1,2}(s[0-3])?|1/[0-9]{1,2}/[12])", fullmatch=True
)
_link = st.tuples(_name, _port, _name, _port)


@settings(max_examples=60, deadline=None)
@given(st.lists(_link, min_size=1, max_size=30))
def test_cutsheet_reader_reads_what_the_writer_writes(
    links: list[tuple[str, str, str, str]],
) -> None:
    text = (
        ",".join(CUTSHEET_COLUMNS)
        + "\n"
        + "".join(f"{a},{b},{c},{d},leaf_spine,400,x,y,3\n" for a, b, c, d in links)
    )
    got = read_cutsheet(text, "p.csv")
    assert [(x.a_device, x.a_port, x.z_device, x.z_port) for x in got] == links
    sheet = [SheetLink(*link) for link in links]
    assert compare_cabling(sheet, got, {a for a, *_ in links}).equal


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=300))
def test_readers_fail_cleanly_on_garbage(text: str) -> None:
    for reader in (read_ibnetdiscover, read_sonic_lldp, read_lldp_json, read_observation):
        with contextlib.suppress(InputFileError):
            reader(text, "leaf-001.txt")


def test_cli_export_and_verify_exit_codes(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 256}\nfabric: {technologies: [infiniband]}\n")
    plan = tmp_path / "plan.csv"
    result = runner.invoke(
        app, ["export", str(spec), "-t", "infiniband", "-f", "cutsheet", "-o", str(plan)]
    )
    assert result.exit_code == 0, result.output
    ib = tmp_path / "fabric.ibnetdiscover"
    result = runner.invoke(
        app, ["export", str(spec), "-t", "infiniband", "-f", "ibnetdiscover", "-o", str(ib)]
    )
    assert result.exit_code == 0
    assert runner.invoke(app, ["verify-cabling", str(plan), str(ib)]).exit_code == 0
    lines = plan.read_text().splitlines()
    broken = tmp_path / "built.csv"
    broken.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    result = runner.invoke(app, ["verify-cabling", str(plan), str(broken)])
    assert result.exit_code == 1 and "missing" in result.output
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    result = runner.invoke(app, ["verify-cabling", str(plan), str(bad)])
    assert result.exit_code == 2 and "FP1216" in result.output
    result = runner.invoke(app, ["export", str(spec), "-t", "infiniband", "-f", "ip-plan"])
    assert result.exit_code == 2 and "FP1203" in result.output
    result = runner.invoke(app, ["export", str(spec), "-t", "roce_v2", "-f", "cutsheet"])
    assert result.exit_code == 2 and "FP1202" in result.output
    result = runner.invoke(app, ["export", str(spec), "-t", "infiniband", "-f", "netbox"])
    assert result.exit_code == 2 and "FP1206" in result.output
    result = runner.invoke(
        app, ["export", str(spec), "-t", "infiniband", "-f", "netbox", "-o", str(plan)]
    )
    assert result.exit_code == 2 and "FP1206" in result.output
    assert plan.read_text().splitlines()[0] == lines[0]  # untouched
    result = runner.invoke(app, ["export", str(spec), "-t", "infiniband", "-f", "cvt"])
    assert result.exit_code == 2 and "FP1206" in result.output


def test_html_report_embeds_the_fabric_drawing() -> None:
    from fabricplan.evaluate import evaluate
    from fabricplan.report.html import html_report

    valid = parse_spec({"cluster": {"gpus": 1016}, "fabric": {"switch": {"infiniband": "qm9700"}}})
    evals = evaluate(valid, backend="fake")
    page = html_report(valid, evals, ("design",))
    assert page.count('class="bundle"') >= 2 * 2  # both technologies, node-leaf and leaf-spine
    assert "1016 GPUs" in page and page.count("<figcaption>") == len(evals)


def test_xlsx_workbooks_read_back_with_openpyxl() -> None:
    openpyxl = pytest.importorskip("openpyxl")
    valid, plan = plan_of("h100-superpod-4su")
    book = openpyxl.load_workbook(
        io.BytesIO(export_files(valid, "infiniband", "cutsheet-xlsx")["cutsheet.xlsx"])  # type: ignore[arg-type]
    )
    rows = list(book["cut sheet"].iter_rows(values_only=True))
    text_rows = _csv(cutsheet_csv(plan))
    assert len(rows) == len(text_rows) == len(plan.cables) + 1
    assert list(rows[0]) == text_rows[0]
    assert rows[1][:4] == tuple(text_rows[1][:4]) and rows[1][5] == 400  # speed is a number
    cvt = openpyxl.load_workbook(
        io.BytesIO(export_files(valid, "infiniband", "cvt")["cvt-p2p.xlsx"])  # type: ignore[arg-type]
    )
    assert cvt.sheetnames == ["P2P", "HCA mapping"]
    p2p = list(cvt["P2P"].iter_rows(values_only=True))
    assert p2p[0][:5] == ("A-Rack", "A-U", "A-Node Name", "A-Type", "A-Port")
    assert p2p[1][2:5] == ("node-0001", "Host", "1")  # HCA/Port 1 is mlx5_0
    bom = openpyxl.load_workbook(
        io.BytesIO(export_files(valid, "infiniband", "bom-xlsx")["bom.xlsx"])  # type: ignore[arg-type]
    )
    assert list(bom["BOM"].iter_rows(values_only=True))[1][4] == 32  # leaf switches


@settings(max_examples=12, deadline=None)
@given(
    gpus=st.sampled_from([16, 64, 128, 256, 512, 1024]),
    planes=st.sampled_from([1, 2]),
    topology=st.sampled_from(["rail_optimized", "fat_tree"]),
)
def test_ibnetdiscover_round_trip_over_designs(gpus: int, planes: int, topology: str) -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": gpus},
            "fabric": {"technologies": ["infiniband"], "planes": planes, "topology": topology},
        }
    )
    plan = cabling_plan(design_fabric(valid, "infiniband"), valid)
    text = ibnetdiscover_text(plan, "cx7")
    observed = read_observation(text, "fabric.ibnetdiscover")
    sheet = read_cutsheet(cutsheet_csv(plan), "plan.csv")
    result = compare_cabling(sheet, observed.links, observed.reporters)
    assert result.equal and result.matched == len(plan.cables)


_row = st.tuples(
    st.from_regex(r"Ethernet[0-9]{1,3}", fullmatch=True),
    _name,
    st.from_regex(r"(Ethernet[0-9]{1,3}|swp[0-9]{1,2}s[0-3]|nic[0-7])", fullmatch=True),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, min_size=1, max_size=30))
def test_sonic_lldp_reader_reads_every_row(rows: list[tuple[str, str, str]]) -> None:
    text = "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
    text += "LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
    text += "-----------  --------------  --------------  ------------  -----------------\n"
    text += "".join(f"{a:<12} {b:<15} {c:<15} BR            some descr\n" for a, b, c in rows)
    text += "--------------------------------------------------\nTotal entries displayed:  1\n"
    links = read_sonic_lldp(text, "leaf-007.lldp.txt")
    assert [(x.a_device, x.a_port, x.z_device, x.z_port) for x in links] == [
        ("leaf-007", a, b, c) for a, b, c in rows
    ]


def _lldp_tables(plan: CablingPlan) -> dict[str, str]:
    """What every switch's `show lldp table` prints for the planned cables."""
    rows: dict[str, list[str]] = {}
    for c in plan.cables:
        rows.setdefault(c.z_device, []).append(f"{c.z_port:<12} {c.a_device:<15} {c.a_port:<15} BR")
        if c.link_group not in ("node_leaf", "management"):
            rows.setdefault(c.a_device, []).append(
                f"{c.a_port:<12} {c.z_device:<15} {c.z_port:<15} BR"
            )
    head = "LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n"
    head += "-----------  --------------  --------------  ------------  -----------------\n"
    return {switch: head + "\n".join(lines) + "\n" for switch, lines in rows.items()}


def test_verify_cabling_from_lldp_tables_of_every_switch(tmp_path: Path) -> None:
    _, plan = plan_of("roce-fat-tree-free-spine-ports")
    sheet = tmp_path / "plan.csv"
    sheet.write_text(cutsheet_csv(plan))
    tables = _lldp_tables(plan)
    paths = []
    for switch, text in tables.items():
        path = tmp_path / f"{switch}.lldp.txt"
        path.write_text(text)
        paths.append(str(path))
    result = runner.invoke(app, ["verify-cabling", str(sheet), *paths])
    assert result.exit_code == 0, result.output
    # LLDP system names given as FQDNs name the same devices.
    fqdn = tables[next(iter(tables))].replace("spine-001 ", "spine-001.dc1.example ")
    assert "spine-001.dc1.example" in fqdn
    first_switch = next(iter(tables))
    (tmp_path / f"{first_switch}.fqdn.txt").write_text(fqdn)
    result = runner.invoke(
        app, ["verify-cabling", str(sheet), str(tmp_path / f"{first_switch}.fqdn.txt")]
    )
    assert result.exit_code == 0, result.output
    # One leaf's table with one cable moved to another port: found once, summarised by switch.
    leaf = next(iter(tables))
    lines = tables[leaf].splitlines()
    first = lines[2].split()
    lines[2] = "  ".join([first[0], first[1], first[2] + "x", "BR"])
    (tmp_path / f"{leaf}.lldp.txt").write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["verify-cabling", str(sheet), str(tmp_path / f"{leaf}.lldp.txt")])
    assert result.exit_code == 1
    assert result.output.count("miswired:") == 1 and f"  {leaf}: 1 miswired" in result.output


def test_targets_use_the_predictions_own_band_when_it_has_one() -> None:
    from types import SimpleNamespace

    from fabricplan.export.targets import BUSBW_BAND_FRACTION, target_records

    banded = SimpleNamespace(
        collective="all_reduce",
        size_bytes=1 << 30,
        algorithm="ring",
        time_us=5000.0,
        busbw_GBps=375.0,
        busbw_GBps_low=350.0,
        busbw_GBps_high=390.0,
        time_us_low=4800.0,
        time_us_high=5400.0,
    )
    plain = SimpleNamespace(**{**vars(banded), "busbw_GBps_low": None, "time_us_high": None})
    perf = SimpleNamespace(collectives=[banded, plain], technology="infiniband")
    first, second = target_records(perf)  # type: ignore[arg-type]
    assert (first.busbw_low_GBps, first.time_high_us, first.band_source) == (
        350.0,
        5400.0,
        "prediction band",
    )
    assert second.busbw_low_GBps == pytest.approx(375.0 * (1 - BUSBW_BAND_FRACTION))


def test_layout_fills_rows_and_racks(tmp_path: Path) -> None:
    from fabricplan.export.layout import read_layout

    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 256}\nfabric: {technologies: [infiniband]}\n")
    layout = tmp_path / "racks.csv"
    layout.write_text("device,row,rack,u\nleaf-001,A,A01,42\nnode-0001,A,A02,10\n")
    result = runner.invoke(
        app, ["export", str(spec), "-t", "infiniband", "-f", "cutsheet", "--layout", str(layout)]
    )
    assert result.exit_code == 0, result.output
    rows = _csv(result.stdout)
    header, first = rows[0], rows[1]
    assert first[header.index("a_rack")] == "A02" and first[header.index("z_rack")] == "A01"
    assert read_cutsheet(result.stdout, "plan.csv")[0].a_device == "node-0001"
    layout.write_text("name,row\nx,y\n")
    result = runner.invoke(
        app, ["export", str(spec), "-t", "infiniband", "-f", "cutsheet", "--layout", str(layout)]
    )
    assert result.exit_code == 2 and "FP1225" in result.output
    with pytest.raises(InputFileError, match="twice"):
        read_layout("device,row,rack\na,1,2\na,1,3\n", "x.csv")


def test_a_tomahawk_4_box_gets_its_platforms_sonic_headroom_and_buffer() -> None:
    # Dell Z9664F-ON (Tomahawk 4, 64 x 400G) in sonic-buildimage: pg_profile_lookup.ini gives a
    # 400G port on a cable up to 40 m xoff 424434 B, size and xon 9144 B; its buffers_defaults
    # give a 113,620,296 B pool. A 7 m host run takes the 40 m row (the shortest row that covers
    # it), never the Spectrum-3 formula.
    from fabricplan.export.switch_config import roce_config_files

    valid = parse_spec(
        {
            "cluster": {"gpus": 1024},
            "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": "th4-64x400g"}},
        }
    )
    files = roce_config_files(valid, design_fabric(valid, "roce_v2"), "sonic")
    leaf = json.loads(files["sonic-leaf.json"])
    lossless = {k: v for k, v in leaf["BUFFER_PROFILE"].items() if k.startswith("pg_lossless")}
    assert lossless
    assert {(p["xoff"], p["size"], p["xon"]) for p in lossless.values()} == {
        ("424434", "9144", "9144")
    }
    assert leaf["BUFFER_POOL"]["egress_lossless_pool"]["size"] == "113620296"
    assert "Spectrum-3 formula" not in files["baseline.md"]


# CloudAI's scenario schema (NVIDIA/cloudai @5b5c0f72, src/cloudai/models/scenario.py:
# TestScenarioModel and TestRunModel, both extra="forbid") and its NcclTest subtests
# (src/cloudai/workloads/nccl_test/nccl.py, NCCLCmdArgs.subtest_name).
CLOUDAI_SCENARIO_KEYS = {"name", "sol_path", "job_status_check", "Tests", "pre_test", "post_test"}
CLOUDAI_TEST_KEYS = {"id", "test_name", "num_nodes", "sol", "time_limit", "cmd_args", "weight"}
CLOUDAI_SUBTESTS = {
    "all_reduce_perf_mpi",
    "all_gather_perf_mpi",
    "alltoall_perf_mpi",
    "broadcast_perf_mpi",
    "reduce_scatter_perf_mpi",
}


def test_cloudai_sol_is_a_cloudai_test_scenario_with_the_predicted_busbw() -> None:
    import tomllib

    valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["infiniband"]}})
    files = export_files(valid, "infiniband", "cloudai-sol")
    scenario = tomllib.loads(str(files["cloudai-sol.toml"]))
    assert set(scenario) <= CLOUDAI_SCENARIO_KEYS and scenario["name"]
    targets = export_files(valid, "infiniband", "targets")["targets.csv"]
    rows = list(csv.DictReader(io.StringIO(str(targets))))
    assert {t["id"] for t in scenario["Tests"]} == {f"Tests.{r['collective']}" for r in rows}
    for test in scenario["Tests"]:
        assert set(test) <= CLOUDAI_TEST_KEYS
        assert test["test_name"] == "nccl_base_test"
        assert test["num_nodes"] == valid.spec.cluster.nodes
        assert test["cmd_args"]["subtest_name"] in CLOUDAI_SUBTESTS
        mine = [r for r in rows if f"Tests.{r['collective']}" == test["id"]]
        largest = max(mine, key=lambda r: int(r["size_bytes"]))
        assert test["sol"] == pytest.approx(float(largest["busbw_GBps"]), rel=1e-5)


def _planted(plan: CablingPlan) -> tuple[CablingPlan, dict[str, object]]:
    """The plan as built with three faults: a swapped pair of host cables (at the leaf), a
    missing host cable, and a leaf uplink moved to a free port of another spine."""
    import dataclasses

    cables = list(plan.cables)
    hosts = [i for i, c in enumerate(cables) if c.link_group == "node_leaf"]
    i = hosts[3]
    j = next(k for k in hosts if cables[k].z_device != cables[i].z_device)
    a, b = cables[i], cables[j]
    cables[i] = dataclasses.replace(a, z_device=b.z_device, z_port=b.z_port)
    cables[j] = dataclasses.replace(b, z_device=a.z_device, z_port=a.z_port)
    free = _free_spine_port(plan)
    assert free is not None, "the fabric needs a free spine port for this fault"
    k = next(
        n for n, c in enumerate(cables) if c.link_group == "leaf_spine" and c.z_device != free[0]
    )
    moved = cables[k]
    cables[k] = dataclasses.replace(moved, z_device=free[0], z_port=free[1])
    missing = cables.pop(hosts[100])
    return dataclasses.replace(plan, cables=tuple(cables)), {
        "missing": missing,
        "moved": moved,
        "free": free,
    }


def _observed_files(plan: CablingPlan, fmt: str, nic_model: str) -> dict[str, str]:
    """What the built fabric reports, written in one observed format (files by name)."""
    if fmt == "ibnetdiscover":
        return {"fabric.ibnetdiscover": ibnetdiscover_text(plan, nic_model)}
    if fmt == "csv":
        rows = ["local_device,local_port,remote_device,remote_port"]
        rows += [f"{c.z_device},{c.z_port},{c.a_device},{c.a_port}" for c in plan.cables]
        return {"neighbours.csv": "\n".join(rows) + "\n"}
    if fmt == "sonic":
        return {f"{switch}.txt": text for switch, text in _lldp_tables(plan).items()}
    if fmt == "eos":  # show lldp neighbors | json, one file per switch
        eos: dict[str, list[dict[str, object]]] = {}
        for c in plan.cables:
            ends = [(c.z_device, c.z_port, c.a_device, c.a_port)]
            if c.link_group not in ("node_leaf", "management"):
                ends.append((c.a_device, c.a_port, c.z_device, c.z_port))
            for device, port, peer, peer_port in ends:
                eos.setdefault(device, []).append(
                    {"port": port, "neighborDevice": peer, "neighborPort": peer_port, "ttl": 120}
                )
        return {f"{s}.json": json.dumps({"lldpNeighbors": rows}) for s, rows in eos.items()}
    tables: dict[str, dict[str, object]] = {}
    for c in plan.cables:
        ends = [(c.z_device, c.z_port, c.a_device, c.a_port)]
        if c.link_group not in ("node_leaf", "management"):
            ends.append((c.a_device, c.a_port, c.z_device, c.z_port))
        for device, port, peer, peer_port in ends:
            tables.setdefault(device, {})[port] = {
                "lldp": {
                    "neighbor": {
                        peer: {"chassis": {"system-name": peer}, "port": {"name": peer_port}}
                    }
                }
            }
    return {f"{switch}.json": json.dumps(table) for switch, table in tables.items()}


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("ibnetdiscover", "ib-fat-tree-free-spine-ports"),
        ("sonic", "roce-fat-tree-free-spine-ports"),
        ("nvue", "roce-fat-tree-free-spine-ports"),
        ("csv", "roce-fat-tree-free-spine-ports"),
        ("eos", "ddc-400g-fat-tree"),  # Arista leaves and fabric elements
    ],
)
def test_verify_cabling_round_trip_and_planted_faults_in_every_observed_format(
    fmt: str, name: str, tmp_path: Path
) -> None:
    # The plan written in each format verify-cabling reads: no difference (exit 0); with a
    # swapped pair, a missing link and a link to the wrong spine each found once (exit 1).
    valid, plan = plan_of(name)
    sheet = tmp_path / "plan.csv"
    sheet.write_text(cutsheet_csv(plan))
    nic = valid.nics[plan.design.technology].id
    built, fault = _planted(plan)
    for label, fabric, code in (("clean", plan, 0), ("faulty", built, 1)):
        folder = tmp_path / label
        folder.mkdir()
        paths = []
        for file_name, text in _observed_files(fabric, fmt, nic).items():
            (folder / file_name).write_text(text)
            paths.append(str(folder / file_name))
        result = runner.invoke(app, ["verify-cabling", str(sheet), *paths])
        assert result.exit_code == code, result.output[-800:]
    assert result.output.count("swapped:") == 1
    assert result.output.count("missing:") == 1
    assert result.output.count("miswired:") == 1
    assert "extra:" not in result.output
    missing, moved, free = fault["missing"], fault["moved"], fault["free"]
    assert isinstance(missing, PlannedCable) and isinstance(moved, PlannedCable)
    assert isinstance(free, tuple)
    lines = result.output.splitlines()
    missing_line = next(line for line in lines if line.startswith("missing:"))
    assert f"{missing.a_device}:{missing.a_port}" in missing_line
    miswired_line = next(line for line in lines if line.startswith("miswired:"))
    assert moved.z_device in miswired_line and free[0] in miswired_line
    assert "by switch:" in result.output


@pytest.mark.parametrize("name", NAMES)
def test_every_export_of_every_golden_design_agrees_with_its_counts(name: str) -> None:
    # Each file format, written for the design's plan, counts what the design counts: devices,
    # links (one row or bundle share per cable), nodes once in the scheduler files, and only
    # the box's own port names.
    from fabricplan.analytic.cost import fabric_cost
    from fabricplan.export.drawing import fabric_svg
    from fabricplan.export.infiniband import cvt_rows
    from fabricplan.export.inventory import bom_csv, netbox_files
    from fabricplan.export.scheduler import k8s_labels, slurm_topology_conf, slurm_topology_yaml

    valid, plan = plan_of(name)
    design = plan.design
    links = sum(design.links.values())
    assert len(plan.cables) == links
    nodes = [d.name for d in plan.devices_of("node")]
    infiniband = valid.technologies[design.technology].scope == "ib_subnet"
    # NetBox: one device row per device, two interfaces and one cable per link, box port names.
    files = netbox_files(valid, plan, "site")
    assert len(_csv(files["netbox-devices.csv"])) - 1 == len(plan.devices)
    assert len(_csv(files["netbox-cables.csv"])) - 1 == links
    interfaces = _csv(files["netbox-interfaces.csv"])[1:]
    assert len(interfaces) == 2 * links
    devices = {d.name: d for d in plan.devices}
    for device, port, *_ in interfaces:
        if devices[device].role in ("leaf", "spine", "core"):
            assert port in plan.ports_of(devices[device]), (device, port)
    # BOM: the design's lines, in order.
    bom = _csv(bom_csv(valid, plan, fabric_cost(valid, design)))[1:-1]
    assert [(r[0], int(r[4])) for r in bom] == [(b.item, b.quantity) for b in design.bom]
    # Slurm tree and block, Kubernetes labels: every node exactly once.
    tree = read_topology_conf(slurm_topology_conf(plan))
    listed = Counter(n for kind, names in tree.values() if kind == "nodes" for n in names)
    assert sorted(listed) == sorted(nodes) and set(listed.values()) == {1}
    block = yaml.safe_load(slurm_topology_yaml(plan))[1]["block"]
    in_blocks = [n for b in block["blocks"] for n in expand_hostlist(b["nodes"])]
    assert sorted(in_blocks) == sorted(nodes)
    assert sorted(yaml.safe_load(k8s_labels(plan))) == sorted(nodes)
    # CVT: one row per link; SVG: its bundles hold every cable.
    assert sum(1 for _ in cvt_rows(plan, infiniband)) - 1 == links
    svg = fabric_svg(plan)
    assert f"{links} cables" in svg
    bundled = sum(int(x.split('"')[1]) for x in svg.split("data-cables=")[1:])
    assert bundled == sum(1 for c in plan.cables if c.plane == 0)  # plane 0 is drawn
    # InfiniBand: the expected topology parses back to every link; Ethernet: a /31 per routed
    # link (a scheduled fabric routes only its host links).
    if infiniband:
        text = ibnetdiscover_text(plan, valid.nics[design.technology].id)
        assert len(read_ibnetdiscover(text, "expected.ibnetdiscover")) == links
    else:
        routed = [c for c in plan.cables if not (plan.scheduled and c.link_group == "leaf_spine")]
        p2p = [r for r in ip_plan_rows(plan)[1:] if r[0] == "p2p"]
        assert len(p2p) == 2 * len(routed)
