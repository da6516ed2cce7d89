"""_helper_classes.py - gpu_tracker's tracking and sub-tracking files (gpu_tracker 5's layouts,
so that its files and ours interchange both ways): a `_DataProxy` per file, chosen by the
name's extension, `.csv` (csv's excel dialect: lines end in \\r\\n, a header line first) or
`.sqlite` (rows in table `data`, whose column types come from the Python types of the first row;
a tracking file's static data in table `static_data`, or in a CSV's first two lines); the
overwrite rules (a file is checked once per process, on its first write, then appended to);
the readers the analysis uses (pandas, imported only there); combining per-process
sub-tracking files; and the pickle loader that reads results pickled under numpy 2 on numpy 1.
Standard library only at import: writing a file needs neither pandas nor SQLAlchemy."""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import pickle
import sqlite3
import subprocess as subp  # noqa: F401  (gpu_tracker's tests patch _helper_classes.subp)
import urllib.parse

_SUMMARY_STATS = ["min", "max", "mean", "std"]

# A tracking file's static data and the columns of each timepoint, in gpu_tracker's order.
_STATIC_FIELDS = (
    "ram_unit", "gpu_ram_unit", "time_unit", "ram_system_capacity", "gpu_ram_system_capacity",
    "system_core_count", "n_expected_cores", "system_gpu_count", "n_expected_gpus",
)
_TIMEPOINT_FIELDS = (
    "main_ram", "descendants_ram", "combined_ram", "system_ram",
    "main_gpu_ram", "descendants_gpu_ram", "combined_gpu_ram", "system_gpu_ram",
    "gpu_sum_utilization_percent", "gpu_hardware_utilization_percent",
    "main_n_threads", "descendants_n_threads", "combined_n_threads",
    "cpu_system_sum_utilization_percent", "cpu_system_hardware_utilization_percent",
    "cpu_main_sum_utilization_percent", "cpu_main_hardware_utilization_percent",
    "cpu_descendants_sum_utilization_percent", "cpu_descendants_hardware_utilization_percent",
    "cpu_combined_sum_utilization_percent", "cpu_combined_hardware_utilization_percent",
    "timestamp",
)
# A sub-tracking row: the code block's START (0, on entering) or STOP (1, on leaving).
_SUB_TRACKING_FIELDS = ("process_id", "code_block_name", "position", "timestamp")
_START, _STOP = 0, 1


def _pandas():
    import pandas  # only the analysis and the comparison need it

    return pandas


def _summary_stats(data):
    """min, max, mean and the population standard deviation (ddof 0) of a Series (a Series
    indexed by those four names) or of each column of a DataFrame (a frame with those four
    rows), as floats: each column's min, max and mean on its own, the deviations of the whole
    frame at once, as gpu_tracker computes them (the same floats to the last digit)."""
    pd = _pandas()
    if isinstance(data, pd.Series):
        figures = [data.min(), data.max(), data.mean(), data.std(ddof=0)]
        return pd.Series(figures, index=_SUMMARY_STATS, dtype="float64")
    figures = {name: [column.min(), column.max(), column.mean(), 0.0] for name, column in data.items()}
    stats = pd.DataFrame(figures, index=_SUMMARY_STATS, columns=data.columns, dtype="float64")
    stats.loc["std"] = data.std(ddof=0)
    return stats


def _no_such_file(path: str) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


