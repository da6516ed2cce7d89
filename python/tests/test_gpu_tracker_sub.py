"""gpu_tracker's sub-tracking (python/gpu_tracker/sub_tracker.py, _helper_classes.py,
_phase_socket.py): the sub-tracking file's CSV bytes and SQLite schema, the default names, one
os.getpid and two time.time per block, the overwrite rules and their errors; the analysis's
figures on a small tracking file written by the file layer (CSV and SQLite, worked out by
hand); the invalid-file, comparison and combine errors; files and pickles written by
gpu_tracker 5.0.1 itself (its test data in ../shared/testdata/peers, skipped when absent) read
into gpu_tracker's own expected texts byte for byte; the phase lines sent to
TRACKER_PHASE_SOCKET; and that writing imports no pandas."""
import csv
import json
import logging
import os
import pickle
import socket
import sqlite3
import statistics
import subprocess
import sys
import uuid

import pytest

import gpu_tracker as gput
from gpu_tracker import _phase_socket, sub_tracker
from gpu_tracker._helper_classes import _STATIC_FIELDS, _TIMEPOINT_FIELDS, _DataProxy

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEER_DATA = os.path.realpath(os.path.join(REPO, "..", "shared", "testdata", "peers", "gpu_tracker-11d7448",
                                          "tests", "data", "sub-tracking-results"))
needs_peer_data = pytest.mark.skipif(not os.path.isdir(PEER_DATA), reason=f"gpu_tracker's test data is not present ({PEER_DATA})")


class Clock:
    """Stands for sub_tracker's `time` module: time() returns the next value and counts."""

    def __init__(self, values):
        self.values = iter(values)
        self.calls = 0

    def time(self):
        self.calls += 1
        return next(self.values)


@pytest.fixture
def clock(monkeypatch):
    def make(values):
        c = Clock(values)
        monkeypatch.setattr(sub_tracker, "time", c)
        return c
    return make


@pytest.fixture
def pids(monkeypatch):
    calls = []

    def getpid():
        calls.append(1)
        return 4321
    monkeypatch.setattr(sub_tracker.os, "getpid", getpid)
    return calls


@pytest.fixture(autouse=True)
def no_phase_socket(monkeypatch):
    monkeypatch.delenv("TRACKER_PHASE_SOCKET", raising=False)
    _phase_socket._reset()
    yield
    _phase_socket._reset()


# ---- writing ------------------------------------------------------------------------------


def test_csv_rows_bytes_and_call_counts(tmp_path, clock, pids):
    path = str(tmp_path / "sub.csv")
    c = clock([1.5, 2, 1795556251.9750116, 4])
    for _ in range(2):
        with gput.SubTracker(code_block_name="my block", sub_tracking_file=path) as st:
            assert st.process_id == 4321 and st.code_block_name == "my block" and st.sub_tracking_file == path
    assert len(pids) == 2 and c.calls == 4
    with open(path, "rb") as f:
        assert f.read() == (b"process_id,code_block_name,position,timestamp\r\n"
                            b"4321,my block,0,1.5\r\n4321,my block,1,2\r\n"
                            b"4321,my block,0,1795556251.9750116\r\n4321,my block,1,4\r\n")


def test_sqlite_table_typed_by_first_row(tmp_path, clock, pids):
    path = str(tmp_path / "sub.sqlite")
    clock([7, 8.25])
    with gput.SubTracker(code_block_name="b", sub_tracking_file=path):
        pass
    con = sqlite3.connect(path)
    cols = [(r[1], r[2]) for r in con.execute("PRAGMA table_info(data)")]
    assert cols == [("process_id", "INTEGER"), ("code_block_name", "VARCHAR"), ("position", "INTEGER"),
                    ("timestamp", "INTEGER")]
    assert con.execute("SELECT * FROM data").fetchall() == [(4321, "b", 0, 7), (4321, "b", 1, 8.25)]
    con.close()
    path2 = str(tmp_path / "sub2.sqlite")
    clock([7.5, 8])
    with gput.SubTracker(code_block_name="b", sub_tracking_file=path2):
        pass
    con = sqlite3.connect(path2)
    assert [r[2] for r in con.execute("PRAGMA table_info(data)")][3] == "FLOAT"
    con.close()


