"""tiny_data_frame.py - TinyDataFrame, a small column store (a dict of lists) with the
Python resource-tracker's interface: built from a dict of lists, a list of row dicts or a CSV
file; columns, rows, slices, printing, renaming, CSV output and per-column statistics; and
StatSpec, one statistic to compute on a column. Reading and writing CSV, printing and the
statistics are in _frame_io.py, imported when first used.

The names the reading calls, DictReader (csv), urlopen (urllib.request) and sleep (time), are
globals of this module, looked up here at each read (tests may replace them); csv and
urllib.request are imported when first asked for (PEP 562), so importing the package stays small."""

from __future__ import annotations

from time import sleep

from ._lazy import lazy_globals

# DictReader and urlopen, imported when first asked for and kept as globals
__getattr__, _global = lazy_globals(globals(), {"DictReader": "csv", "urlopen": "urllib.request"})


class StatSpec(tuple):
    """One statistic on a column: agg applied to the column's values, stored under agg_name
    (default: the function's __name__), rounded to `round` digits when given. A named tuple
    (column, agg, agg_name, round), written out to spare the typing module's import.

    >>> StatSpec("cpu", max, round=2)
    StatSpec(column='cpu', agg=<built-in function max>, agg_name=None, round=2)
    """

    __slots__ = ()
    _fields = ("column", "agg", "agg_name", "round")

    def __new__(cls, column: str, agg, agg_name: str | None = None, round: int | None = None):
        return tuple.__new__(cls, (column, agg, agg_name, round))

    column = property(lambda self: self[0], doc="The column to apply agg to.")
    agg = property(lambda self: self[1], doc="The aggregation function.")
    agg_name = property(lambda self: self[2], doc="The statistic's name (default agg.__name__).")
    round = property(lambda self: self[3], doc="Digits to round to (None: no rounding).")

    def __repr__(self) -> str:
        return "StatSpec(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self)) + ")"

    def __getnewargs__(self):
        return tuple(self)

    def _replace(self, **changes) -> "StatSpec":
        return StatSpec(*(changes.get(k, v) for k, v in zip(self._fields, self)))


