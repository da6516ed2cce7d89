"""TinyDataFrame and StatSpec: construction (dict of lists, list of dicts, CSV file with
retries), indexing, assignment, head/tail, printing, renaming, CSV output and statistics."""
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
    assert back.columns == df.columns and back["y"] == [10.0, 20.0, 30.0]
    assert back.to_dict()[0] == {"name": "a", "x": 1.0, "y": 10.0}


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