def test_default_names(tmp_path, monkeypatch, clock, pids):
    monkeypatch.chdir(tmp_path)
    clock(range(100))
    with gput.SubTracker() as st:
        line = sys._getframe().f_lineno - 1
    assert st.code_block_name == f"{os.path.relpath(__file__)}:{line}"
    assert st.sub_tracking_file == "4321.csv" and os.path.isfile("4321.csv")
    with gput.SubTracker(code_block_attribute="attr", sub_tracking_file="x.csv") as st:
        pass
    assert st.code_block_name == f"{os.path.relpath(__file__)}:attr"

    @gput.sub_track(sub_tracking_file="d.csv")
    def work(a, b=2):
        """doc"""
        return a + b

    @gput.sub_track(code_block_attribute="other", sub_tracking_file="d.csv")
    def work2():
        return None

    assert work(1) == 3 and work(1, b=5) == 6 and work.__name__ == "work" and work.__doc__ == "doc"
    work2()
    with open("d.csv", newline="") as f:
        names = [row["code_block_name"] for row in csv.DictReader(f)]
    assert names == [f"{os.path.abspath(__file__)}:work"] * 4 + [f"{os.path.abspath(__file__)}:other"] * 2
    assert len(pids) == 5  # one per block: 2 SubTrackers, 3 decorated calls


def test_overwrite_and_removed_file(tmp_path, clock, pids):
    clock(range(100))
    path = str(tmp_path / "again.csv")
    open(path, "w").close()
    with pytest.raises(FileExistsError) as e:
        with gput.SubTracker(sub_tracking_file=path):
            pytest.fail("the block must not run")
    assert str(e.value) == f"File {path} already exists. Set overwrite to True to overwrite the existing file."
    with gput.SubTracker(code_block_name="a", sub_tracking_file=path, overwrite=True):
        pass
    with gput.SubTracker(code_block_name="a", sub_tracking_file=path):  # same process: appends
        pass
    with open(path, newline="") as f:
        assert len(list(csv.DictReader(f))) == 4
    os.remove(path)
    with pytest.raises(FileNotFoundError) as e:
        with gput.SubTracker(sub_tracking_file=path):
            pass
    assert str(e.value) == f"The file {path} was removed in the middle of writing data to it."
    with pytest.raises(ValueError) as e:
        gput.SubTracker(sub_tracking_file="notes.txt")
    assert str(e.value) == 'Invalid file name: "notes.txt". Valid file extensions are ".csv" and ".sqlite".'


