"""TinyDataFrame and StatSpec: construction (dict of lists, list of dicts, CSV file with
retries), indexing, assignment, head/tail, printing, renaming, CSV output and statistics;
the CSV values' types (int, float, string) on a round trip, from files written with and without
quoting, and a CSV read from an http URL (a server on loopback)."""
import http.server
import threading

import pytest

from resource_tracker.helpers import aggregate_stats, mean, round_memory
from resource_tracker.tiny_data_frame import StatSpec, TinyDataFrame


def frame():
    return TinyDataFrame({"name": ["a", "b", "c"], "x": [1.0, 2.0, 3.5], "y": [10, 20, 30]})


def test_construction():
    rows = [{"a": 1, "b": 2}, {"b": 3, "c": 4}]
    df = TinyDataFrame(rows)
    assert df.columns == ["a", "b", "c"]
    assert df["a"] == [1, None] and df["c"] == [None, 4]
    assert len(TinyDataFrame(data=[])) == 0 and TinyDataFrame(data=[]).columns == []
    with pytest.raises(ValueError):
        TinyDataFrame()
    with pytest.raises(ValueError):
        TinyDataFrame(data={}, csv_file_path="x.csv")


def test_empty_frames_share_nothing():
    a, b = TinyDataFrame(data=[]), TinyDataFrame(data=[])
    a["x"] = [1]
    assert b.columns == []


def test_indexing():
    df = frame()
    assert df["x"] == [1.0, 2.0, 3.5]
    assert df[1] == {"name": "b", "x": 2.0, "y": 20}
    assert df[-1]["name"] == "c"
    assert df[["y", "name"]].columns == ["y", "name"]
    assert len(df[1:]) == 2 and df[1:]["y"] == [20, 30]
    assert df.head(2)["name"] == ["a", "b"] and df.tail(1)["name"] == ["c"]
    assert [r["y"] for r in df] == [10, 20, 30]
    with pytest.raises(KeyError):
        df["missing"]
    with pytest.raises(KeyError):
        df[["x", "missing"]]
    with pytest.raises(TypeError):
        df[1.5]


def test_setitem_and_rename():
    df = frame()
    df["z"] = [0, 0, 1]
    df["x"] = [9, 9, 9]
    assert df.columns[-1] == "z" and df["x"] == [9, 9, 9]
    with pytest.raises(ValueError):
        df["w"] = [1]
    with pytest.raises(TypeError):
        df[1] = [1, 2, 3]
    assert df.rename({"x": "X"}) is df and "X" in df.columns
    with pytest.raises(KeyError):
        df.rename({"nope": "n"})


def test_printing():
    df = frame()
    assert repr(df) == ("TinyDataFrame with 3 rows and 3 columns. First row as a dict: "
                        "{'name': 'a', 'x': 1.0, 'y': 10}")
    text = str(df)
    lines = text.splitlines()
    assert lines[0] == "TinyDataFrame with 3 rows and 3 columns:"
    assert lines[1].split(" | ")[0].strip() == "name" and set(lines[2]) <= {"-", "+"}
    assert lines[3].startswith("a    |")  # strings left-aligned
    assert lines[3].endswith("10")        # numbers right-aligned
    long = TinyDataFrame({"v": list(range(12))})
    assert str(long).splitlines()[-1].startswith("...")
    assert str(TinyDataFrame(data=[])).endswith("Empty dataframe")


def test_csv_round_trip(tmp_path):
    df = frame()
    text = df.to_csv()
    assert text.splitlines()[0] == '"name","x","y"' and text.splitlines()[1] == '"a",1.0,10'
    assert df.to_csv(quote_strings=False).splitlines()[1] == "a,1.0,10"
    path = tmp_path / "f.csv"
    assert df.to_csv(str(path)) is None
    back = TinyDataFrame(csv_file_path=str(path))
    assert back.columns == df.columns and back["y"] == [10, 20, 30]
    assert back.to_dict()[0] == {"name": "a", "x": 1.0, "y": 10}
    assert [type(v) for v in back[0].values()] == [str, float, int]


