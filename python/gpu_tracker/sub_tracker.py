"""sub_tracker.py - gpu_tracker 5's sub-tracking (gpu_tracker.sub_tracker): `SubTracker` (a
context manager) and `@sub_track` (a decorator) write a row to a sub-tracking file when a code
block starts and when it stops; `SubTrackingAnalyzer` joins such a file with a Tracker's
tracking file into per-code-block figures (`SubTrackingResults`, `CodeBlockResults`);
`TrackingComparison` compares the pickled results of several sessions (`ComparisonResults`).
The results' `to_json()` and `str()` are gpu_tracker's. Writing needs the standard library only;
the analysis and the comparison import pandas when they run. The file layer is
_helper_classes.py. gpu_tracker's tests patch this module's `os` and `time`: a SubTracker calls
`os.getpid()` once, when made, and `time.time()` once on entering and once on leaving."""

from __future__ import annotations

import dataclasses as dclass
import functools
import logging
import os
import sys
import time
import typing

from . import _phase_socket
from . import tracker as _tracker
from ._helper_classes import _START, _STOP, _SUMMARY_STATS, _DataProxy, _load_pickle, _pandas, _summary_stats

if typing.TYPE_CHECKING:  # the results hold pandas objects; pandas is imported where they are made
    import pandas as pd


class SubTracker:
    """Marks a code block in a sub-tracking file: entering the context writes a START row
    (process ID, code block name, position 0, timestamp), leaving it a STOP row (position 1).
    With a Tracker's tracking file, `SubTrackingAnalyzer` tells what the block used.

    :ivar str code_block_name: the code block's name.
    :ivar int process_id: this process's ID.
    :ivar str sub_tracking_file: the file the rows go to.
    """

    def __init__(
        self,
        code_block_name: str | None = None,
        code_block_attribute: str | None = None,
        sub_tracking_file: str | None = None,
        overwrite: bool = False,
    ):
        """
        :param code_block_name: the code block's name. Default: the path (relative to the
            working directory) of the file that makes the SubTracker, a colon and
            `code_block_attribute`.
        :param code_block_attribute: used only without a `code_block_name`. Default: the line
            that makes the SubTracker.
        :param sub_tracking_file: where the rows go (.csv or .sqlite). Default: this process's
            ID + ".csv" in the working directory (processes should not share a file; combine
            them with `SubTrackingAnalyzer.combine_sub_tracking_files`).
        :param overwrite: whether to replace a file that existed before this process first
            wrote to it (otherwise the first row raises FileExistsError). Later SubTrackers of
            the same process append to it.
        :raises ValueError: the file ends in neither .csv nor .sqlite.
        """
        if code_block_name is None:
            caller = sys._getframe(1)
            where = caller.f_lineno if code_block_attribute is None else code_block_attribute
            code_block_name = f"{os.path.relpath(caller.f_code.co_filename)}:{where}"
        self.code_block_name = code_block_name
        self.process_id = os.getpid()
        if sub_tracking_file is None:
            sub_tracking_file = f"{self.process_id}.csv"
        self.sub_tracking_file = sub_tracking_file
        self._data_proxy = _DataProxy.create(sub_tracking_file, overwrite)

    def _mark(self, position: int) -> None:
        row = {
            "process_id": self.process_id,
            "code_block_name": self.code_block_name,
            "position": position,
            "timestamp": time.time(),
        }
        self._data_proxy.write_data(row)

    def __enter__(self) -> SubTracker:
        self._mark(_START)
        _phase_socket.send("start", self.code_block_name)
        _phase(True, self.code_block_name)
        return self

    def __exit__(self, *_) -> None:
        _phase(False, self.code_block_name)
        _phase_socket.send("stop", self.code_block_name)
        self._mark(_STOP)


def _phase(start: bool, name: str) -> None:
    """The block as a phase of this process's running Trackers (their C trackers' phases)."""
    data = _phase_socket._name_bytes(name)
    if data is not None:
        _tracker.mark_phase(start, data)


def sub_track(
    code_block_name: str | None = None,
    code_block_attribute: str | None = None,
    sub_tracking_file: str | None = None,
    overwrite: bool = False,
):
    """A decorator that runs each call of the function in a `SubTracker` of these arguments.
    The default `code_block_name` is the absolute path of the file that applies the decorator,
    a colon and `code_block_attribute` (default: the function's name); the default
    `sub_tracking_file` is that of SubTracker, for the process that makes the call."""

    def decorator(func):
        name = code_block_name
        if name is None:
            where = func.__name__ if code_block_attribute is None else code_block_attribute
            name = f"{os.path.abspath(sys._getframe(1).f_code.co_filename)}:{where}"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with SubTracker(
                code_block_name=name,
                code_block_attribute=code_block_attribute,
                sub_tracking_file=sub_tracking_file,
                overwrite=overwrite,
            ):
                return func(*args, **kwargs)

        return wrapper

    return decorator