def test_writing_imports_no_pandas(tmp_path):
    code = ("import sys, gpu_tracker as g\n"
            "with g.SubTracker(code_block_name='x', sub_tracking_file='a.csv'): pass\n"
            "with g.SubTracker(code_block_name='x', sub_tracking_file='a.sqlite'): pass\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'sqlalchemy') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- the analysis on a small tracking file ------------------------------------------------

STATIC = dict(zip(_STATIC_FIELDS, ["gigabytes", "gigabytes", "hours", 64.0, 0.0, 4, 4, 0, 0]))
# (pid, name, position, timestamp), out of order on purpose
MARKS = [
    (200, "a", 1, 16.8), (100, "a", 0, 10.5), (100, "b", 0, 9.0), (100, "a", 1, 12.0), (100, "a", 0, 14.0),
    (100, "a", 1, 14.5), (200, "a", 0, 16.2), (100, "a", 0, 18.0), (100, "b", 1, 20.0),
]


def write_session(folder, ext):
    tracking, sub = str(folder / f"tracking.{ext}"), str(folder / f"sub.{ext}")
    proxy = _DataProxy.create(tracking, overwrite=True)
    proxy.write_static_data(STATIC)
    for t in range(10, 20):  # timepoints at 10..19: main_ram 0..9, main_n_threads 2 (int)
        row = dict.fromkeys(_TIMEPOINT_FIELDS, 0.0)
        row.update(main_ram=float(t - 10), main_n_threads=2, timestamp=float(t))
        proxy.write_data(row)
    proxy = _DataProxy.create(sub, overwrite=True)
    for pid, name, position, ts in MARKS:
        proxy.write_data({"process_id": pid, "code_block_name": name, "position": position, "timestamp": ts})
    return tracking, sub


@pytest.mark.parametrize("ext", ["csv", "sqlite"])
def test_analysis_figures(tmp_path, ext):
    pytest.importorskip("pandas")
    analyzer = gput.SubTrackingAnalyzer(*write_session(tmp_path, ext))
    assert analyzer.load_code_block_names() == ["a", "b"]
    # pid 100's last START (18.0) is a call still running: dropped; pid 200's call has no timepoint
    assert analyzer.load_timestamp_pairs("a") == [(10.5, 12.0), (14.0, 14.5), (16.2, 16.8)]
    results = analyzer.sub_tracking_results()
    assert results.static_data.to_dict() == STATIC
    overall = results.overall
    assert list(overall.columns) == ["min", "max", "mean", "std"]
    assert list(overall.index) == list(_TIMEPOINT_FIELDS[:-1])
    assert overall.loc["main_ram"].tolist() == pytest.approx([0, 9, 4.5, statistics.pstdev(range(10))])
    assert overall.loc["main_n_threads"].tolist() == [2.0, 2.0, 2.0, 0.0]
    a, b = results.code_block_results
    assert (a.name, a.num_calls, a.num_timepoints, a.num_non_empty_calls) == ("a", 3, 3, 2)
    assert (b.name, b.num_calls, b.num_timepoints, b.num_non_empty_calls) == ("b", 1, 10, 1)
    durations = [1.5, 0.5, 16.8 - 16.2]
    assert a.compute_time.to_dict() == pytest.approx(
        {"min": 0.5, "max": 1.5, "mean": sum(durations) / 3, "std": statistics.pstdev(durations), "total": sum(durations)})
    assert a.resource_usage.loc["main_ram"].tolist() == pytest.approx([1, 4, 7 / 3, statistics.pstdev([1, 2, 4])])
    doc = json.loads(json.dumps(results.to_json()))
    assert doc["code_block_results"][0]["num_non_empty_calls"] == 2
    assert doc["overall"]["main_ram"]["max"] == 9.0 and doc["static_data"]["ram_unit"] == "gigabytes"
    text = str(results)
    assert text.startswith("Overall:\n\t") and "\nStatic Data:\n" in text
    assert "\tName:                a\n\tNum Timepoints:      3\n\tNum Calls:           3\n" in text
    assert "\tNum Non Empty Calls: 2\n\tCompute Time:\n" in text
    assert text.endswith("\n\n")


@pytest.mark.parametrize("ext", ["csv", "sqlite"])
def test_csv_and_sqlite_give_the_same_results(tmp_path, ext):
    pytest.importorskip("pandas")
    (tmp_path / "c").mkdir()
    (tmp_path / "s").mkdir()
    by_csv = gput.SubTrackingAnalyzer(*write_session(tmp_path / "c", "csv")).sub_tracking_results()
    by_sqlite = gput.SubTrackingAnalyzer(*write_session(tmp_path / "s", "sqlite")).sub_tracking_results()
    assert str(by_csv) == str(by_sqlite)


def test_tracking_file_layouts(tmp_path):
    tracking, _ = write_session(tmp_path, "csv")
    with open(tracking, "rb") as f:
        lines = f.read().split(b"\r\n")
    assert lines[0] == ",".join(_STATIC_FIELDS).encode() and lines[1] == b"gigabytes,gigabytes,hours,64.0,0.0,4,4,0,0"
    assert lines[2] == ",".join(_TIMEPOINT_FIELDS).encode() and len(lines) == 3 + 10 + 1 and lines[-1] == b""
    tracking, _ = write_session(tmp_path, "sqlite")
    con = sqlite3.connect(tracking)
    assert [r[2] for r in con.execute("PRAGMA table_info(static_data)")] == ["VARCHAR"] * 3 + ["FLOAT"] * 2 + ["INTEGER"] * 4
    types = {r[1]: r[2] for r in con.execute("PRAGMA table_info(data)")}
    assert types["main_n_threads"] == "INTEGER" and types["main_ram"] == "FLOAT" and len(types) == 22
    con.close()
    with pytest.raises(FileExistsError):
        _DataProxy.create(tracking).write_static_data(STATIC)
    pytest.importorskip("pandas")
    for ext in ("csv", "sqlite"):  # a second session on the same file, in the same process
        tracking, _ = write_session(tmp_path, ext)
        assert gput.SubTrackingAnalyzer(tracking, None).load_timepoints([(0.0, 100.0)]).shape == (10, 22)


def test_invalid_sub_tracking_files(tmp_path):
    pytest.importorskip("pandas")

    def pairs(rows):
        path = tmp_path / "bad.csv"
        path.write_text("process_id,code_block_name,position,timestamp\n" + "".join(f"{r}\n" for r in rows))
        return gput.SubTrackingAnalyzer(None, str(path)).load_timestamp_pairs("X")

    with pytest.raises(ValueError) as e:
        pairs(["1,X,0,1.0", "2,X,0,3.0", "1,X,1,2.0", "1,X,1,5.0", "2,X,1,4.0"])
    assert str(e.value) == "Sub-tracking file is invalid. Detected timestamp pair (5.0, 3.0) with differing process IDs: 1 and 2."
    with pytest.raises(ValueError) as e:
        pairs(["1,X,1,1.0", "1,X,0,2.0", "1,X,1,3.0"])
    assert str(e.value) == "Sub-tracking file is invalid. Detected timestamp pair (1.0, 2.0) of process ID 1 with a start time greater than the stop time."
    with pytest.raises(ValueError) as e:
        pairs(["1,X,1,1.0"])
    assert str(e.value) == "Sub-tracking file is invalid. Detected timestamp 1.0 of process ID 1 without a pair."
    assert pairs(["1,X,0,1.0", "1,Y,1,2.0"]) == []
    with pytest.raises(ValueError) as e:
        gput.SubTrackingAnalyzer(None, str(tmp_path / "bad.csv")).read_static_data()
    assert "no tracking file" in str(e.value)
    for ext in ("csv", "sqlite"):
        missing = str(tmp_path / f"missing.{ext}")
        with pytest.raises(FileNotFoundError) as e:
            gput.SubTrackingAnalyzer(missing, missing).load_code_block_names()
        assert str(e.value) == f"[Errno 2] No such file or directory: '{missing}'"
        assert not os.path.exists(missing)  # reading never makes a file


@pytest.mark.parametrize("ext", ["csv", "sqlite"])
def test_combine(tmp_path, ext):
    files = []
    for i in range(3):
        path = str(tmp_path / f"{i}.{ext}")
        proxy = _DataProxy.create(path)
        for position in (0, 1):
            proxy.write_data({"process_id": 10 + i, "code_block_name": f"n{i}", "position": position,
                              "timestamp": 100.0 * i + position})
        files.append(path)
    out = str(tmp_path / f"all.{ext}")
    other = "sqlite" if ext == "csv" else "csv"
    with pytest.raises(ValueError) as e:
        gput.SubTrackingAnalyzer(None, str(tmp_path / f"all.{other}")).combine_sub_tracking_files(files)
    assert str(e.value) == f'File {files[0]} does not end with the same extension as {tmp_path}/all.{other}. Must end in ".{other}".'
    analyzer = gput.SubTrackingAnalyzer(None, out)
    analyzer.combine_sub_tracking_files(files)
    if ext == "csv":
        with open(out, newline="") as f:
            rows = [tuple(r.values()) for r in csv.DictReader(f)]
        assert rows[0] == ("10", "n0", "0", "0.0") and len(rows) == 6 and rows[-1] == ("12", "n2", "1", "201.0")
    else:
        con = sqlite3.connect(out)
        assert [r[2] for r in con.execute("PRAGMA table_info(data)")] == ["INTEGER", "VARCHAR", "INTEGER", "FLOAT"]
        rows = con.execute("SELECT * FROM data").fetchall()
        con.close()
        assert rows[0] == (10, "n0", 0, 0.0) and len(rows) == 6 and rows[-1] == (12, "n2", 1, 201.0)
    with pytest.raises(ValueError) as e:
        analyzer.combine_sub_tracking_files(files)
    assert str(e.value) == f"Cannot create sub-tracking file {out}. File already exists."


# ---- comparison -------------------------------------------------------------------------


def results_with(names, value):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"min": [value], "max": [value], "mean": [value], "std": [0.0]}, index=["main_ram"])
    blocks = [gput.CodeBlockResults(n, 1, 1, 1, pd.Series({"min": value, "max": value, "mean": value, "std": 0.0,
                                                            "total": value}), frame) for n in names]
    return gput.SubTrackingResults(frame, pd.Series({"ram_unit": "gigabytes"}), blocks)