def types(df, col):
    return [type(v).__name__ for v in df[col]]


def test_csv_value_types(tmp_path):
    # written by to_csv (strings quoted): a quoted value stays a string, numbers keep their type
    df = TinyDataFrame({"id": ["007", "1.5", "x"], "n": [-7, 0, 12345678901234567890],
                        "f": [1.0, -0.5, float("inf")], "s": ["a,b", 'q"q', ""]})
    path = tmp_path / "t.csv"
    df.to_csv(str(path))
    back = TinyDataFrame(csv_file_path=path)  # a PathLike too
    assert back == df
    assert types(back, "id") == ["str"] * 3 and types(back, "n") == ["int"] * 3
    assert types(back, "f") == ["float"] * 3
    # strings unquoted (quote_strings=False, or another writer): judged by the text alone
    path.write_text("a,b,c\n1,1.0,x\n-7,3.14,\n+2,1e3,1_000\n 5,nan,\u0663\n")
    back = TinyDataFrame(csv_file_path=str(path))
    assert back["a"] == [1, -7, 2, " 5"] and types(back, "a") == ["int", "int", "int", "str"]
    assert back["b"][:3] == [1.0, 3.14, 1000.0] and types(back, "b") == ["float"] * 4
    assert back["c"] == ["x", "", "1_000", "\u0663"]
    # a short row: the missing values are None
    path.write_text('"a","b"\n1\n')
    assert TinyDataFrame(csv_file_path=str(path))[0] == {"a": 1, "b": None}


def test_csv_from_http_url(tmp_path):
    body = b'"name","count","score"\n"Alice",10,9.5\n"7",3,7.25\n'

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == "/data.csv"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Length", str(len(body) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        df = TinyDataFrame(csv_file_path=url + "/data.csv")
        assert df.to_dict() == [{"name": "Alice", "count": 10, "score": 9.5},
                                {"name": "7", "count": 3, "score": 7.25}]
        with pytest.raises(RuntimeError, match="after 2 attempts"):
            TinyDataFrame(csv_file_path=url + "/missing.csv", retries=1, retry_delay=0)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_csv_retries(tmp_path):
    path = tmp_path / "late.csv"
    with pytest.raises(RuntimeError, match="1 attempts"):
        TinyDataFrame(csv_file_path=str(path))
    writer = threading.Timer(0.1, lambda: frame().to_csv(str(path)))
    writer.start()
    df = TinyDataFrame(csv_file_path=str(path), retries=5, retry_delay=0.05)
    writer.join()
    assert len(df) == 3
    bad = tmp_path / "bad.csv"
    bad.write_text('"a"\n1,2\n')
    with pytest.raises(RuntimeError):
        TinyDataFrame(csv_file_path=str(bad))


def test_stats():
    df = frame()
    out = df.stats([StatSpec("x", mean, round=1), StatSpec("x", max), StatSpec("y", sum),
                    StatSpec("y", lambda v: max(v) - min(v), agg_name="range"),
                    StatSpec("missing", max)])
    assert out == {"x": {"mean": 2.2, "max": 3.5}, "y": {"sum": 60, "range": 20}}
    assert StatSpec("c", max)._fields == ("column", "agg", "agg_name", "round")


def test_helpers():
    assert round_memory(0) == 128 and round_memory(129) == 256 and round_memory(2048) == 2048
    assert round_memory(2049) == 3072 and round_memory(mib=5000) == 5120
    assert mean([1, 2, None]) == 1.5
    with pytest.raises(ValueError):
        mean([])
    agg = aggregate_stats([{"t": {"duration": 2, "sum": 1}}, {"t": {"duration": 4, "sum": 5}}])
    assert agg == {"t": {"sum": 5, "duration": 3.0}}
    assert aggregate_stats([]) == {}
    with pytest.raises(ValueError):
        aggregate_stats([{"t": {"median": 1}}])