class SubTrackingAnalyzer:
    """Per-code-block figures from a tracking file (a Tracker's `tracking_file`) and a
    sub-tracking file (SubTrackers'). Nothing is read before a method needs it."""

    def __init__(self, tracking_file: str | None, sub_tracking_file: str):
        """
        :param tracking_file: the Tracker's file of timepoints (None to combine files only).
        :param sub_tracking_file: the SubTrackers' file of code block starts and stops.
        :raises ValueError: a file ends in neither .csv nor .sqlite.
        """
        self._tracking_proxy = _DataProxy.create(tracking_file)
        self._sub_tracking_proxy = _DataProxy.create(sub_tracking_file)

    def _tracking(self) -> _DataProxy:
        if self._tracking_proxy is None:
            raise ValueError("This SubTrackingAnalyzer has no tracking file.")
        return self._tracking_proxy

    def read_static_data(self):
        """The tracking file's static data (units and capacities), a pandas Series."""
        return self._tracking().read_static_data()

    def load_code_block_names(self) -> list[str]:
        """The names of the code blocks in the sub-tracking file, sorted."""
        return self._sub_tracking_proxy.load_code_block_names()

    def combine_sub_tracking_files(self, files: list[str]) -> None:
        """Write the sub-tracking file (which must not exist) with the rows of `files` (of the
        same extension), for example one file per process.

        :raises ValueError: the sub-tracking file exists, or a file's extension differs.
        """
        self._sub_tracking_proxy.combine_files(files)

    def load_timestamp_pairs(self, code_block_name: str) -> list[tuple[float, float]]:
        """The (start, stop) timestamps of each completed call of the code block.

        :raises ValueError: the sub-tracking file pairs two processes, or a stop with a later start.
        """
        return self._sub_tracking_proxy.load_timestamp_pairs(code_block_name)

    def load_timepoints(self, timestamp_pairs: list[tuple[float, float]]):
        """The tracking file's timepoints inside any of the pairs (a pandas DataFrame)."""
        return self._tracking().load_timepoints(timestamp_pairs)

    def overall_timepoint_results(self):
        """min, max, mean and std (ddof 0) of each measurement over all the timepoints."""
        return self._tracking().overall_timepoint_results()

    def sub_tracking_results(self) -> SubTrackingResults:
        """The overall figures, the static data and, for each code block (sorted by name), its
        calls, their compute time (seconds) and the figures of the timepoints inside them."""
        pd = _pandas()
        overall = self.overall_timepoint_results()
        names = self.load_code_block_names()
        static_data = self.read_static_data()
        blocks = []
        for name in names:
            pairs = self.load_timestamp_pairs(name)
            durations = pd.Series([stop - start for start, stop in pairs], dtype="float64")
            compute_time = _summary_stats(durations)
            compute_time["total"] = durations.sum().item()
            timepoints = self.load_timepoints(pairs)
            stamps = timepoints["timestamp"]
            non_empty = sum(bool(((stamps >= start) & (stamps <= stop)).any()) for start, stop in pairs)
            usage = _summary_stats(timepoints.drop(columns="timestamp")).T
            blocks.append(
                CodeBlockResults(
                    name=name,
                    num_timepoints=len(timepoints),
                    num_calls=len(pairs),
                    num_non_empty_calls=non_empty,
                    compute_time=compute_time,
                    resource_usage=usage,
                )
            )
        return SubTrackingResults(overall, static_data, blocks)


def _line_number(name: str) -> str | None:
    """The text after a code block name's last colon when it is an integer, else None."""
    if ":" not in name:
        return None
    tail = name.rsplit(":", 1)[1]
    try:
        int(tail)
    except ValueError:
        return None
    return tail


def _in_comparison_order(blocks: list) -> list:
    """Code block results sorted by name, line numbers padded with zeros to the longest one
    (so that "f.py:9" comes before "f.py:38")."""
    width = max((len(n) for n in map(_line_number, (b.name for b in blocks)) if n is not None), default=0)

    def key(block) -> str:
        number = _line_number(block.name)
        if number is None:
            return block.name
        return block.name.rsplit(":", 1)[0] + ":" + number.zfill(width)

    return sorted(blocks, key=key)