def pickled(tmp_path, name, results):
    path = str(tmp_path / f"{name}.pkl")
    with open(path, "wb") as f:
        pickle.dump(results, f)
    return path


def test_comparison(tmp_path, caplog):
    a = pickled(tmp_path, "a", results_with(["X", "f.py:38", "f.py:9"], 2.0))
    b = pickled(tmp_path, "b", results_with(["f.py:7", "X", "f.py:37"], 1.0))
    with caplog.at_level(logging.WARNING):
        comparison = gput.TrackingComparison({"B": b, "A": a})
    assert [r.message for r in caplog.records] == [
        f'Code block name "f.py:{n1}" of tracking session "A" matched with code block name "f.py:{n2}" of tracking '
        f"session \"B\" but they differ by line number. If these code blocks were not meant to match, their comparison "
        f"will not be valid and their names must be disambiguated." for n1, n2 in (("9", "7"), ("38", "37"))]
    assert [c.name for c in comparison.results_map["A"].code_block_results] == ["X", "f.py:9", "f.py:38"]
    results = comparison.compare("max")
    assert type(results) is gput.ComparisonResults
    doc = results.to_json()
    assert list(doc["code_block_compute_time"]) == ["X", "f.py:7 -> f.py:9", "f.py:37 -> f.py:38"]
    assert list(doc["overall_resource_usage"]["main_ram"].items()) == [("B", 1.0), ("A", 2.0)]  # ascending
    text = str(results)
    assert text.startswith("Overall Resource Usage:\n\tMain Ram:\n\t\t   B   A\n\t\t 1.0 2.0\nCode Block Resource Usage:\n")
    assert "\tMain Ram:\n\t\tX:\n" in text and "\tf.py:7 -> f.py:9:\n" in text
    with pytest.raises(ValueError) as e:
        comparison.compare("median")
    assert str(e.value) == "Invalid summary statistic 'median'. Valid values are min max mean std."


