"""NVLink domains per server, NCCL's tables per release, the host side.

Every expected value is derived here from NCCL's ``src/graph/tuning.cc`` at the tag the table
cites, from the PCIe specification, or from the node's layout; each test fails on the earlier
model's behaviour (one NVLink domain across servers, a 2.19/2.20 mix of constants, no PCIe slot).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.analytic.collective import (
    NCCL_NET_POST_OVERHEAD_US,
    NCCL_PATH_IN_NET_STEP_US,
    NVLS_REDUCTION_EFFICIENCY,
    busbw_factor,
    collective_candidates,
    collective_point,
    ll128_enabled,
)
from fabricplan.analytic.nccl_tuning import nccl_releases, nccl_tuning
from fabricplan.analytic.p2p import p2p_point
from fabricplan.analytic.pipeline import tree_shape
from fabricplan.analytic.profile import (
    DEFAULT_COLLECTIVE_EFFICIENCY,
    FabricProfile,
    fabric_profile,
    host_goodput_gbps,
)
from fabricplan.analytic.traffic import group_for
from fabricplan.errors import FabricPlanError, ModelError, SpecError
from fabricplan.model.results import CollectiveName, CollectivePoint, PerfRequest
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric

GIB = 2**30


def profile(
    cluster: dict[str, Any],
    tech: Any = "infiniband",
    version: str | None = None,
    sharp: bool | None = False,
) -> FabricProfile:
    spec: dict[str, Any] = {"cluster": cluster, "fabric": {"technologies": [tech]}}
    if version is not None:
        spec["nccl"] = {"version": version}
    valid = parse_spec(spec)
    return fabric_profile(
        valid, design_fabric(valid, tech), PerfRequest(in_network_reduction=sharp)
    )


def labels(prof: FabricProfile, gpus: int, op: CollectiveName = "all_reduce", size: int = 8) -> Any:
    return {c.label: c for c in collective_candidates(prof, group_for(prof, gpus), op, size)}


TWO_A100_HDR = {"gpus": 2, "gpus_per_node": 1, "nics_per_node": 1, "gpu": "a100",
                "nic_speed_gbps": 200}  # fmt: skip


# --- NVLink domains are per server -------------------------------------------------------------


def test_two_servers_with_one_gpu_each_are_two_nvlink_domains() -> None:
    # 2 nodes x 1 A100 over HDR: the old model put both GPUs in the node's 8-GPU NVLink domain
    # ("1 NVLink domain(s) of 2"), never used the network and refused Tree (FP509).
    prof = profile(TWO_A100_HDR)
    group = group_for(prof, 2)
    assert (group.domains, group.local_ranks) == (2, 1)
    tree = collective_point(prof, group, "all_reduce", 8, algorithm="tree")
    assert tree.algorithm.startswith("Tree/")
    # An 8-byte all_reduce now pays at least one network step each way: NCCL's base latency, and
    # twice the tree's network step (ppn = 1) and the fabric's path.
    ring = collective_point(prof, group, "all_reduce", 8)
    net_step = prof.nccl.net_step_us["Tree"]["LL"] - NCCL_PATH_IN_NET_STEP_US
    assert ring.time_us > prof.nccl.base_latency_us["Ring"]["LL"] + 2 * net_step


def test_an_nvl72_domain_still_spans_its_trays() -> None:
    # GB200 NVL72: 72 GPUs over 18 trays of 4; two trays are one domain.
    prof = profile({"gpus": 144, "gpus_per_node": 4, "nics_per_node": 4, "gpu": "gb200-nvl72"})
    assert prof.nvlink_domain_gpus == 72
    assert group_for(prof, 8).domains == 1


# --- NCCL's tables per release -----------------------------------------------------------------


def test_the_nvls_step_is_23_us_before_2_21_and_25_after() -> None:
    # hwLat[NVLINK][NVLS][Simple]: 23 in v2.19.4-1 / v2.20.5-1, 25 from v2.21.5-1.
    gpus = {"gpus": 8}
    for version, step in (("2.19", 23.0), ("2.20", 23.0), ("2.21", 25.0), ("2.27", 25.0)):
        nvls = labels(profile(gpus, version=version), 8)["NVLS/Simple"]
        assert nvls.latency_us == pytest.approx(step)


def test_tree_simple_latencies_change_in_2_23() -> None:
    # Tree/Simple: baseLat 0 -> 8.4, hwLat NVLINK 28 -> 4, NET 28 -> 14 (v2.23.4-1); 2 nodes of
    # 8 GPUs: base + 2 * (7 * nvlink + 1 * (net - path in it + path)).
    gpus = {"gpus": 16}
    old = labels(profile(gpus, version="2.22"), 16)["Tree/Simple"]
    new = labels(profile(gpus, version="2.23"), 16)["Tree/Simple"]
    path = old.latency_us - 2 * (7 * 28.0 + (28.0 - NCCL_PATH_IN_NET_STEP_US))
    assert new.latency_us == pytest.approx(
        8.4 + 2 * (7 * 4.0 + 14.0 - NCCL_PATH_IN_NET_STEP_US) + path
    )
    assert new.latency_us < old.latency_us / 3


def test_ring_network_steps_are_two_per_node_but_one_from_2_23() -> None:
    # nInterSteps: 2 nNodes (2.19-2.22), 2 (nNodes - 1) (2.23+): on 4 nodes of 8 GPUs a Ring/LL
    # all-reduce has 62 steps, 8 or 6 of them network steps.
    gpus = {"gpus": 32}
    old = labels(profile(gpus, version="2.21"), 32)["Ring/LL"]
    new = labels(profile(gpus, version="2.23"), 32)["Ring/LL"]
    prof = profile(gpus, version="2.23")
    intra = max(prof.nccl.nvlink_step_us["Ring"]["LL"], NCCL_NET_POST_OVERHEAD_US["intel"])
    net_minus_intra = (old.latency_us - new.latency_us) / 2  # two fewer network steps
    assert net_minus_intra > 0
    hop = net_minus_intra + intra - (prof.nccl.net_step_us["Ring"]["LL"] - NCCL_PATH_IN_NET_STEP_US)
    assert 0 < hop < 5  # the fabric's path of one hop, a few microseconds at most


def test_one_rank_per_node_takes_the_trees_network_latency_from_2_23() -> None:
    # "With ppn=1 latencies are fully exposed, use the Tree network latency" (v2.23.4-1): a Ring/LL
    # step across nodes costs hwLat[NET][TREE][LL] = 5.0 instead of the ring's 2.7.
    old = labels(profile(TWO_A100_HDR, version="2.22"), 2)["Ring/LL"]
    new = labels(profile(TWO_A100_HDR, version="2.23"), 2)["Ring/LL"]
    # 2 ranks: 2 steps, 2 of them network steps in 2.23 (2 (nNodes - 1)) and in 2.22 (capped).
    assert new.latency_us - old.latency_us == pytest.approx(2 * (5.0 - 2.7))


def test_ll128_needs_a_gpu_nic_path_nccl_allows() -> None:
    # tuning.cc: LL128 only while typeInter <= PATH_PXB (<= PATH_PXN from compute capability 9.0).
    # A100 servers whose NICs hang off the CPU (phb) run a multi-node ring without LL128.
    near = profile({"gpus": 16, "gpu": "a100", "nic_speed_gbps": 100}, "roce_v2")
    far = profile(
        {"gpus": 16, "gpu": "a100", "nic_speed_gbps": 100, "host": {"gpu_nic_path": "phb"}},
        "roce_v2",
    )
    assert "Ring/LL128" in labels(near, 16)
    assert "Ring/LL128" not in labels(far, 16) and "Tree/LL128" not in labels(far, 16)
    assert "Ring/LL128" in labels(far, 8)  # inside one server LL128 stays on
    size = 2**20
    row = collective_point(far, group_for(far, 16), "all_reduce", size)
    assert "LL128" not in row.algorithm
    # Hopper may cross another GPU (PXN); Ampere may not.
    hopper_pxn = profile({"gpus": 16, "host": {"gpu_nic_path": "pxn"}})
    ampere_pxn = profile({"gpus": 16, "gpu": "a100", "nic_speed_gbps": 200,
                          "host": {"gpu_nic_path": "pxn"}})  # fmt: skip
    assert ll128_enabled(hopper_pxn, group_for(hopper_pxn, 16))
    assert not ll128_enabled(ampere_pxn, group_for(ampere_pxn, 16))


def test_pat_serves_one_gpu_per_node_gathers_from_2_23() -> None:
    # PAT (v2.23.4-1+): all_gather / reduce_scatter with 1 GPU per node; latency 8 + log2i(nNodes)
    # * interLat / 3.5 + nRanks * 2.8 us. None before 2.23, none with 8 GPUs per node.
    cluster = {"gpus": 16, "gpus_per_node": 1, "nics_per_node": 1}
    assert "PAT/Simple" not in labels(profile(cluster, version="2.22"), 16, "all_gather")
    pat = labels(profile(cluster, version="2.27"), 16, "all_gather")["PAT/Simple"]
    assert "PAT/Simple" not in labels(profile({"gpus": 128}), 128, "all_gather")
    prof = profile(cluster, version="2.27")
    inter = pat.latency_us - 8.0 - 16 * 2.8
    tree_net = prof.nccl.net_step_us["Tree"]["Simple"] - NCCL_PATH_IN_NET_STEP_US
    assert inter * 3.5 / 4 > tree_net  # log2i(16) = 4 network levels of at least NCCL's step
    assert prof.nccl.pat is not None and prof.nccl.pat.bw_share == 0.75  # 0.85 in 2.23 only
    assert nccl_tuning("2.23").pat.bw_share == 0.85  # type: ignore[union-attr]


def test_nvls_efficiency_is_per_architecture() -> None:
    # nvlsEfficiency (v2.28.9-1): Hopper 0.85, Blackwell 0.74. B200's NVLS share of its NVLink
    # bound is 0.74 / 0.85 of H100's.
    h100 = profile({"gpus": 8})
    b200 = profile({"gpus": 8, "gpu": "b200"})
    size = 8 * GIB

    def share(prof: FabricProfile) -> float:
        nvls = labels(prof, 8, size=size)["NVLS/Simple"]
        return float(nvls.algbw_GBps / (prof.nvlink_GBps * 8 / 9 * prof.collective_efficiency))

    assert share(h100) == pytest.approx(NVLS_REDUCTION_EFFICIENCY["hopper"])
    assert share(b200) / share(h100) == pytest.approx(0.74 / 0.85)


def test_every_release_line_is_stored_with_its_tag() -> None:
    assert nccl_releases() == (
        "2.19",
        "2.21",
        "2.22",
        "2.23",
        "2.24",
        "2.25",
        "2.28",
        "2.28.9",
        "2.29",
        "2.29.7",
        "2.30",
    )
    for line in nccl_releases():
        tuning = nccl_tuning(line)
        assert tuning.tag.startswith("v2.")
        assert set(tuning.sources) >= {"base_latency_us", "nvlink_step_us", "net_step_us"}
    assert nccl_tuning("2.30.7").line == "2.30"
    assert nccl_tuning("2.29.3").line == "2.29"
    assert nccl_tuning("2.29.7").line == "2.29.7"
    # NVLSTree's network step went 14 -> 20.9 inside the 2.28 series (v2.28.9-1).
    assert nccl_tuning("2.28.7").net_step_us["NVLSTree"]["Simple"] == 14.0
    assert nccl_tuning("2.28.9").net_step_us["NVLSTree"]["Simple"] == 20.9
    assert nccl_tuning("2.20").sources["nvlink_step_us"] == "v2.19.4-1"
    assert nccl_tuning("2.22.3").sources["nvlink_step_us"] == "v2.21.5-1"


def test_trees_run_all_their_threads_from_2_22() -> None:
    # topoGetAlgoInfo (src/enqueue.cc): "Tree now uses all threads always" from v2.22.3-1, nt =
    # NCCL_MAX_NTHREADS (640); before, LL kept 512 threads, halved for a small one-channel buffer.
    assert nccl_tuning("2.21").tree_threads is None
    assert nccl_tuning("2.22").tree_threads == nccl_tuning("2.30").tree_threads == 640
    old = tree_shape(8, 2, "LL", 16, 1024)
    new = tree_shape(8, 2, "LL", 16, 1024, fixed_threads=nccl_tuning("2.22").tree_threads)
    assert (old.trip_bytes, new.trip_bytes) == (128 * 8 * 0.5, 640 * 8 * 0.5)


@pytest.mark.parametrize(
    ("version", "blackwell"),
    [("2.25", 73.4), ("2.28.9", 34.6), ("2.29.2", 34.6), ("2.29.7", 40.0), ("2.30", 40.0)],
)
def test_ring_ll128_has_a_per_channel_cap_from_2_25(version: str, blackwell: float) -> None:
    # perChMaxRingLL128Bws (src/graph/tuning.cc), two-node column: new in v2.25.1-1 (Blackwell
    # 2 x 36.7), 34.6 from v2.28.9-1, 40.0 from v2.29.7-1; Hopper 36.7 throughout.
    table = nccl_tuning(version).ring_ll128_channel_busbw_GBps
    assert table is not None
    assert table["blackwell"][1] == blackwell
    assert table["hopper"] == (36.7, 36.7, 36.7)
    assert nccl_tuning("2.24").ring_ll128_channel_busbw_GBps is None


def test_the_ring_ll128_cap_binds_where_the_network_is_faster() -> None:
    # 4 x 8 H100 with eight 400G NICs: LL128's ring bus bandwidth is 0.92 x the NIC-bound ring's,
    # above 8 channels x 36.7 GB/s, so NCCL's 2.25+ cap binds; 2.24 has no cap.
    def ll128_busbw(version: str) -> float:
        valid = parse_spec({"cluster": {"gpus": 32}, "nccl": {"version": version}})
        profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
        group = group_for(profile, 32)
        ring = next(
            c
            for c in collective_candidates(profile, group, "all_reduce", 2**28)
            if c.label == "Ring/LL128"
        )
        return ring.algbw_GBps * busbw_factor("all_reduce", 32) / profile.collective_efficiency

    assert ll128_busbw("2.30") == pytest.approx(8 * 36.7)
    assert ll128_busbw("2.24") > 8 * 36.7


def test_an_nccl_older_than_the_tables_is_refused() -> None:
    with pytest.raises(ModelError) as err:
        nccl_tuning("2.18")
    assert err.value.code == "FP801"
    with pytest.raises(FabricPlanError):
        parse_spec({"cluster": {"gpus": 8}, "nccl": {"version": "two"}})


# --- the host side -----------------------------------------------------------------------------


def test_a_100g_nic_in_a_gen3_x8_slot_is_bounded_by_the_slot() -> None:
    # PCIe Gen3 x8: 8 GT/s x 8 lanes x 128/130 = 63.0 Gb/s, 256-byte TLPs: 57.6 Gb/s of payload.
    cluster = {"gpus": 16, "gpu": "a100", "nic_speed_gbps": 100,
               "host": {"nic_slot": {"generation": 3, "lanes": 8}}}  # fmt: skip
    prof = profile(cluster, "roce_v2")
    slot = host_goodput_gbps(8 * 8 * 128 / 130)
    assert prof.host_goodput_gbps == pytest.approx(slot)
    assert p2p_point(prof, "write_bw", 8 * 2**20, 1).bw_gbps == pytest.approx(slot)
    assert slot < 60


def test_one_gpu_uses_the_nics_on_its_pcie_switch() -> None:
    # 2 x 1 H100 with four 400G NICs: an HGX H100 puts one NIC on each GPU's PCIe switch, and
    # NCCL uses the closest NICs, so one GPU drives one NIC (the old model gave it all four:
    # Tree 121 GB/s).
    prof = profile({"gpus": 2, "gpus_per_node": 1, "nics_per_node": 4})
    assert prof.rank_nics_per_node == 1.0
    tree = collective_point(prof, group_for(prof, 2), "all_reduce", 8 * GIB, algorithm="tree")
    assert tree.busbw_GBps <= prof.nic_goodput_GBps * 2  # two domains: at most twice one NIC
    assert tree.busbw_GBps < 60


# --- all_to_all: posting overlaps the data -----------------------------------------------------


def test_all_to_all_posts_overlap_the_transfer() -> None:
    # 256 H100 GPUs, 16 MiB per rank: each rank posts one 64 KiB chunk to each of 248 remote
    # peers (1 us each, 248 us) while 16 MiB x 248/256 moves at its NICs' rate (~344 us). The old
    # model added the posts to the transfer (613.7 us against the flow level's 328.5 us).
    prof = profile({"gpus": 256}, sharp=None)
    group = group_for(prof, 256)
    size = 16 * 2**20
    row = collective_point(prof, group, "all_to_all", size)
    (p2p,) = collective_candidates(prof, group, "all_to_all", size)
    transfer = size / (p2p.algbw_GBps * 1e3)
    assert p2p.post_us == pytest.approx(248 * NCCL_NET_POST_OVERHEAD_US["intel"])
    assert transfer > p2p.post_us
    assert row.time_us == pytest.approx(p2p.latency_us + transfer)
    assert row.time_us < 400


def test_the_spec_default_is_the_newest_release_read() -> None:
    from fabricplan.analytic.nccl_tuning import DEFAULT_NCCL_VERSION
    from fabricplan.model.scenario import NcclSpec

    assert NcclSpec().version == DEFAULT_NCCL_VERSION
    assert nccl_tuning(DEFAULT_NCCL_VERSION).line == nccl_releases()[-1]


@settings(derandomize=True, deadline=None)
@given(minor=st.integers(min_value=19, max_value=99), patch=st.integers(min_value=0, max_value=9))
def test_a_release_takes_the_newest_line_not_after_it(minor: int, patch: int) -> None:
    version = f"2.{minor}.{patch}"
    line = nccl_tuning(version).line

    def key(text: str) -> tuple[int, ...]:
        parts = [int(x) for x in text.split(".")]
        return tuple(parts + [0] * (3 - len(parts)))

    chosen, asked = key(line), key(version)
    assert chosen <= asked
    assert all(key(other) <= chosen or key(other) > asked for other in nccl_releases())


@settings(derandomize=True, deadline=None)
@given(minor=st.integers(min_value=0, max_value=18))
def test_every_release_before_2_19_is_refused(minor: int) -> None:
    with pytest.raises(ModelError):
        nccl_tuning(f"2.{minor}")


def test_a_host_override_is_checked_at_the_edge() -> None:
    bad_lanes = {"gpus": 8, "host": {"nic_slot": {"generation": 4, "lanes": 3}}}
    bad_path = {"gpus": 8, "host": {"gpu_nic_path": "near"}}
    for cluster in (bad_lanes, bad_path):
        with pytest.raises(FabricPlanError) as err:
            parse_spec({"cluster": cluster})
        assert "cluster.host" in str(err.value)


def test_an_unquoted_yaml_version_is_refused_with_the_reason() -> None:
    # YAML reads 2.30 as the number 2.3: that would silently mean NCCL 2.3.
    with pytest.raises(FabricPlanError) as err:
        parse_spec({"cluster": {"gpus": 8}, "nccl": {"version": 2.30}})
    assert "quote it" in str(err.value)


def test_ring_ll_share_per_release() -> None:
    # 2.19-2.20: Ring LL busBw x 1/4 across nodes or for a reduction, x 1/3 for a one-node
    # gather; 2.21+: x 0.5 always; then the one-node LL ceiling (llMaxBws, Ampere 87.7 GB/s).
    a100 = {"gpus": 8, "gpu": "a100", "nic_speed_gbps": 200}

    def expected(version: str, share: float, factor: float) -> float:
        prof = profile(a100, version=version)
        cap = prof.nccl.ll_one_node_busbw_GBps["ampere"]
        return min(prof.nvlink_GBps * share, cap) * prof.collective_efficiency / factor

    for version, op, share, factor in (
        ("2.19", "all_gather", 1 / 3, 7 / 8),
        ("2.19", "all_reduce", 1 / 4, 2 * 7 / 8),
        ("2.21", "all_gather", 1 / 2, 7 / 8),
    ):
        ring = labels(profile(a100, version=version), 8, op, 2**20)["Ring/LL"]
        assert ring.algbw_GBps == pytest.approx(expected(version, share, factor))
    # NVLink 3 (259.5 GB/s through NCCL): 1/3 and 1/4 stay under the ceiling, 1/2 reaches it.
    nvlink = profile(a100).nvlink_GBps
    assert nvlink / 4 < nvlink / 3 < 87.7 < nvlink / 2


# --- NVLSTree: only the NVLS heads carry the inter-domain traffic (NCCL 2.28+) ------------------


def _nvlstree(version: str, nodes: int) -> CollectivePoint:
    valid = parse_spec(
        {"cluster": {"gpus": 8 * nodes, "gpu": "h100"}, "nccl": {"version": version}}
    )
    prof = fabric_profile(valid, design_fabric(valid, "infiniband"))
    return collective_point(prof, group_for(prof, 8 * nodes), "all_reduce", 2**33, "nvlstree")


@pytest.mark.parametrize(("nodes", "per_head"), [(2, 57.7), (4, 45.5), (8, 45.5)])
def test_nvlstree_is_bound_by_its_heads_from_2_28(nodes: int, per_head: float) -> None:
    # perChMaxNVLSTreeBws (v2.28.3-1 .. v2.30.7-1), Hopper: 57.7 GB/s of bus bandwidth per head
    # on two nodes, 45.5 beyond; 8 NICs give 8 heads, and the run keeps the model's efficiency.
    point = _nvlstree("2.30", nodes)
    assert point.busbw_GBps == pytest.approx(8 * per_head * DEFAULT_COLLECTIVE_EFFICIENCY, rel=0.01)


def test_before_2_28_nvlstree_has_no_per_head_bound() -> None:
    assert nccl_tuning("2.27").nvlstree_channel_busbw_GBps is None
    # without the per-head cap, 4 nodes reach the network's bound, above 2.28's 8 heads x 45.5
    assert _nvlstree("2.27", 4).busbw_GBps > 8 * 45.5 * DEFAULT_COLLECTIVE_EFFICIENCY


def test_a_rack_of_fewer_trays_is_a_smaller_nvlink_domain() -> None:
    # 32 GB200 trays in two racks of 16: two 64-GPU NVLink domains, where the catalog's NVL72
    # (18 trays) cannot divide 128 GPUs evenly.
    def group(host: dict[str, Any]) -> Any:
        cluster = {"gpus": 128, "gpu": "gb200-nvl72", "gpus_per_node": 4, "nics_per_node": 4}
        valid = parse_spec({"cluster": {**cluster, "host": host}})
        prof = fabric_profile(valid, design_fabric(valid, "infiniband"))
        return group_for(prof, 128)

    assert (
        group({"nvlink_domain_gpus": 64}).domains,
        group({"nvlink_domain_gpus": 64}).local_ranks,
    ) == (2, 64)
    with pytest.raises(ModelError) as err:
        group({})
    assert err.value.code == "FP505"


def test_amd_hosts_take_nccls_amd_ll_ceiling_and_post_overhead() -> None:
    # llMaxBws[1] ("AMD-N2/AMD-N4" 22.5 / 19.0 GB/s, Intel 39.0 / 20.4) and getNetOverhead (2 us
    # on AMD x86, 1 us on Intel), tuning.cc v2.19-v2.30: NCCL reads the CPU vendor of the hosts.
    intel = {"gpus": 16, "gpu": "a100", "nic_speed_gbps": 200}
    amd = {**intel, "host": {"cpu_vendor": "amd"}}
    arm = {**intel, "host": {"cpu_vendor": "arm"}}
    p_intel, p_amd, p_arm = profile(intel), profile(amd), profile(arm)
    factor = 2 * 15 / 16  # all-reduce bus bandwidth over algorithm bandwidth, 16 ranks
    eta = p_intel.collective_efficiency
    for prof, cap in ((p_intel, 39.0), (p_amd, 22.5), (p_arm, 39.0)):
        ring_ll = labels(prof, 16)["Ring/LL"]
        assert ring_ll.algbw_GBps * factor / eta <= cap + 1e-9
        assert ring_ll.algbw_GBps * factor / eta == pytest.approx(cap)  # LL is at its ceiling
    # a ring step across nodes costs at least the post overhead: 30 steps, 2 of them network
    steps_intel = labels(p_intel, 16)["Ring/LL"].latency_us
    steps_amd = labels(p_amd, 16)["Ring/LL"].latency_us
    assert steps_amd - steps_intel == pytest.approx(28 * (2.0 - 1.0))
    simple_gap = labels(p_amd, 16)["Ring/Simple"].latency_us
    simple_gap -= labels(p_intel, 16)["Ring/Simple"].latency_us
    # Simple: max(hwLat NVLink 3.4, 3 x post): 3.4 on Intel, 6.0 on AMD
    nvlink_simple = p_intel.nccl.nvlink_step_us["Ring"]["Simple"]
    assert simple_gap == pytest.approx(28 * (3 * 2.0 - nvlink_simple))
    with pytest.raises(SpecError):
        parse_spec({"cluster": {"gpus": 16, "host": {"cpu_vendor": "power9"}}})


def test_nvls_enable_0_leaves_nvlink_sharp_out() -> None:
    # NCCL_NVLS_ENABLE=0 disables NVLS and NVLSTree even on NVSwitch nodes that have them: an
    # 8 B all-reduce over 4 x 8 H100 then runs the tree (what NCCL's tuner rates next).
    def algorithms(nvls_enable: bool) -> set[str]:
        spec = {"cluster": {"gpus": 32}, "nccl": {"nvls_enable": nvls_enable}}
        valid = parse_spec(spec)
        profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
        group = group_for(profile, 32)
        return {c.algorithm for c in collective_candidates(profile, group, "all_reduce", 8)}

    assert "NVLSTree" in algorithms(True)
    assert not {"NVLS", "NVLSTree"} & algorithms(False)
