"""_frame_io.py - TinyDataFrame's CSV reading and writing, printing and statistics, imported
when first used (tiny_data_frame.py keeps the column store)."""

from __future__ import annotations


def _logger():
    from logging import getLogger

    return getLogger("resource_tracker.tiny_data_frame")


def read_csv(path, retries: int, retry_delay: float, reader, opener, wait) -> list[dict]:
    """The rows of a CSV file with a header (a path, or an http(s) URL read with opener) as
    dicts of typed values (see _typed_rows), read with reader (csv.DictReader's interface).
    A failed read (a file being written, or not there yet; a row longer than the header) is
    tried again `retries` times, wait(retry_delay) before each, the delay doubled each time;
    then RuntimeError("Failed to read CSV file after N attempts: PATH")."""
    from io import StringIO

    path = str(path)  # a PathLike too
    last = None
    for attempt in range(retries + 1):
        try:
            if path.startswith(("http://", "https://")):
                with opener(path) as response:
                    text = response.read().decode("utf-8")
            else:
                with open(path, "r", newline="") as f:
                    text = f.read()
            records = list(reader(StringIO(text, newline="")))
            for row in records:
                if None in row:
                    raise ValueError("Corrupt CSV file with unknown column names.")
            return _typed_rows(text, records)
        except Exception as e:
            last = e
            if attempt < retries:
                _logger().debug(f"Failed to read CSV file {path}: {e}; "
                                f"retry {attempt + 1}/{retries}")
                wait(retry_delay)
                retry_delay *= 2
    raise RuntimeError(f"Failed to read CSV file after {retries + 1} attempts: {path}") from last


def _typed_rows(text: str, records: list[dict]) -> list[dict]:
    """records (dicts of strings) with each value as an int when it is an integer literal,
    else a float when it is a number, else the string as read. When the text reads as
    QUOTE_NONNUMERIC (every string quoted: to_csv's default), quoted values stay strings
    even when they look like numbers, so a frame round-trips; otherwise (strings unquoted)
    each value is judged by its text alone, as the Python tracker 0.5 does."""
    typed = _nonnumeric_rows(text, len(records))
    if typed is None:
        for row in records:
            for key, value in row.items():
                if value.__class__ is str:
                    row[key] = _number(value)
        return records
    for row, values in zip(records, typed):
        for (key, raw), value in zip(row.items(), values):
            if value.__class__ is float:  # unquoted: a number; an int when its text is one
                digits = raw[1:] if raw[:1] in ("-", "+") else raw
                row[key] = int(raw) if digits.isdigit() and digits.isascii() else value
    return records


def _nonnumeric_rows(text: str, n_rows: int) -> list[list] | None:
    """The data rows as QUOTE_NONNUMERIC reads them (quoted fields str, the others float),
    when the whole text parses so with n_rows data rows; else None."""
    import csv
    from io import StringIO

    try:
        rows = [r for r in csv.reader(StringIO(text, newline=""), quoting=csv.QUOTE_NONNUMERIC) if r]
    except (ValueError, csv.Error):  # an unquoted string: not written with QUOTE_NONNUMERIC
        return None
    return rows[1:] if len(rows) == n_rows + 1 else None


_DIGITS = frozenset("0123456789")


def _number(s: str):
    """s as an int (an optional sign and ASCII digits), else as a float (a number as Python
    writes one: no spaces, no underscores), else s itself."""
    digits = s[1:] if s[:1] in ("+", "-") else s
    if digits and _DIGITS.issuperset(digits):
        return int(s)
    if "_" in s or s != s.strip() or not s.isascii():
        return s
    try:
        return float(s)
    except ValueError:
        return s


def render(df) -> str:
    """The first 10 rows as a table: numbers right-aligned, strings left-aligned."""
    head = f"TinyDataFrame with {len(df)} rows and {len(df.columns)} columns:\n"
    if len(df) == 0:
        return head + "Empty dataframe"
    shown = min(10, len(df))
    cells = [[str(v) for v in values[:shown]] for values in df._data]
    widths = [max([len(str(c))] + [len(x) for x in col]) for c, col in zip(df.columns, cells)]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(df.columns, widths)),
             "-+-".join("-" * w for w in widths)]
    for i in range(shown):
        parts = []
        for col, w in zip(cells, widths):
            parts.append(col[i].rjust(w) if _is_number(col[i]) else col[i].ljust(w))
        lines.append(" | ".join(parts))
    if len(df) > shown:
        lines.append("..." + " " * (len(lines[0]) - 3))
    return head + "\n".join(lines)


def to_csv(df, csv_file_path: str | None = None, quote_strings: bool = True) -> str | None:
    """Writes the frame as CSV (header first) to csv_file_path, or returns it as a string.
    quote_strings: strings quoted and numbers not (QUOTE_NONNUMERIC), else quoted only
    where needed."""
    import csv
    from io import StringIO

    f = open(csv_file_path, "w", newline="") if csv_file_path else StringIO(newline="")
    try:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC if quote_strings else csv.QUOTE_MINIMAL)
        w.writerow(df.columns)
        for row in zip(*df._data):
            w.writerow(row)
        return None if csv_file_path else f.getvalue()
    finally:
        f.close()


def stats(df, specs) -> dict:
    """{column: {agg_name: value}} for every spec; a spec that fails is logged and left out."""
    out: dict[str, dict] = {}
    for spec in specs:
        name = spec.agg_name or spec.agg.__name__
        try:
            value = spec.agg(df[spec.column])
            if spec.round is not None:
                value = round(value, spec.round)
        except Exception as e:
            _logger().error(f"Error collecting statistic on {spec.column} with {name}: {e}")
            continue
        out.setdefault(spec.column, {})[name] = value
    return out

def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False