def test_comparison_errors(tmp_path):
    a = pickled(tmp_path, "a", results_with(["X", "f.py:9"], 2.0))
    with pytest.raises(ValueError) as e:
        gput.TrackingComparison({"A": a, "C": pickled(tmp_path, "c", results_with(["X"], 1.0))})
    assert str(e.value) == ('All sub-tracking results must have the same number of code blocks. The first has 2 code '
                            'blocks but tracking session "C" has 1 code blocks.')
    with pytest.raises(ValueError) as e:
        gput.TrackingComparison({"A": a, "D": pickled(tmp_path, "d", results_with(["X", "g.py:9"], 1.0))})
    assert str(e.value) == 'Code block name "f.py:9" of tracking session "A" does not match code block name "g.py:9" of tracking session "D"'
    with pytest.raises(ValueError):
        gput.TrackingComparison({})
    no_blocks = pickled(tmp_path, "e", results_with([], 1.0))
    results = gput.TrackingComparison({"E": no_blocks, "F": no_blocks}).compare()
    assert results.code_block_compute_time == {} and results.code_block_resource_usage == {}
    assert str(results).endswith("Code Block Resource Usage:\nCode Block Compute Time:\n")


def test_pickles_of_numpy_2_load(tmp_path):
    """Results pickled under numpy 2 name its numpy._core modules; under numpy 1 they are numpy.core."""
    data = pickle.dumps(results_with(["X"], 3.0), protocol=0)
    assert b"numpy.core" in data or b"numpy._core" in data
    path = tmp_path / "np2.pkl"
    path.write_bytes(data.replace(b"numpy.core", b"numpy._core"))
    results = gput.TrackingComparison({"A": str(path), "B": str(path)}).compare("mean")
    assert results.to_json()["code_block_compute_time"] == {"X": {"A": 3.0, "B": 3.0}}


