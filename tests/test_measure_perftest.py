"""perftest output: bandwidth and latency tables, text (Gb/s, MB/sec, MiB/sec) and --out_json."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricplan.errors import InputFileError
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord
from fabricplan.measure.perftest_json import parse_perftest_json, relaxed_perftest_json
from fabricplan.measure.reader import read_bench_file, read_bench_text

DATA = Path(__file__).parent / "data" / "measure"
MIB = 2**20


def _read(name: str) -> BenchFileRecord:
    return read_bench_file(DATA / name)


def _row(record: BenchFileRecord, size: int) -> MeasurementRecord:
    return next(m for m in record.measurements if m.size_bytes == size)


def test_write_bw_report_gbits_all_sizes() -> None:
    record = _read("perftest_write_bw_gbits.log")
    (run,) = record.runs
    assert (run.test, run.technology_hint, run.mtu_bytes, run.device) == (
        "write_bw",
        "infiniband",
        4096,
        "mlx5_0",
    )
    assert [m.size_bytes for m in record.measurements] == [2**k for k in range(1, 24)]
    row = _row(record, 65536)
    assert (row.bw_gbps, row.bw_peak_gbps, row.msg_rate_mpps) == (389.20, 390.76, 0.742341)
    # perftest's own identity: bandwidth = size x message rate.
    assert row.msg_rate_mpps is not None
    assert row.bw_gbps == pytest.approx(65536 * 8 * row.msg_rate_mpps * 1e6 / 1e9, rel=1e-4)
    # time per message = size / bandwidth: 65536 B at 389.2 Gb/s = 1.347 us.
    assert row.time_us == pytest.approx(65536 * 8 / 389.20e3)
    assert row.latency_us is None and row.quantity == "bw_gbps"


def test_read_bw_in_mb_per_sec_on_roce() -> None:
    record = _read("perftest_read_bw_roce_mb.log")
    (run,) = record.runs
    assert (run.test, run.technology_hint, run.mtu_bytes) == ("read_bw", "roce", 1024)
    row = _row(record, 65536)
    # 21845.33 "MB/sec" is MiB/s (perftest divides by 0x100000): 183.25 Gb/s.
    assert row.bw_gbps == pytest.approx(21845.33 * MIB * 8 / 1e9)
    assert any("Conflicting CPU frequency" in w for w in record.warnings)


def test_bidirectional_send_bw_in_mib_per_sec() -> None:
    record = _read("perftest_send_bw_bidir_mib.log")
    row = _row(record, MIB)
    assert row.test == "send_bw" and row.bidirectional
    assert row.bw_gbps == pytest.approx(92870.45 * MIB * 8 / 1e9)


def test_write_lat_nine_column_table() -> None:
    record = _read("perftest_write_lat.log")
    assert record.runs[0].test == "write_lat"
    row = _row(record, 2)
    assert (row.latency_us, row.latency_min_us, row.latency_p99_us) == (1.01, 0.98, 1.22)
    assert row.time_us == row.latency_us and row.quantity == "latency_us"
    assert len(record.measurements) == 12


def test_old_five_column_latency_table_cut_at_the_end() -> None:
    record = _read("perftest_read_lat_roce_old.log")
    (run,) = record.runs
    assert (run.test, run.technology_hint) == ("read_lat", "roce")
    assert [m.latency_us for m in record.measurements] == [3.47, 3.48, 3.49]
    assert record.measurements[0].latency_p99_us is None
    assert not run.complete
    assert any("closing rule" in w for w in record.warnings)


def test_json_output() -> None:
    record = _read("perftest_write_bw.json")
    row = record.measurements[0]
    assert record.format == "perftest json"
    assert (row.test, row.size_bytes, row.bw_gbps) == ("write_bw", 65536, 389.20)
    assert record.runs[0].technology_hint == "infiniband"


def test_old_unquoted_json_of_issue_216() -> None:
    record = _read("perftest_write_lat_old.json")
    row = record.measurements[0]
    assert (row.test, row.size_bytes, row.latency_us, row.latency_p99_us) == (
        "write_lat",
        2,
        1.78,
        2.11,
    )
    assert record.runs[0].technology_hint == "roce" and record.runs[0].device == "mlx5_4"


@pytest.mark.parametrize(
    ("average", "rate", "expected_gbps"),
    [
        (389.2, 0.742341, 389.2),  # --report_gbits
        (46396.5, 0.742341, 46396.5 * MIB * 8 / 1e9),  # MiB/s
    ],
)
def test_json_bandwidth_unit_is_told_by_the_message_rate(
    average: float, rate: float, expected_gbps: float
) -> None:
    doc = {
        "test_info": {"test": "RDMA_Write_BW_Test"},
        "results": {"MsgSize": 65536, "BW_average": average, "MsgRate": rate},
    }
    row = parse_perftest_json(doc, "x.json").drafts[0].rows[0]
    assert row["bw_gbps"] == pytest.approx(expected_gbps)


def test_relaxed_json_names_the_unreadable_line() -> None:
    with pytest.raises(InputFileError) as info:
        relaxed_perftest_json("{\ntest_info: {\nthis line is not a pair\n}\n}", "old.json")
    assert info.value.code == "FP453" and info.value.where == "old.json:3"


def test_duration_latency_uses_t_avg() -> None:
    text = """                    Send Latency Test
 Link type       : IB
 #bytes        #iterations       t_avg[usec]    tps average
 2             812345            1.23           406504.07
---------------------------------------------------------------------------------------
"""
    row = read_bench_text(text, "lat.log").measurements[0]
    assert (row.test, row.latency_us) == ("send_lat", 1.23)


def test_cycles_are_not_read_as_microseconds() -> None:
    text = """                    RDMA_Write Latency Test
 #bytes #iterations    t_min[cycles]    t_max[cycles]  t_typical[cycles]
 2       1000          2310           9012         2401
"""
    with pytest.raises(InputFileError) as info:
        read_bench_text(text, "cycles.log")
    assert info.value.code == "FP451"
    assert "cycles" in str(info.value)


def test_two_runs_in_one_log_keep_their_own_context() -> None:
    text = (DATA / "perftest_write_bw_gbits.log").read_text() + (
        DATA / "perftest_read_lat_roce_old.log"
    ).read_text()
    record = read_bench_text(text, "both.log")
    assert [(r.test, r.technology_hint) for r in record.runs] == [
        ("write_bw", "infiniband"),
        ("read_lat", "roce"),
    ]
