"""What cannot be read gets one clear line; whatever is thrown at the parsers, they never crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricplan.errors import InputFileError
from fabricplan.measure.measurement import BenchFileRecord
from fabricplan.measure.nccl_json import parse_nccl_json, parse_rccl_records
from fabricplan.measure.nccl_text import parse_nccl_text
from fabricplan.measure.perftest_json import parse_perftest_json, relaxed_perftest_json
from fabricplan.measure.perftest_text import parse_perftest_text
from fabricplan.measure.reader import read_bench_file, read_bench_text

DATA = Path(__file__).parent / "data" / "measure"
FUZZ = settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize(
    ("content", "code", "where"),
    [
        (b"", "FP451", "f.log"),
        (b"   \n\n", "FP451", "f.log"),
        (b"hello\nworld\n", "FP452", "f.log:1"),
        (b"\x00\x01\x02ELF", "FP455", "f.log"),
        (b'{"results": [1, 2', "FP453", "f.log:1:"),
        (b"# size count type redop root time algbw busbw #wrong\n# nothing\n", "FP451", "f.log:1"),
    ],
)
def test_unreadable_files_name_file_line_and_code(
    tmp_path: Path, content: bytes, code: str, where: str
) -> None:
    path = tmp_path / "f.log"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as info:
        read_bench_file(path)
    error = info.value
    assert error.code == code
    assert error.where.startswith(str(tmp_path / where)), error.where
    assert "\n" not in str(error) and str(error).endswith(f"[{code}]")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputFileError) as info:
        read_bench_file(tmp_path / "nope.log")
    assert info.value.code == "FP450"
    with pytest.raises(InputFileError) as info:
        read_bench_file(tmp_path)
    assert info.value.code == "FP450" and "directory" in str(info.value)


def test_byte_order_mark_and_bad_utf8_are_tolerated(tmp_path: Path) -> None:
    text = (DATA / "perftest_write_lat.log").read_bytes()
    path = tmp_path / "lat.log"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace(b"Link type", b"\xff Link type", 1))
    assert len(read_bench_file(path).measurements) == 12


def test_log_starting_with_a_shell_prompt_in_brackets_is_text() -> None:
    record = read_bench_file(DATA / "perftest_read_bw_roce_mb.log")
    assert record.format == "perftest text"  # starts with "[root@roce-h07 ~]#"


def test_one_log_with_nccl_tests_and_perftest_output() -> None:
    text = (DATA / "nccl_2020_allgather_error.log").read_text() + (
        DATA / "perftest_write_bw_gbits.log"
    ).read_text()
    record = read_bench_text(text, "acceptance.log")
    assert record.format == "nccl-tests text+perftest text"
    assert [r.test for r in record.runs] == ["all_gather", "write_bw"]


def test_every_fixture_reads(tmp_path: Path) -> None:
    for path in sorted(DATA.iterdir()):
        record = read_bench_file(path)
        assert record.measurements, path
        assert all(m.size_bytes > 0 and m.time_us >= 0 for m in record.measurements)


# ----------------------------------------------------------------------------------- fuzzing

_FRAGMENTS = [
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong",
    "#      bytes             N    type      op     time  algbw  busbw      res",
    "#                              in-place",
    "# Out of bounds values : 3 FAILED",
    "# Avg bus bandwidth    : 12.5",
    "#  Rank  0 Group  0 Pid  1 on node1 device  0 [0000:18:00] NVIDIA H100",
    "n1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE",
    "n1:1:1 [0] NCCL WARN NET/IB : Got completion with status=12",
    "NCCL_IB_GID_INDEX=3 ./build/all_reduce_perf -b 8",
    "# Collective test starting: alltoall_perf",
    "                    RDMA_Write BW Test",
    "                    RDMA_Read Latency Test",
    " Link type       : Ethernet",
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]",
    "-" * 87,
    "name,size,type,redop,inPlace,time,algBw,busBw,#wrong,gpus",
    "[1,0]<stdout>:",
    "{",
    "}",
    "[",
    "test_info: {",
    "MsgSize: 12,",
]
_NUMBER = st.one_of(
    st.integers(-5, 2**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: f"{f:.3g}"),
    st.sampled_from(["N/A", "0e+00", "1e+400", "-1", "nan", "12*", "sum", "float", "none"]),
)
_ROW = st.lists(_NUMBER, min_size=1, max_size=16).map(lambda t: "  " + "  ".join(t))
_LINE = st.one_of(st.sampled_from(_FRAGMENTS), _ROW, st.text(max_size=60))
_LOG = st.lists(_LINE, max_size=40).map("\n".join)


def _reads_or_refuses(text: str) -> None:
    try:
        record = read_bench_text(text, "fuzz.log")
    except InputFileError as error:
        assert error.code.startswith("FP4")
        return
    assert isinstance(record, BenchFileRecord) and record.measurements


@FUZZ
@given(_LOG)
def test_fuzz_text_reader_never_crashes(text: str) -> None:
    _reads_or_refuses(text)


@FUZZ
@given(_LOG)
def test_fuzz_text_parsers_never_crash(text: str) -> None:
    lines = list(enumerate(text.splitlines(), 1))
    for outcome in (parse_nccl_text(lines, "f"), parse_perftest_text(lines, "f")):
        for draft in outcome.drafts:
            draft.freeze("f", 0)


_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-10, 2**70),
        st.floats(allow_nan=False),
        st.text(max_size=12),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "size",
                    "results",
                    "out_of_place",
                    "in_place",
                    "time",
                    "alg_bw",
                    "bus_bw",
                    "nwrong",
                    "args",
                    "env",
                    "config",
                    "devices",
                    "hostname",
                    "errors",
                    "test_info",
                    "MsgSize",
                    "BW_average",
                    "MsgRate",
                    "t_typical",
                    "busBw",
                    "algBw",
                    "inPlace",
                    "name",
                    "gpus",
                    "average_bus_bandwidth",
                    "out_of_bounds",
                    "count",
                    "bandwidth",
                    "test",
                    "Link_type",
                ]
            ),
            inner,
            max_size=6,
        ),
    ),
    max_leaves=25,
)


@FUZZ
@given(_JSON)
def test_fuzz_json_documents_never_crash(doc: Any) -> None:
    _reads_or_refuses(json.dumps(doc))
    if isinstance(doc, dict):
        for outcome in (
            parse_nccl_json(doc, "f"),
            parse_perftest_json(doc, "f"),
            parse_rccl_records([(1, doc)], "f", "rccl-tests json"),
        ):
            for draft in outcome.drafts:
                draft.freeze("f", 0)


@FUZZ
@given(_JSON, st.integers(0, 400))
def test_fuzz_cut_json_never_crashes(doc: Any, cut: int) -> None:
    _reads_or_refuses(json.dumps({"results": [doc, doc], "args": ["all_reduce_perf"]})[:cut])


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["{", "}", "},", "a: {", "b: 1,", "c: x", ""]), st.text(max_size=20)
        ),
        max_size=20,
    ).map("\n".join)
)
def test_fuzz_relaxed_json_reads_or_names_the_line(text: str) -> None:
    try:
        relaxed_perftest_json(text, "old.json")
    except InputFileError as error:
        assert error.code == "FP453" and error.where.startswith("old.json:")


_FIXTURES = sorted(p.name for p in DATA.iterdir())


@FUZZ
@given(
    st.sampled_from(_FIXTURES), st.integers(0, 20_000), st.text(max_size=8), st.integers(0, 20_000)
)
def test_fuzz_real_logs_cut_and_damaged(name: str, cut: int, junk: str, where: int) -> None:
    text = (DATA / name).read_text()[:cut]
    _reads_or_refuses(text[:where] + junk + text[where:])