def test_pickles_name_the_classes_of_sub_tracker(tmp_path):
    data = pickle.dumps(results_with(["X"], 1.0))
    assert b"gpu_tracker.sub_tracker" in data and b"SubTrackingResults" in data and b"CodeBlockResults" in data


# ---- gpu_tracker 5.0.1's own files -------------------------------------------------------


@needs_peer_data
@pytest.mark.parametrize("ext", ["csv", "sqlite"])
def test_files_written_by_gpu_tracker(ext):
    pytest.importorskip("pandas")
    results = gput.SubTrackingAnalyzer(f"{PEER_DATA}/tracking.{ext}", f"{PEER_DATA}/sub-tracking.{ext}").sub_tracking_results()
    with open(f"{PEER_DATA}/results.txt") as f:
        assert str(results) == f.read()
    with open(f"{PEER_DATA}/results.json") as f:
        expected = json.load(f)
    doc = json.loads(json.dumps(results.to_json()))
    assert doc["static_data"] == expected["static_data"]
    assert [b["name"] for b in doc["code_block_results"]] == [b["name"] for b in expected["code_block_results"]]
    assert doc["overall"]["main_ram"] == pytest.approx(expected["overall"]["main_ram"], rel=1e-12)


@needs_peer_data
@pytest.mark.parametrize("statistic", ["min", "max", "mean", "std"])
def test_pickles_written_by_gpu_tracker(statistic):
    """Its results-*.pkl were pickled under numpy 2 (numpy._core) and read here under any numpy."""
    pytest.importorskip("pandas")
    comparison = gput.TrackingComparison({n: f"{PEER_DATA}/results-{n}.pkl" for n in ("A", "B")})
    results = comparison.compare(statistic)
    with open(f"{PEER_DATA}/comparison_{statistic}.txt") as f:
        assert str(results) == f.read()
    with open(f"{PEER_DATA}/comparison_{statistic}.json") as f:
        expected = json.load(f)
    assert list(results.to_json()["code_block_compute_time"]) == list(expected["code_block_compute_time"])


# ---- the phase socket -------------------------------------------------------------------


def read_lines(server, n, keep=None):
    """The next n lines on a new connection, closed after them unless kept in the list `keep`."""
    server.settimeout(30)
    conn, _ = server.accept()
    conn.settimeout(30)
    data = b""
    while data.count(b"\n") < n:
        chunk = conn.recv(4096)
        assert chunk, data
        data += chunk
    if keep is None:
        conn.close()
    else:
        keep.append(conn)
    return data.decode().splitlines()


