"""nccl-tests and rccl-tests output, every layout the tools have printed (fixtures in
tests/data/measure, written by us in the published formats)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord
from fabricplan.measure.reader import read_bench_file, read_bench_text

DATA = Path(__file__).parent / "data" / "measure"


def _read(name: str) -> BenchFileRecord:
    return read_bench_file(DATA / name)


def _row(record: BenchFileRecord, size: int, run: int = 0) -> MeasurementRecord:
    return next(m for m in record.measurements if m.size_bytes == size and m.run == run)


def busbw_from_algbw(m: MeasurementRecord, op: str, n: int) -> float:
    """nccl-tests' busbw for the row's algbw: algbw x the collective's factor."""
    assert m.algbw_GBps is not None
    return m.algbw_GBps * ring_factor(op, n)


def ring_factor(op: str, n: int) -> float:
    """busbw / algbw from nccl-tests doc/PERFORMANCE.md."""
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def test_2023_layout_with_mpi_prefixes_reads_three_operations() -> None:
    record = _read("nccl_2023_multi_roce_mpi.log")
    assert [r.test for r in record.runs] == ["all_reduce", "all_gather", "all_to_all"]
    assert all(r.ranks == 32 and r.nodes == 4 for r in record.runs)
    assert record.runs[0].hosts == ("gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04")
    # The 1 GiB all_reduce row as printed: 5869.9 us, algbw 182.92, busbw 354.42.
    row = _row(record, 2**30)
    assert (row.time_us, row.algbw_GBps, row.busbw_GBps) == (5869.9, 182.92, 354.42)
    assert (row.in_place_time_us, row.in_place_busbw_GBps) == (5971.9, 348.36)
    assert row.wrong == 0 and row.dtype == "float" and row.redop == "sum"
    # The numbers are nccl-tests' own: algbw = size / time, busbw = algbw * 2(n-1)/n.
    assert row.algbw_GBps == pytest.approx(2**30 / row.time_us / 1e3, rel=1e-3)
    assert row.busbw_GBps == pytest.approx(busbw_from_algbw(row, "all_reduce", 32), rel=1e-3)
    alltoall = _row(record, 2**30, run=2)
    assert (alltoall.time_us, alltoall.busbw_GBps) == (24851.0, 41.86)
    assert alltoall.busbw_GBps == pytest.approx(43.21 * ring_factor("all_to_all", 32), rel=1e-3)
    assert len(record.measurements) == 33


def test_2023_layout_context_technology_env_and_footer() -> None:
    record = _read("nccl_2023_multi_roce_mpi.log")
    run = record.runs[0]
    assert run.technology_hint == "roce"
    assert run.env["NCCL_IB_GID_INDEX"] == "3"  # NCCL prints "to 3." with a full stop
    assert run.env["NCCL_IB_TC"] == "106"
    assert run.avg_busbw_GBps == pytest.approx(127.313)
    assert run.complete
    warns = [w for w in record.warnings if "NCCL WARN" in w]
    assert len(warns) == 1 and ":110:" in warns[0] and "status=12" in warns[0]


def test_2020_layout_without_redop_and_with_error_column() -> None:
    record = _read("nccl_2020_allgather_error.log")
    (run,) = record.runs
    assert run.test == "all_gather"  # from the mpirun line echoed above the table
    assert (run.ranks, run.nodes) == (16, 2)
    row = _row(record, 2**30)
    assert (row.time_us, row.algbw_GBps, row.busbw_GBps) == (91894.0, 11.68, 10.95)
    assert row.redop is None and row.dtype == "float"
    # "error" was the largest difference, not a count: no #wrong is reported.
    assert row.wrong is None
    assert row.busbw_GBps == pytest.approx(busbw_from_algbw(row, "all_gather", 16), rel=2e-3)


def test_2017_layout_reads_milliseconds_and_unmarked_footer() -> None:
    record = _read("nccl_2017_allreduce_ms.log")
    (run,) = record.runs
    assert run.complete and run.avg_busbw_GBps is not None
    row = _row(record, 16 * 2**20)
    assert row.time_us == pytest.approx(791.0)  # printed as 0.791 ms
    assert row.algbw_GBps == pytest.approx(16 * 2**20 / row.time_us / 1e3, rel=2e-3)
    assert run.ranks == 8 and run.nodes == 1


def test_2025_layout_cut_in_a_row_keeps_what_was_read() -> None:
    record = _read("nccl_2025_allreduce_cut.log")
    (run,) = record.runs
    assert run.test == "all_reduce" and run.technology_hint == "infiniband"
    assert not run.complete
    # 8 B .. 16 MiB complete, 32 MiB with its out-of-place half, 64 MiB unreadable.
    sizes = [m.size_bytes for m in record.measurements]
    assert sizes == [2**k for k in range(3, 26)]
    last = _row(record, 2**25)
    assert (last.busbw_GBps, last.in_place_busbw_GBps) == (321.68, None)
    text = "\n".join(record.warnings)
    assert "Test NCCL failure" in text and "without its footer" in text
    assert ":51: row skipped" in text


