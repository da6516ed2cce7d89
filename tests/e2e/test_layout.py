"""docs/layout.md's "A counter that reaches the record" says how many places a new counter of the
record and the store touches, and lists them; the sources hold that number: the newest column's
RT_COL_* is written in two files only (its enumerator in the public header and its row in
record_fields.h), and every column is a row of exactly one of the two lists that size the store
(the record's RT_RECORD_ROWS and the store's own RT_STORE_OWN_COLUMNS). A hand list or number
that a new column must also touch (as RT_NCOLS was) fails here. Reads files only."""
import os
import re

from conftest import REPO

ENUM = os.path.join("include", "resource_tracker", "embed.h")
ROWS = os.path.join("src", "lib", "analysis", "record_fields.h")
OWN = os.path.join("src", "lib", "store", "store.h")
# the Python tracker's snapshot layout: a fixed mapping of its old columns, never of a new one
SNAPSHOT = {os.path.join("src", "lib", "embed", n) for n in ("snapshot.c", "snapshot_load.c")}


def read(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def columns():
    body = read(ENUM).split("typedef enum rt_column {", 1)[1].split("} rt_column;", 1)[0]
    return [(name, int(num)) for name, num in re.findall(r"\b(RT_COL_[A-Z0-9_]+) = (\d+)", body)]


def section():
    text = read(os.path.join("docs", "layout.md"))
    return text.split("## A counter that reaches the record", 1)[1].split("\n## ", 1)[0]


def test_the_docs_count_is_their_list():
    s = section()
    m = re.search(r"store\s+touches (\d+) places:", s)
    assert m, "docs/layout.md no longer says how many places a counter touches"
    items = re.findall(r"^(\d+)\. `([^`]+)`", s, re.M)
    assert [int(n) for n, _ in items] == list(range(1, int(m.group(1)) + 1))
    for _, path in items:
        assert os.path.exists(os.path.join(REPO, path)), path


def test_the_newest_column_is_written_twice():
    cols = columns()
    nums = [n for _, n in cols]
    assert nums == list(range(len(cols))), "rt_column's numbers are not 0..n-1 in order"
    newest = cols[-1][0]
    found = []
    for top in ("include", "src"):
        for d, _, files in os.walk(os.path.join(REPO, top)):
            for f in files:
                rel = os.path.relpath(os.path.join(d, f), REPO)
                if f.endswith((".c", ".h")) and re.search(r"\b%s\b" % newest, read(rel)):
                    found.append(rel)
    assert sorted(found) == sorted([ENUM, ROWS]), (
        f"{newest} is written in {sorted(found)}: a new column touches more places than docs/layout.md says")


def test_every_column_is_one_row():
    rows, own = read(ROWS), read(OWN)
    for name, _ in columns():
        n = len(re.findall(r"\b%s\b" % name, rows)) + len(re.findall(r"\bOWN\(%s\b" % name, own))
        part = re.match(r"RT_COL_(MAIN|DESC|COMB)_", name)  # a part's six rows: RT_COL_##P##_...
        assert n == 1 or (part and n == 0 and "RT_COL_##P##_" + name[len(part.group(0)):] in rows), name