def _sql_name(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _sql_type(value) -> str:
    """The declared type of a column whose first value is `value` (gpu_tracker's mapping:
    int INTEGER, float FLOAT, str VARCHAR; a bool is an int; anything else untyped)."""
    if isinstance(value, bool) or isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "VARCHAR"
    return ""


class _DataProxy:
    """One tracking or sub-tracking file. `create` picks the class by the name's extension."""

    # The names this process has written rows (or a tracking file's static data) to: their
    # first write checked for an older file; later ones append without checking.
    _files_w_data: set[str] = set()
    _files_w_static_data: set[str] = set()
    _EXTENSION = ""

    @staticmethod
    def create(file: str | None, overwrite: bool = False) -> _DataProxy | None:
        """The proxy of `file` (None for None); ValueError when it ends in neither .csv nor .sqlite."""
        if file is None:
            return None
        if file.endswith(".csv"):
            return _CSVDataProxy(file, overwrite)
        if file.endswith(".sqlite"):
            return _SQLiteDataProxy(file, overwrite)
        raise ValueError(f'Invalid file name: "{file}". Valid file extensions are ".csv" and ".sqlite".')

    def __init__(self, file_name: str, overwrite: bool = False):
        self._file_name = file_name
        self._overwrite = overwrite
        self._frames: dict[str, object] = {}  # what the readers read, read once

    # ---- writing ----------------------------------------------------------------------

    def _make_room(self) -> None:
        if os.path.isfile(self._file_name):
            if not self._overwrite:
                raise FileExistsError(
                    f"File {self._file_name} already exists. Set overwrite to True to overwrite the existing file."
                )
            os.remove(self._file_name)

    def write_data(self, row: dict) -> None:
        """Append one row (a timepoint or a sub-tracking mark). The first row this process
        writes to the file checks for an older file (FileExistsError unless overwrite, which
        removes it; not when this process wrote the file's static data) and starts the table;
        every row raises FileNotFoundError if the file has gone since."""
        name = self._file_name
        if name not in _DataProxy._files_w_data:
            if name not in _DataProxy._files_w_static_data:
                self._make_room()
            self._start_table(row)
            _DataProxy._files_w_data.add(name)
        if not os.path.isfile(name):
            raise FileNotFoundError(f"The file {name} was removed in the middle of writing data to it.")
        self._append(row)

    def write_static_data(self, row: dict) -> None:
        """Write a tracking file's static data (its units and capacities), which starts the
        file: FileExistsError if it exists, unless overwrite (which removes it). Its first
        timepoint then starts the table, also when this process wrote an earlier file of
        that name (gpu_tracker writes the timepoints from a new process each time)."""
        self._make_room()
        self._write_static(row)
        _DataProxy._files_w_static_data.add(self._file_name)
        _DataProxy._files_w_data.discard(self._file_name)

    def _start_table(self, row: dict) -> None:
        raise NotImplementedError

    def _append(self, row: dict) -> None:
        raise NotImplementedError

    def _write_static(self, row: dict) -> None:
        raise NotImplementedError

    # ---- reading (pandas) ------------------------------------------------------------

    def _read(self, what: str):
        """The file's frame `what` ('static', 'timepoints' or 'marks'), read on first use."""
        if what not in self._frames:
            if not os.path.isfile(self._file_name):
                raise _no_such_file(self._file_name)
            self._frames[what] = self._read_frame(what)
        return self._frames[what]

    def _read_frame(self, what: str):
        raise NotImplementedError

    def read_static_data(self):
        """A tracking file's static data, as a Series named 0 (gpu_tracker's)."""
        return self._read("static").iloc[0]

    def read_timepoints(self):
        """A tracking file's timepoints, a frame with a row per sample."""
        return self._read("timepoints")

    def read_marks(self):
        """A sub-tracking file's rows (process_id, code_block_name, position, timestamp)."""
        return self._read("marks")

    def load_code_block_names(self) -> list[str]:
        return sorted(self.read_marks()["code_block_name"].unique())

    def load_timestamp_pairs(self, code_block_name: str) -> list[tuple[float, float]]:
        """The (start, stop) timestamps of each call of the code block: its rows in the order
        (process, timestamp, position), less each process's last row when that is a START (a
        call still running), taken two by two. A pair of two processes, or a STOP then a START,
        is an invalid file (ValueError)."""
        marks = self.read_marks()
        rows = marks.loc[marks["code_block_name"] == code_block_name]
        rows = sorted(
            zip(rows["process_id"].tolist(), rows["position"].tolist(), rows["timestamp"].tolist()),
            key=lambda r: (r[0], r[2], r[1]),
        )
        kept = [
            row for i, row in enumerate(rows)
            if not (row[1] == _START and (i + 1 == len(rows) or rows[i + 1][0] != row[0]))
        ]
        pairs = []
        for i in range(0, len(kept), 2):
            (pid1, position1, start), *rest = kept[i:i + 2]
            start = float(start)
            if not rest:
                raise ValueError(
                    f"Sub-tracking file is invalid. Detected timestamp {start} of process ID {int(pid1)} without a pair."
                )
            pid2, position2, stop = rest[0]
            stop = float(stop)
            prefix = f"Sub-tracking file is invalid. Detected timestamp pair ({start}, {stop})"
            if int(pid1) != int(pid2):
                raise ValueError(f"{prefix} with differing process IDs: {int(pid1)} and {int(pid2)}.")
            if position1 > position2:
                raise ValueError(f"{prefix} of process ID {int(pid1)} with a start time greater than the stop time.")
            pairs.append((start, stop))
        return pairs

    def load_timepoints(self, timestamp_pairs: list[tuple[float, float]]):
        """The timepoints whose timestamp lies in any of the pairs (bounds included), once each."""
        timepoints = self.read_timepoints()
        stamps = timepoints["timestamp"]
        inside = stamps != stamps  # all False (NaN stamps never match)
        for start, stop in timestamp_pairs:
            inside |= (stamps >= start) & (stamps <= stop)
        return timepoints.loc[inside]

    def overall_timepoint_results(self):
        """min, max, mean and std of every measurement over all the timepoints (a row each)."""
        return _summary_stats(self.read_timepoints().drop(columns="timestamp")).T

    # ---- combining ---------------------------------------------------------------------

    def combine_files(self, files: list[str]) -> None:
        """Write this (new) file with the rows of all the sub-tracking `files`, in turn."""
        if os.path.exists(self._file_name):
            raise ValueError(f"Cannot create sub-tracking file {self._file_name}. File already exists.")
        for file in files:
            if not file.endswith(self._EXTENSION):
                raise ValueError(
                    f'File {file} does not end with the same extension as {self._file_name}. '
                    f'Must end in "{self._EXTENSION}".'
                )
        for file in files:
            if not os.path.isfile(file):
                raise _no_such_file(file)
        self._combine(files)

    def _combine(self, files: list[str]) -> None:
        raise NotImplementedError


class _CSVDataProxy(_DataProxy):
    """A CSV file: a sub-tracking file is a header and its rows; a tracking file is the static
    data's header and values, then the timepoints' header and rows."""

    _EXTENSION = ".csv"

    def _writerow(self, row: dict, header: bool) -> None:
        with open(self._file_name, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(row))
            if header:
                writer.writeheader()
            else:
                writer.writerow(row)

    def _start_table(self, row: dict) -> None:
        self._writerow(row, header=True)

    def _append(self, row: dict) -> None:
        self._writerow(row, header=False)

    def _write_static(self, row: dict) -> None:
        self._writerow(row, header=True)
        self._writerow(row, header=False)

    def _read_frame(self, what: str):
        pd = _pandas()
        if what == "static":
            return pd.read_csv(self._file_name, nrows=1)
        if what == "timepoints":
            return pd.read_csv(self._file_name, skiprows=2)
        return pd.read_csv(self._file_name, dtype={"code_block_name": str})

    def _combine(self, files: list[str]) -> None:
        rows, fields = [], {}
        for file in files:
            with open(file, newline="") as f:
                reader = csv.DictReader(f)
                fields.update(dict.fromkeys(reader.fieldnames or ()))
                rows.extend(reader)
        with open(self._file_name, "x", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(fields))
            writer.writeheader()
            writer.writerows(rows)


class _SQLiteDataProxy(_DataProxy):
    """An SQLite file: rows in table `data`, a tracking file's static data in `static_data`."""

    _EXTENSION = ".sqlite"
    _DATA_TABLE = "data"
    _STATIC_DATA_TABLE = "static_data"

    def _connect(self, read_only: bool = False) -> sqlite3.Connection:
        if read_only:
            uri = "file:" + urllib.parse.quote(os.path.abspath(self._file_name)) + "?mode=ro"
            return sqlite3.connect(uri, uri=True)
        return sqlite3.connect(self._file_name)

    def _create(self, table: str, row: dict) -> None:
        columns = ", ".join(f"{_sql_name(k)} {_sql_type(v)}".rstrip() for k, v in row.items())
        with contextlib.closing(self._connect()) as con, con:
            found = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
            if found is None:
                con.execute(f"CREATE TABLE {_sql_name(table)} ({columns})")

    def _insert(self, table: str, row: dict) -> None:
        names = ", ".join(_sql_name(k) for k in row)
        marks = ", ".join("?" * len(row))
        with contextlib.closing(self._connect()) as con, con:
            con.execute(f"INSERT INTO {_sql_name(table)} ({names}) VALUES ({marks})", tuple(row.values()))

    def _start_table(self, row: dict) -> None:
        self._create(self._DATA_TABLE, row)

    def _append(self, row: dict) -> None:
        self._insert(self._DATA_TABLE, row)

    def _write_static(self, row: dict) -> None:
        self._create(self._STATIC_DATA_TABLE, row)
        self._insert(self._STATIC_DATA_TABLE, row)

    def _read_frame(self, what: str):
        pd = _pandas()
        table = self._STATIC_DATA_TABLE if what == "static" else self._DATA_TABLE
        with contextlib.closing(self._connect(read_only=True)) as con:
            frame = pd.read_sql_query(f"SELECT * FROM {_sql_name(table)}", con)
        if what == "marks":
            frame["code_block_name"] = frame["code_block_name"].astype(str)
        return frame

    def overall_timepoint_results(self):
        """As for any file, but computed by SQLite (as gpu_tracker does, so that the floats are
        its floats to the last digit): MIN, MAX, AVG, and SQRT(AVG(d * d)) of the deviations
        d from AVG. An SQLite without SQRT gets pandas' figures (the same to ~15 digits)."""
        pd = _pandas()
        data = _sql_name(self._DATA_TABLE)
        with contextlib.closing(self._connect(read_only=True)) as con:
            names = [r[1] for r in con.execute(f"PRAGMA table_info({data})") if r[1] != "timestamp"]
            figures = []
            for name in map(_sql_name, names):
                mean = f"(SELECT AVG({name}) FROM {data})"
                figures += [
                    f"MIN({name})", f"MAX({name})", mean,
                    f"(SELECT SQRT(AVG(d * d)) FROM (SELECT {name} - {mean} AS d FROM {data}))",
                ]
            try:
                row = con.execute(f"SELECT {', '.join(figures)} FROM {data}").fetchone() if names else ()
            except sqlite3.OperationalError:
                return super().overall_timepoint_results()
        values = [[float("nan") if v is None else v for v in row[i:i + 4]] for i in range(0, len(row), 4)]
        return pd.DataFrame(values, index=names, columns=_SUMMARY_STATS, dtype="float64")

    def _combine(self, files: list[str]) -> None:
        table = _sql_name(self._DATA_TABLE)
        with contextlib.closing(self._connect()) as con:
            for i, file in enumerate(files):
                con.execute("ATTACH DATABASE ? AS input_db", (file,))
                try:
                    with con:
                        if i == 0:  # the first file's table, declared types and all
                            (schema,) = con.execute(
                                "SELECT sql FROM input_db.sqlite_master WHERE type = 'table' AND name = ?",
                                (self._DATA_TABLE,),
                            ).fetchone() or (None,)
                            if schema is None:
                                raise ValueError(f"{file} has no table {self._DATA_TABLE}.")
                            con.execute(schema)
                            names = [r[1] for r in con.execute(f"PRAGMA main.table_info({table})")]
                            columns = ", ".join(_sql_name(n) for n in names)
                        con.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM input_db.{table}")
                finally:
                    con.execute("DETACH DATABASE input_db")


# ---- pickled results --------------------------------------------------------------------


def _plain_name(value, quote=None) -> str:
    """SQLAlchemy's quoted_name (a str), as a plain str."""
    return str(value)


class _ResultsUnpickler(pickle.Unpickler):
    """Loads results pickled by gpu_tracker or by this package under another numpy:
    numpy 2's `numpy._core` modules are numpy 1's `numpy.core`, and SQLAlchemy's
    `quoted_name` (the labels of data read from SQLite through SQLAlchemy) a plain str."""

    def find_class(self, module: str, name: str):
        if module == "sqlalchemy.sql.elements" and name == "quoted_name":
            return _plain_name
        try:
            return super().find_class(module, name)
        except ModuleNotFoundError:
            if module == "numpy._core" or module.startswith("numpy._core."):
                return super().find_class("numpy.core" + module[len("numpy._core"):], name)
            raise


def _load_pickle(path: str):
    with open(path, "rb") as f:
        return _ResultsUnpickler(f).load()
