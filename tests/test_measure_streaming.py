"""The benchmark-log readers stream: a file is read line by line in one pass, so memory follows
the table rows kept, not the file's length; what they find is what reading the whole text
finds, whatever the line endings and wherever the read chunks cut."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import FabricPlanError
from fabricplan.input_file import READ_CHUNK_BYTES, FileKind, iter_lines
from fabricplan.measure import reader
from fabricplan.measure.draft import MAX_WARNINGS
from fabricplan.measure.nccl_json import MAX_CSV_FIELD_CHARS
from fabricplan.measure.reader import read_bench_file, read_bench_text

DATA = Path(__file__).resolve().parent / "data" / "measure"
TEXT_LOGS = sorted(DATA.glob("*.log"))
KIND = FileKind("log", FabricPlanError, "FP108", decode_fallback=True)


@pytest.mark.parametrize("log", TEXT_LOGS, ids=lambda p: p.name)
def test_streamed_file_reads_as_the_whole_text(log: Path) -> None:
    streamed = read_bench_file(log)
    whole = read_bench_text(log.read_text(encoding="utf-8", errors="replace"), str(log))
    assert streamed == whole


@settings(max_examples=25)
@given(
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    log=st.sampled_from(TEXT_LOGS),
    pad=st.integers(0, 4096),
)
def test_line_endings_and_chunk_cuts_do_not_change_what_is_read(
    ending: str, log: Path, pad: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lines = log.read_text(encoding="utf-8").splitlines()
    # a first line long enough to put a chunk boundary anywhere in the table, even inside "\r\n"
    filler = "x" * (READ_CHUNK_BYTES - pad)
    text = ending.join([filler, *lines]) + ending
    path = tmp_path_factory.mktemp("log") / log.name
    path.write_bytes(text.encode("utf-8"))
    assert [line.rstrip("\r\n") for line in iter_lines(path, KIND)] == text.splitlines()
    assert read_bench_file(path) == read_bench_text(text, str(path))


def _peak_bytes(path: Path) -> int:
    tracemalloc.start()
    try:
        record = read_bench_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(record.measurements) == 33  # the fixture's tables after the INFO lines
    return peak


def test_a_long_log_is_read_in_bounded_memory(tmp_path: Path) -> None:
    table = (DATA / "nccl_2023_multi_roce_mpi.log").read_text(encoding="utf-8")
    info = "node3:1234:1234 [0] NCCL INFO Channel 07/32 : 0 1 2 3 4 5 6 7 via P2P/IPC\n"
    peaks, sizes = [], []
    for lines in (40_000, 160_000):  # 3 MB and 12 MB of NCCL INFO lines before the table
        path = tmp_path / f"debug{lines}.log"
        path.write_text(info * lines + table, encoding="utf-8")
        sizes.append(path.stat().st_size)
        peaks.append(_peak_bytes(path))
    # memory is a read chunk (1 MiB) and its lines, whatever the file's length: four times
    # the lines cost no more (reading the text whole grew with it)
    assert peaks[1] < peaks[0] * 1.2 + 256 * 1024
    assert peaks[1] < sizes[1]


def test_warnings_are_bounded_and_counted(tmp_path: Path) -> None:
    table = (DATA / "nccl_2023_multi_roce_mpi.log").read_text(encoding="utf-8")
    bad = "node3:1234:1234 [0] NCCL WARN Call to ibv_modify_qp failed\n"
    path = tmp_path / "warn.log"
    path.write_text(bad * 5000 + table, encoding="utf-8")
    record = read_bench_file(path)
    assert len(record.warnings) <= MAX_WARNINGS + 2
    assert any("more" in w for w in record.warnings)


RCCL_JSONL = DATA / "rccl_allreduce.jsonl"
RCCL_CSV = DATA / "rccl_alltoall.csv"


def _rows(record: object) -> list[tuple[str, int, float]]:
    return [(m.test, m.size_bytes, m.busbw_GBps) for m in record.measurements]  # type: ignore[attr-defined]


def test_json_lines_beyond_the_whole_read_cap_stream_to_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = read_bench_file(RCCL_JSONL)
    monkeypatch.setattr(reader, "MAX_JSON_WHOLE_BYTES", 1024)  # the fixtures are "large"
    streamed = read_bench_file(RCCL_JSONL)
    assert _rows(streamed) == _rows(whole) and len(whole.measurements) > 3
    assert streamed.format == "rccl-tests json lines"
    # one list written a record a line, commas after the values
    lines = RCCL_JSONL.read_text(encoding="utf-8").splitlines()
    listed = tmp_path / "listed.json"
    listed.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    assert _rows(read_bench_file(listed)) == _rows(whole)
    # a cut last line: the rows before it are kept, with a warning naming the line
    cut = tmp_path / "cut.json"
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20], encoding="utf-8")
    record = read_bench_file(cut)
    assert any(f"cut.json:{len(lines)}" in w and "JSON stops" in w for w in record.warnings)


def test_a_large_single_json_document_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "MAX_JSON_WHOLE_BYTES", 1024)
    for name, line in (("nccl_allreduce_2n.json", 1), ("rccl_allgather.json", 2)):
        # one -J document on one line; one list printed over many lines
        with pytest.raises(FabricPlanError) as caught:
            read_bench_file(DATA / name)
        assert caught.value.code == "FP1410" and "\n" not in str(caught.value)
        assert f"{name}:{line}:" in str(caught.value)


def test_csv_records_stream_and_a_giant_field_is_one_clean_error(tmp_path: Path) -> None:
    whole = read_bench_text(RCCL_CSV.read_text(encoding="utf-8"), str(RCCL_CSV))
    assert _rows(read_bench_file(RCCL_CSV)) == _rows(whole) and whole.measurements
    lines = RCCL_CSV.read_text(encoding="utf-8").splitlines()
    giant = tmp_path / "giant.csv"
    field = '"' + "9" * (MAX_CSV_FIELD_CHARS + 1) + '"'
    giant.write_text("\n".join([lines[0], lines[1], f"{field},1", *lines[2:]]), encoding="utf-8")
    with pytest.raises(FabricPlanError) as caught:
        read_bench_file(giant)
    assert caught.value.code == "FP453" and "giant.csv:3" in str(caught.value)
    assert len(str(caught.value)) < 400


def test_a_long_csv_is_read_in_bounded_memory(tmp_path: Path) -> None:
    lines = RCCL_CSV.read_text(encoding="utf-8").splitlines()
    peaks, sizes = [], []
    for repeat in (6_000, 18_000):  # 3.4 and 10 MB of the same rows: the rows kept stay few
        path = tmp_path / f"rccl{repeat}.csv"
        path.write_text("\n".join([lines[0], *lines[1:] * repeat]) + "\n", encoding="utf-8")
        tracemalloc.start()
        try:
            record = read_bench_file(path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(record.measurements) == len(_rows(read_bench_file(RCCL_CSV)))
        peaks.append(peak)
        sizes.append(path.stat().st_size)
    # a read chunk (1 MiB) and its lines, whatever the length (the csv module row by row)
    assert peaks[1] < peaks[0] * 1.2 + 256 * 1024
    assert peaks[1] < sizes[1]