@pytest.mark.parametrize("abstract", [False, True])
def test_phase_lines(tmp_path, monkeypatch, clock, pids, abstract):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if abstract:
            name = f"rt-test-{uuid.uuid4().hex}"
            server.bind("\0" + name)
            monkeypatch.setenv("TRACKER_PHASE_SOCKET", "@" + name)
        else:
            server.bind(str(tmp_path / "phase.sock"))
            monkeypatch.setenv("TRACKER_PHASE_SOCKET", str(tmp_path / "phase.sock"))
        server.listen(1)
        _phase_socket._reset()
        c = clock(range(10))
        with gput.SubTracker(code_block_name="load data", sub_tracking_file=str(tmp_path / "s.csv")):
            with gput.SubTracker(code_block_name="x\ty" + "é" * 200, sub_tracking_file=str(tmp_path / "s.csv")):
                pass
        assert c.calls == 4 and len(pids) == 2  # the socket reads no clock of sub_tracker's, nor the pid
        lines = read_lines(server, 4)
    finally:
        server.close()
    verbs = [line.split(" ", 1)[0] for line in lines]
    assert verbs == ["start", "start", "stop", "stop"]
    assert lines[0].startswith("start load data\tt=") and lines[3].startswith("stop load data\tt=")
    stamps = [int(line.rsplit("\tt=", 1)[1]) for line in lines]
    assert stamps == sorted(stamps) and stamps[0] > 0
    long_name = lines[1][len("start "):].rsplit("\tt=", 1)[0]
    assert len(long_name.encode()) <= 255 and long_name.endswith("é") and "\t" not in long_name
    assert all(len(line.encode()) < 512 for line in lines)


def test_phase_socket_unreachable(tmp_path, monkeypatch, clock, pids):
    monkeypatch.setenv("TRACKER_PHASE_SOCKET", str(tmp_path / "nobody.sock"))
    _phase_socket._reset()
    clock(range(10))
    with gput.SubTracker(code_block_name="a", sub_tracking_file=str(tmp_path / "s.csv")):
        pass
    with open(tmp_path / "s.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == 2


def test_phase_socket_reconnects_and_forks(tmp_path, monkeypatch):
    """The tracker closes a connection idle for a minute: the next mark comes on a new one; a
    forked child marks on a connection of its own (the tracker takes the pid from it)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(tmp_path / "p.sock"))
        server.listen(4)
        monkeypatch.setenv("TRACKER_PHASE_SOCKET", str(tmp_path / "p.sock"))
        _phase_socket._reset()
        _phase_socket.send("start", "one")
        assert [line.split("\t")[0] for line in read_lines(server, 1)] == ["start one"]  # then closed
        _phase_socket.send("stop", "one")
        _phase_socket.send("start", "two")
        kept = []
        assert [line.split("\t")[0] for line in read_lines(server, 2, kept)] == ["stop one", "start two"]
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            try:
                _phase_socket.send("start", "child")
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        assert [line.split("\t")[0] for line in read_lines(server, 1)] == ["start child"]
        _phase_socket.send("stop", "two")  # the parent's connection is still its own
        assert kept[0].recv(4096).startswith(b"stop two\t")
        kept[0].close()
    finally:
        server.close()


def _phase_names(native_tracker):
    """The phases of a C tracker's summary so far, by name."""
    from ctypes import POINTER, c_char_p, cast

    import resource_tracker._native_more  # noqa: F401  (types rt_tracker_summary)
    from resource_tracker._native import lib

    s = lib.rt_tracker_summary(native_tracker).contents
    if not s.phases:
        return []
    firsts = cast(s.phases, POINTER(POINTER(c_char_p)))  # rt_phase_summary begins with its name
    return [firsts[i][0].decode() for i in range(s.phase_count)]


def test_block_is_a_phase_of_the_running_tracker(tmp_path):
    """A SubTracker's block is also a phase of this process's running Tracker (its C tracker):
    the library's summary lists it by name with its calls, and a Tracker that stopped takes no
    more marks."""
    tracker = gput.Tracker(sleep_time=0.1)
    tracker.start()
    try:
        for _ in range(2):
            with gput.SubTracker(code_block_name="load data", sub_tracking_file=str(tmp_path / "s.csv")):
                sum(range(200_000))
        from resource_tracker._native import lib

        native = tracker._native.tracker
        lib.rt_tracker_wait(native, lib.rt_tracker_count(native) + 2, 5.0)  # the marks ride on samples
        lib_summary_names = _phase_names(native)
    finally:
        tracker.stop()
    assert lib_summary_names == ["load data"]