class TinyDataFrame:
    """A data frame kept as column vectors.

    Args:
        data: a dict of lists (column name -> values) or a list of row dicts (columns in the
            order first seen).
        csv_file_path: a CSV file with a header (a path, or an http(s) URL read with urlopen).
            Each value comes back as an int when it is an integer literal ("1", "-7"), else a
            float when it is a number ("1.0", "3.14"), else the string; in a file written with
            strings quoted and numbers not (QUOTE_NONNUMERIC, as to_csv writes it), a quoted
            value stays a string even when it looks like a number.
        retries: how many more times to try reading the file when it fails.
        retry_delay: seconds before the first retry, doubled after each.

    Example:

        >>> df = TinyDataFrame({"name": ["a", "b", "c", "d"], "cpu": [0.5, 1.25, 2.0, 1.0]})
        >>> df
        TinyDataFrame with 4 rows and 2 columns. First row as a dict: {'name': 'a', 'cpu': 0.5}
        >>> df[1:3]["cpu"]
        [1.25, 2.0]
        >>> print(df[1:3])  # doctest: +NORMALIZE_WHITESPACE
        TinyDataFrame with 2 rows and 2 columns:
        name | cpu
        -----+-----
        b    | 1.25
        c    |  2.0
        >>> print(df[2:4][["name"]].to_csv())  # doctest: +NORMALIZE_WHITESPACE
        "name"
        "c"
        "d"
        >>> df.stats([StatSpec("cpu", max), StatSpec("cpu", sum, agg_name="total", round=1)])
        {'cpu': {'max': 2.0, 'total': 4.8}}
    """

    def __init__(
        self,
        data: dict[str, list] | list[dict] | None = None,
        csv_file_path: str | None = None,
        retries: int = 0,
        retry_delay: float = 0.1,
    ):
        if data is None and csv_file_path is None:
            raise ValueError("either data or csv_file_path must be provided")
        if data is not None and csv_file_path is not None:
            raise ValueError("only one of data or csv_file_path must be provided")
        if data is not None and not isinstance(data, (dict, list)):
            raise TypeError("data must be a dictionary or a list")
        if csv_file_path is not None:
            from ._frame_io import read_csv

            data = read_csv(csv_file_path, retries, retry_delay, reader=_global("DictReader"),
                            opener=_global("urlopen"), wait=sleep)
        self.columns: list[str] = []
        self._data: list[list] = []
        if isinstance(data, dict):
            self.columns = list(data.keys())
            self._data = [list(v) for v in data.values()]
        elif data:
            seen = set()
            for row in data:
                for col in row:
                    if col not in seen:
                        seen.add(col)
                        self.columns.append(col)
            self._data = [[row.get(col) for row in data] for col in self.columns]

    def __len__(self) -> int:
        return len(self._data[0]) if self._data else 0

    def _column(self, name: str) -> list:
        try:
            return self._data[self.columns.index(name)]
        except ValueError:
            raise KeyError(f"Column '{name}' not found") from None

    def __getitem__(self, key):
        """A column (str) as its list, columns (list of str) as a frame, a row (int) as a
        dict, rows (slice) as a frame."""
        if isinstance(key, str):
            return self._column(key)
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            return TinyDataFrame({k: self._column(k) for k in key})
        if isinstance(key, int):
            return {col: values[key] for col, values in zip(self.columns, self._data)}
        if isinstance(key, slice):
            return TinyDataFrame({col: values[key] for col, values in zip(self.columns, self._data)})
        raise TypeError(f"Invalid key type: {type(key)}")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __setitem__(self, key: str, value: list) -> None:
        """Replaces or adds a column (as long as the frame, unless the frame is empty)."""
        if not isinstance(key, str):
            raise TypeError(f"Column name must be a string, got {type(key)}")
        if len(self) > 0 and len(value) != len(self):
            raise ValueError(f"Length of values ({len(value)}) must match dataframe length ({len(self)})")
        if key in self.columns:
            self._data[self.columns.index(key)] = value
        else:
            self.columns.append(key)
            self._data.append(value)

    def __eq__(self, other) -> bool:
        if not isinstance(other, TinyDataFrame):
            return NotImplemented
        return self.columns == other.columns and self._data == other._data

    def head(self, n: int = 5) -> "TinyDataFrame":
        """The first n rows."""
        return self[0:n]

    def tail(self, n: int = 5) -> "TinyDataFrame":
        """The last n rows."""
        return self[-n:] if n > 0 else self[0:0]

    def __repr__(self) -> str:
        first = self[0] if len(self) else {}
        return (f"TinyDataFrame with {len(self)} rows and {len(self.columns)} columns. "
                f"First row as a dict: {first}")

    def __str__(self) -> str:
        """The first 10 rows as a table: numbers right-aligned, strings left-aligned."""
        from ._frame_io import render

        return render(self)

    def rename(self, columns: dict) -> "TinyDataFrame":
        """Renames columns (old -> new) in place; returns the frame."""
        for old in columns:
            if old not in self.columns:
                raise KeyError(f"Column '{old}' not found in dataframe")
        self.columns = [columns.get(c, c) for c in self.columns]
        return self

    def to_csv(self, csv_file_path: str | None = None, quote_strings: bool = True) -> str | None:
        """Writes the frame as CSV (header first) to csv_file_path, or returns it as a string.
        quote_strings: strings quoted and numbers not (QUOTE_NONNUMERIC), else quoted only
        where needed."""
        from ._frame_io import to_csv

        return to_csv(self, csv_file_path, quote_strings)

    def to_dict(self) -> list[dict]:
        """The rows as a list of dicts."""
        return list(self)

    def stats(self, specs: list[StatSpec]) -> dict:
        """{column: {agg_name: value}} for every spec; a spec that fails is logged and left out."""
        from ._frame_io import stats

        return stats(self, specs)