def test_per_iteration_columns_do_not_shift_the_in_place_values() -> None:
    record = _read("nccl_2025_reducescatter_periter.log")
    row = _row(record, 2**29)
    assert (row.time_us, row.algbw_GBps, row.busbw_GBps) == (1388.0, 386.79, 362.62)
    assert (row.in_place_time_us, row.in_place_busbw_GBps) == (1393.55, 361.17)
    assert record.runs[0].test == "reduce_scatter"
    assert record.runs[0].hosts == ("h200-01", "h200-02")


def test_rccl_in_place_only_table() -> None:
    record = _read("rccl_allreduce_inplace.log")
    assert record.format == "rccl-tests text"
    row = _row(record, 2**27)
    assert row.flavor == "rccl-tests" and row.placement == "in_place"
    assert (row.time_us, row.busbw_GBps) == (1587.9, 147.92)


def test_nccl_json_reads_results_devices_and_program() -> None:
    record = _read("nccl_allreduce_2n.json")
    (run,) = record.runs
    assert record.format == "nccl-tests json"
    assert run.test == "all_reduce" and (run.ranks, run.nodes) == (16, 2)
    assert run.env["NCCL_IB_HCA"].count("mlx5_") == 8
    assert run.avg_busbw_GBps == pytest.approx(123.456)
    assert len(record.measurements) == 11
    row = _row(record, 2**33)
    assert row.busbw_GBps == pytest.approx(busbw_from_algbw(row, "all_reduce", 16))


def test_cut_nccl_json_is_salvaged() -> None:
    record = _read("nccl_cut.json")
    (run,) = record.runs
    assert not run.complete and run.ranks == 16
    assert max(m.size_bytes for m in record.measurements) == 2**24
    assert any("cut short" in w for w in record.warnings)


@pytest.mark.parametrize(
    ("name", "fmt", "test"),
    [
        ("rccl_allreduce.jsonl", "rccl-tests json lines", "all_reduce"),
        ("rccl_allgather.json", "rccl-tests json", "all_gather"),
        ("rccl_alltoall.csv", "rccl-tests csv", "all_to_all"),
    ],
)
def test_rccl_records_pair_in_and_out_of_place(name: str, fmt: str, test: str) -> None:
    record = _read(name)
    assert record.format == fmt
    (run,) = record.runs
    assert run.test == test and run.ranks == 8
    assert [m.size_bytes for m in record.measurements] == [1024, 65536, 4194304, 268435456]
    for m in record.measurements:
        assert m.placement == "out_of_place"
        assert m.in_place_busbw_GBps is not None
        assert m.busbw_GBps == pytest.approx(busbw_from_algbw(m, test, 8), rel=1e-4, abs=1e-6)


def test_rccl_json_lines_values_and_lines() -> None:
    record = _read("rccl_allreduce.jsonl")
    row = _row(record, 268435456)
    assert row.time_us == pytest.approx(3375.4432)
    assert row.busbw_GBps == pytest.approx(139.1704793017995)
    assert row.in_place_busbw_GBps == pytest.approx(138.754216651844)
    assert row.line == 7


HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong"
)


def _table(rows: list[str], footer: bool = True) -> str:
    lines = [HEADER, *rows]
    if footer:
        lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.0"]
    return "\n".join(lines) + "\n"


def test_operation_from_file_name_and_op_option() -> None:
    text = _table(["  4194304 1048576 float sum -1  80.0 52.43 98.30 0  80.0 52.43 98.30 0"])
    assert read_bench_text(text, "logs/allreduce-16g.log").runs[0].test == "all_reduce"
    assert read_bench_text(text, "run7.log").runs[0].test == "unknown"
    assert read_bench_text(text, "run7.log", op="all_gather").runs[0].test == "all_gather"


def test_wrong_elements_are_counted_and_warned() -> None:
    text = _table(["  4194304 1048576 float sum -1  80.0 52.43 98.30 3  80.0 52.43 98.30 1"])
    record = read_bench_text(text, "ar.log")
    assert record.measurements[0].wrong == 4
    assert any("wrong elements" in w for w in record.warnings)


def test_ranks_inferred_from_busbw_over_algbw_without_device_list() -> None:
    # all_reduce on 8 ranks: busbw/algbw = 2*7/8 = 1.75.
    text = _table(
        ["  268435456 67108864 float sum -1  2000.0 134.22 234.88 0 2000 134.22 234.88 0"]
    )
    record = read_bench_text(text, "all_reduce_perf.log")
    assert record.runs[0].ranks == 8
    assert any("inferred" in w for w in record.warnings)


@pytest.mark.parametrize(
    "prefix",
    [
        "[1,0]<stdout>:",
        "0: ",
        "[0] ",
        "2026-03-02T10:14:07.123456Z ",
        "2026-03-02T10:14:07Z [1,0]<stdout>:",
    ],
)
def test_launcher_prefixes_are_removed(prefix: str) -> None:
    text = _table(["  4194304 1048576 float sum -1  80.0 52.43 98.30 0  80.0 52.43 98.30 0"])
    prefixed = "\n".join(prefix + line for line in text.splitlines())
    record = read_bench_text(prefixed, "all_reduce.log")
    assert record.measurements[0].busbw_GBps == 98.30


def test_socket_transport_is_detected() -> None:
    text = "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n" + _table(
        ["  4194304 1048576 float sum -1  800.0 5.24 9.83 0  800.0 5.24 9.83 0"]
    )
    assert read_bench_text(text, "ar.log").runs[0].technology_hint == "socket"