def _scalar(value):
    return value.item() if hasattr(value, "item") else value


class TrackingComparison:
    """Compares tracking sessions, each a pickled `SubTrackingResults`. Code blocks are matched
    by name in sorted order; names that differ only by their line number ("file.py:12" and
    "file.py:14") match, with a warning.

    :ivar dict[str, SubTrackingResults] results_map: each session's results, by session name.
    """

    def __init__(self, file_path_map: dict[str, str]):
        """
        :param file_path_map: session name -> path of its pickled SubTrackingResults.
        :raises ValueError: the sessions' code blocks differ in number or names.
        """
        if not file_path_map:
            raise ValueError("A mapping of tracking session name to file path must not be empty.")
        self._name1 = sorted(file_path_map)[0]
        self.results_map = {name: _load_pickle(path) for name, path in file_path_map.items()}
        reference = self.results_map[self._name1]
        reference.code_block_results = _in_comparison_order(reference.code_block_results)
        blocks1 = reference.code_block_results
        for name2, results in self.results_map.items():
            if name2 == self._name1:
                continue
            blocks2 = _in_comparison_order(results.code_block_results)
            if len(blocks1) != len(blocks2):
                raise ValueError(
                    f"All sub-tracking results must have the same number of code blocks. The first has "
                    f'{len(blocks1)} code blocks but tracking session "{name2}" has {len(blocks2)} code blocks.'
                )
            for block1, block2 in zip(blocks1, blocks2):
                self._check_match(block1.name, block2.name, name2)
            results.code_block_results = blocks2

    def _check_match(self, name1: str, name2: str, session2: str) -> None:
        if name1 == name2:
            return
        if (
            _line_number(name1) is not None
            and _line_number(name2) is not None
            and name1.rsplit(":", 1)[0] == name2.rsplit(":", 1)[0]
        ):
            logging.warning(
                f'Code block name "{name1}" of tracking session "{self._name1}" matched with code block name '
                f'"{name2}" of tracking session "{session2}" but they differ by line number. If these code '
                f"blocks were not meant to match, their comparison will not be valid and their names must be "
                f"disambiguated."
            )
            return
        raise ValueError(
            f'Code block name "{name1}" of tracking session "{self._name1}" does not match code block name '
            f'"{name2}" of tracking session "{session2}"'
        )

    def compare(self, statistic: str = "mean") -> ComparisonResults:
        """Each session's `statistic` (min, max, mean or std) of every measurement, overall and
        per code block, and of each code block's compute time, as Series sorted ascending.

        :raises ValueError: an unknown statistic.
        """
        if statistic not in _SUMMARY_STATS:
            raise ValueError(f"Invalid summary statistic '{statistic}'. Valid values are {' '.join(_SUMMARY_STATS)}.")
        pd = _pandas()

        def ranked(values: dict):
            return pd.Series(values).sort_values(ascending=True, kind="stable")

        sessions = self.results_map
        reference = sessions[self._name1]
        n_blocks = len(reference.code_block_results)

        def per_block(figure) -> dict:
            compared = {}
            for i in range(n_blocks):
                blocks = {name: results.code_block_results[i] for name, results in sessions.items()}
                joined = " -> ".join(sorted({block.name for block in blocks.values()}))
                compared[joined] = ranked({name: _scalar(figure(block)) for name, block in blocks.items()})
            return compared

        overall, block_usage = {}, {}
        for measurement in reference.overall.index:
            overall[measurement] = ranked(
                {name: _scalar(results.overall[statistic][measurement]) for name, results in sessions.items()}
            )
            if n_blocks:
                block_usage[measurement] = per_block(lambda b: b.resource_usage[statistic][measurement])
        compute_time = per_block(lambda b: b.compute_time[statistic]) if n_blocks else {}
        return ComparisonResults(
            overall_resource_usage=overall, code_block_resource_usage=block_usage, code_block_compute_time=compute_time
        )


# ---- the results --------------------------------------------------------------------------


@dclass.dataclass
class CodeBlockResults:
    """The results of one code block.

    :param name: the code block's name.
    :param num_timepoints: the timepoints tracked during its calls.
    :param num_calls: its completed calls.
    :param num_non_empty_calls: the calls with at least one timepoint.
    :param compute_time: min, max, mean, std and total of its calls' durations (seconds).
    :param resource_usage: min, max, mean and std of each measurement during its calls.
    """

    name: str
    num_timepoints: int
    num_calls: int
    num_non_empty_calls: int
    compute_time: pd.Series
    resource_usage: pd.DataFrame


@dclass.dataclass
class SubTrackingResults:
    """A tracking session's results: the overall figures, the static data and each code block's.

    :param overall: min, max, mean and std of each measurement over all the timepoints.
    :param static_data: the units and capacities of the tracking session.
    :param code_block_results: the code blocks' results.
    """

    overall: pd.DataFrame
    static_data: pd.Series
    code_block_results: list[CodeBlockResults]

    def to_json(self) -> dict:
        """The results as a dict of plain values (gpu_tracker's shape)."""
        return {
            "overall": _frame_json(self.overall),
            "static_data": self.static_data.to_dict(),
            "code_block_results": [
                {
                    "name": block.name,
                    "num_timepoints": block.num_timepoints,
                    "num_calls": block.num_calls,
                    "num_non_empty_calls": block.num_non_empty_calls,
                    "compute_time": block.compute_time.to_dict(),
                    "resource_usage": _frame_json(block.resource_usage),
                }
                for block in self.code_block_results
            ],
        }

    def __str__(self) -> str:
        """The results as gpu_tracker's text."""
        return _text(_fields(self, code_block_results=[_fields(b) for b in self.code_block_results]), 0, set())


@dclass.dataclass
class ComparisonResults:
    """The comparison of tracking sessions (`TrackingComparison.compare`); each Series holds one
    figure per session, ascending.

    :param overall_resource_usage: measurement -> Series.
    :param code_block_resource_usage: measurement -> code block -> Series.
    :param code_block_compute_time: code block -> Series.
    """

    overall_resource_usage: dict
    code_block_resource_usage: dict
    code_block_compute_time: dict

    def to_json(self) -> dict:
        """The comparison as a dict of plain values (gpu_tracker's shape)."""
        return {
            "overall_resource_usage": _series_json(self.overall_resource_usage),
            "code_block_resource_usage": {
                measurement: _series_json(blocks) for measurement, blocks in self.code_block_resource_usage.items()
            },
            "code_block_compute_time": _series_json(self.code_block_compute_time),
        }

    def __str__(self) -> str:
        """The comparison as gpu_tracker's text (code block names as they are)."""
        return _text(_fields(self), 0, set(self.code_block_compute_time))


def _fields(obj, **replaced) -> dict:
    return {f.name: replaced.get(f.name, getattr(obj, f.name)) for f in dclass.fields(obj)}


def _frame_json(frame) -> dict:
    return {label: row.to_dict() for label, row in frame.iterrows()}


def _series_json(series_by_name: dict) -> dict:
    return {name: series.to_dict() for name, series in series_by_name.items()}


def _eight_places(x) -> str:
    """A float rounded to 8 decimals, as Python writes that float (0.0869161, 1.77e-06)."""
    return str(float(f"{x:.8f}"))


def _text(mapping: dict, depth: int, keep: set) -> str:
    """gpu_tracker's text of nested results: each key titled ("code_block_results" -> "Code
    Block Results") unless in `keep`, indented a tab per level; a dict or a list of dicts under
    "Key:", each dict of a list followed by a blank line; a frame, or a Series as a one-row
    frame, printed by pandas under "Key:" (floats rounded to 8 decimals); a plain value after
    "Key:" padded to the longest key of its dict (floats with 8 decimals)."""
    pd = _pandas()
    tabs = "\t" * depth
    labelled = {tabs + (key if key in keep else key.replace("_", " ").title()): v for key, v in mapping.items()}
    width = max(map(len, labelled), default=0)
    out = []
    for label, value in labelled.items():
        if type(value) is pd.Series:
            value = value.to_frame().T
            value.index = [""]
        if type(value) is dict:
            out.append(f"{label}:\n" + _text(value, depth + 1, keep))
        elif type(value) is pd.DataFrame:
            with pd.option_context(
                "display.max_rows", None,
                "display.max_columns", None,
                "display.width", 5000,
                "display.float_format", _eight_places,
            ):
                printed = str(value)
            out.append(f"{label}:\n" + "".join(f"{tabs}\t{line}\n" for line in printed.splitlines()))
        elif type(value) is list:
            out.append(f"{label}:\n" + "".join(_text(item, depth + 1, keep) + "\n" for item in value))
        else:
            shown = f"{value:.8f}" if type(value) is float else value
            out.append(f"{label}:{' ' * (width - len(label))} {shown}\n")
    return "".join(out)
