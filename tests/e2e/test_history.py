"""The run history (SQLite): a tracking run with --history (or TRACKER_HISTORY, [history] path)
appends one row, `history` lists the runs, concurrent writers all land, a writer killed
mid-transaction loses nothing stored, an unusable database is one warning and never a failed
job, and `recommend --job` recommends from the last successful runs. A version-1 database (0.5's,
without the 0.6 cgroup figures) is read as it is and gains the columns on its next write; an
OOM-killed, throttled run keeps its floors through the history. A run records its energy with
its methods and its carbon (schema 5), and a version-4 database is upgraded keeping its rows."""
import json
import os
import signal
import sqlite3
import subprocess

import pytest

from conftest import REPO, TRACKER, run, tracker_env

PY = "/usr/bin/python3"
OOM_RUN = os.path.join(REPO, "tests", "fixtures", "runs", "cgroup-oom.jsonl")

# The runs table exactly as schema version 1 (resource-tracker 0.5) made it.
V1_SCHEMA = (
    "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, start_secs REAL, end_secs REAL, tool_version TEXT,"
    " job_name TEXT, project_name TEXT, stage_name TEXT, task_name TEXT, team TEXT, env TEXT, language TEXT,"
    " orchestrator TEXT, executor TEXT, external_run_id TEXT, container_image TEXT, tags TEXT, command TEXT,"
    " pid INTEGER, exit_status INTEGER, host_hostname TEXT, host_id TEXT, host_vcpus INTEGER, host_cpu_model TEXT,"
    " host_memory_mib REAL, host_gpu_model TEXT, host_gpu_count INTEGER, host_gpu_memory_mib REAL,"
    " host_allocation TEXT, cloud_vendor_id TEXT, cloud_region_id TEXT, cloud_zone_id TEXT,"
    " cloud_instance_type TEXT, samples INTEGER, duration_secs REAL, process_cpu_secs REAL,"
    " process_cores_mean REAL, process_cores_peak REAL, process_cores_p50 REAL, process_cores_p95 REAL,"
    " process_pss_mib_mean REAL, process_pss_mib_peak REAL, process_pss_mib_p50 REAL, process_pss_mib_p95 REAL,"
    " process_rss_mib_mean REAL, process_rss_mib_peak REAL, process_rss_mib_p50 REAL, process_rss_mib_p95 REAL,"
    " process_gpu_usage_mean REAL, process_gpu_usage_peak REAL, process_gpu_usage_p50 REAL,"
    " process_gpu_usage_p95 REAL, process_gpu_vram_mib_mean REAL, process_gpu_vram_mib_peak REAL,"
    " process_gpu_vram_mib_p50 REAL, process_gpu_vram_mib_p95 REAL, process_gpus_used REAL,"
    " process_read_bytes REAL, process_write_bytes REAL, cpu_count REAL, cpu_cores_mean REAL,"
    " cpu_cores_peak REAL, cpu_cores_p50 REAL, cpu_cores_p95 REAL, memory_used_mib_mean REAL,"
    " memory_used_mib_peak REAL, memory_used_mib_p50 REAL, memory_used_mib_p95 REAL, memory_total_mib REAL,"
    " gpu_usage_mean REAL, gpu_usage_peak REAL, gpu_usage_p50 REAL, gpu_usage_p95 REAL,"
    " gpu_vram_mib_mean REAL, gpu_vram_mib_peak REAL, gpu_vram_mib_p50 REAL, gpu_vram_mib_p95 REAL,"
    " gpu_count REAL, gpu_vram_total_mib REAL, disk_read_bytes REAL, disk_write_bytes REAL,"
    " net_recv_bytes REAL, net_sent_bytes REAL, disk_space_used_peak_bytes REAL, disk_space_total_bytes REAL,"
    " allocation TEXT, summary_json TEXT);"
    " CREATE INDEX runs_job ON runs (job_name, exit_status, id);"
    " PRAGMA user_version = 1;")

# The columns schema version 2 added (the 0.6 summary figures).
V2_COLUMNS = ["process_memory_peak_mib", "oom_kills", "oom_kill_secs", "memory_limit_mib", "memory_high_mib",
              "cpu_quota_cores", "cpu_periods", "cpu_throttled_periods", "cpu_throttled_secs", "pids_peak",
              "pids_limit"] + [f"pressure_{p}_pct_{s}" for p in ("cpu_some", "memory_some", "memory_full",
                                                                 "io_some", "io_full")
                               for s in ("mean", "peak", "p50", "p95")]
# the columns schema version 3 (0.9) added: the needs, what they are made from, the notes
V3_COLUMNS = ["process_rss_hwm_mib", "process_unreclaimable_peak_mib", "process_gpu_vram_peak_mib",
              "process_cancelled_write_bytes", "process_cgroup_exclusive", "left_behind", "memory_need_mib",
              "memory_need_source", "memory_need_sampled", "vram_need_mib", "vram_need_source", "vram_need_sampled",
              "notes"]
# the columns schema version 4 (0.14) added: the phases and the counts of phase marks
V4_COLUMNS = ["phases", "phase_marks"]
# the columns schema version 5 (0.15) added: the energy with its methods, power, carbon, the grid
V5_COLUMNS = (["energy_joules", "energy_method", "process_energy_joules", "process_energy_method"]
              + [f"{p}_{s}" for p in ("power_watts", "process_power_watts") for s in ("mean", "peak", "p50", "p95")]
              + ["idle_power_watts", "gpu_power_throttled_secs", "gpu_thermal_throttled_secs", "co2e_grams",
                 "process_co2e_grams", "grid_g_per_kwh", "grid_zone", "grid_source"])
# the columns schema version 6 (0.16) added: where the job ran, what it was given, its efficiencies
V6_COLUMNS = ["place", "requested_cpu_cores", "requested_cpu_from", "requested_memory_mib", "requested_memory_from",
              "requested_gpus", "requested_gpus_from", "time_limit_secs", "time_limit_from", "cpu_efficiency_pct",
              "memory_efficiency_pct", "gpu_efficiency_pct", "time_limit_used_pct", "process_vms_peak_mib"]
# the column schema version 7 (0.18) added: the run's durations under 1, 2, ... cores
V7_COLUMNS = ["cores"]
# the column schema version 8 (0.18) added: the run's place in a job of several nodes
V8_COLUMNS = ["member"]
# the columns schema version 9 (0.19) added: the GPUs' work (NVML GPM), whose it was, the GPUs kept busy, the VRAM
# on one GPU, the seconds the GPUs idled while the CPU worked
V9_COLUMNS = ([f"gpu_{p}_{s}" for p in ("sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_active_pct",
                                        "fp64_active_pct", "fp32_active_pct", "fp16_active_pct", "pcie_bytes_per_sec",
                                        "nvlink_bytes_per_sec") for s in ("mean", "peak", "p50", "p95")]
              + ["gpu_work_shared", "process_gpus_busy", "process_gpu_vram_per_gpu_peak_mib", "gpu_idle_cpu_busy_secs"])
# the columns schema version 10 (0.20) added: the file data the job's group read back (re-reads),
# what the processes left behind held at the end, the tree's processes whose end the kernel told
V10_COLUMNS = ["memory_refault_mib", "left_behind_mib", "process_exits_counted"]
# the columns schema version 11 (0.21) added: the tree's processes seen ignoring SIGCHLD, the signal
# that ended the command
V11_COLUMNS = ["process_unwaited_parents", "end_signal"]
# the columns schema version 12 added: the run's id (issue 69: a row written twice is stored once) and who
# ran what (the user, the node, the job's id)
V12_COLUMNS = ["run_uuid", "user_name", "user_uid", "node", "job_id"]
SCHEMA = 12  # the version this tool writes


def make_v1(db, *old_runs):
    """A version-1 database at db holding old_runs (dicts of column values)."""
    con = sqlite3.connect(db)
    con.executescript(V1_SCHEMA)
    for r in old_runs:
        con.execute(f"INSERT INTO runs ({', '.join(r)}) VALUES ({', '.join('?' for _ in r)})", list(r.values()))
    con.commit()
    con.close()


def schema(db):
    """(user_version, [(column, type)...] in table order) of the database at db."""
    con = sqlite3.connect(db)
    try:
        return (con.execute("PRAGMA user_version").fetchone()[0],
                [(r[1], r[2]) for r in con.execute("PRAGMA table_info(runs)")])
    finally:
        con.close()


def rows(db, where="1"):
    con = sqlite3.connect(db)
    try:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute(f"SELECT * FROM runs WHERE {where} ORDER BY id")]
    finally:
        con.close()


def track(db, *cmd, job="train", extra=(), env=None):
    args = ["-q"] + (["--history", db] if db else []) + (["--job-name", job] if job else []) + list(extra)
    return run(args + ["--"] + list(cmd), env=env or tracker_env())


def history(*args, env=None, cwd=None):
    return run(["history"] + list(args), env=env or tracker_env(), cwd=cwd)


def test_tracking_run_appends_and_history_lists(tmp_path):
    db = str(tmp_path / "runs.db")
    r = track(db, PY, "-c", "print('hi')", extra=["--tag", "team=ml", "--project-name", "p1"])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    r = track(db, "sh", "-c", "exit 3", job="other")
    assert r.returncode == 3
    got = rows(db)
    assert len(got) == 2
    first = got[0]
    assert first["job_name"] == "train" and first["project_name"] == "p1"
    assert first["exit_status"] == 0
    assert json.loads(first["command"]) == [PY, "-c", "print('hi')"]
    assert json.loads(first["tags"]) == ["team=ml"]
    assert first["start_secs"] <= first["end_secs"]
    assert first["host_hostname"] and first["host_vcpus"] >= 1
    assert first["tool_version"]
    assert first["pid"] is None  # a wrapped command, not --pid
    assert got[1]["exit_status"] == 3
    mask = os.umask(0o022)
    os.umask(mask)
    assert os.stat(db).st_mode & 0o777 == 0o644 & ~mask

    # the table: newest first, both runs, the command shown
    r = history("--history", db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["ID", "START"]
    assert "other" in lines[1] and "sh -c exit 3" in lines[1]
    assert "train" in lines[2] and "print('hi')" in lines[2]
    assert len(lines) == 3

    # JSON lines, filtered by job
    r = history("--job", "train", "--json", "--history", db)
    assert r.returncode == 0, r.stderr
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(objs) == 1
    o = objs[0]
    assert o["job_name"] == "train" and o["exit_status"] == 0
    assert o["command"] == [PY, "-c", "print('hi')"]
    assert o["tags"] == ["team=ml"]
    assert o["id"] == 1

    # --last, and the global --history before the subcommand
    r = run(["--history", db, "history", "--last", "1", "--json"])
    assert r.returncode == 0, r.stderr
    assert [json.loads(l)["job_name"] for l in r.stdout.splitlines()] == ["other"]


def test_history_named_by_env_and_config(tmp_path):
    db_env = str(tmp_path / "env.db")
    env = tracker_env(TRACKER_HISTORY=db_env)
    assert track(None, "true", env=env).returncode == 0
    assert len(rows(db_env)) == 1
    r = history("--json", env=env)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1

    db_conf = str(tmp_path / "conf.db")
    conf = tmp_path / "rt.toml"
    conf.write_text(f'[history]\npath = "{db_conf}"\n')
    assert run(["-c", str(conf), "-q", "--job-name", "c", "--", "true"]).returncode == 0
    assert [r["job_name"] for r in rows(db_conf)] == ["c"]
    r = run(["-c", str(conf), "history", "--json"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["job_name"] == "c"

    # the flag wins over the environment
    db_flag = str(tmp_path / "flag.db")
    assert track(db_flag, "true", env=env).returncode == 0
    assert len(rows(db_flag)) == 1 and len(rows(db_env)) == 1


def test_history_none_named_and_usage(tmp_path):
    r = history(cwd=str(tmp_path))
    assert r.returncode == 2
    assert "--history FILE" in r.stderr and "TRACKER_HISTORY" in r.stderr and "[history]" in r.stderr
    assert history("--bogus", "--history", "x").returncode == 2
    assert history("--last", "zero", "--history", "x").returncode == 2
    assert history("--job").returncode == 2
    # a read command: a database that cannot be read is exit 1 with one line
    r = history("--history", str(tmp_path / "missing.db"))
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "missing.db" in r.stderr
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all\n" * 300)
    r = history("--history", str(junk))
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    empty = tmp_path / "other.db"
    sqlite3.connect(str(empty)).execute("CREATE TABLE t (x)").connection.commit()
    r = history("--history", str(empty))
    assert r.returncode == 1 and "not a run history" in r.stderr


@pytest.mark.parametrize("start", ["fresh", "existing", "version1"])
def test_concurrent_writers_all_land(tmp_path, start):
    """Eight runs end at once: on a new database (one creates the table), an existing one, and a
    version-1 one (one adds the new columns; the others find them added)."""
    db = str(tmp_path / "runs.db")
    if start == "existing":
        assert track(db, "true", job="before").returncode == 0
    elif start == "version1":
        make_v1(db, {"job_name": "before", "exit_status": 0, "process_cores_mean": 1.0})
    n = 8
    procs = [subprocess.Popen([TRACKER, "-q", "--history", db, "--job-name", f"conc{i}", "--", PY, "-c", "pass"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tracker_env())
             for i in range(n)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert err == ""
    got = rows(db, "job_name LIKE 'conc%'")
    assert sorted(r["job_name"] for r in got) == sorted(f"conc{i}" for i in range(n))
    assert len(rows(db)) == n + (0 if start == "fresh" else 1)
    assert not os.path.exists(db + "-journal")
    if start == "version1":
        assert schema(db)[0] == SCHEMA and all(c in dict(schema(db)[1]) for c in V2_COLUMNS + V3_COLUMNS + V4_COLUMNS
                                               + V5_COLUMNS + V6_COLUMNS + V7_COLUMNS + V8_COLUMNS + V9_COLUMNS
                                               + V10_COLUMNS + V11_COLUMNS + V12_COLUMNS)


CRASH_WRITER = r"""
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA cache_size = 1")  # spill to the database file before the commit
con.execute("BEGIN IMMEDIATE")
for i in range(3000):
    con.execute("INSERT INTO runs (job_name, exit_status, command) VALUES ('crash', 0, ?)", ("x" * 1000,))
print("ready", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("first", ["history", "track"])
def test_writer_killed_mid_transaction_loses_nothing(tmp_path, first):
    db = str(tmp_path / "runs.db")
    for i in range(3):
        assert track(db, "true", job=f"keep{i}").returncode == 0
    size = os.path.getsize(db)
    w = subprocess.Popen([PY, "-c", CRASH_WRITER, db], stdout=subprocess.PIPE, text=True)
    try:
        assert w.stdout.readline().strip() == "ready"
        assert os.path.exists(db + "-journal")
        assert os.path.getsize(db) > size  # the database file itself was being changed
    finally:
        w.send_signal(signal.SIGKILL)
        w.wait()
    assert os.path.exists(db + "-journal")  # a hot journal is left behind
    if first == "history":
        # a read-only reader recovers the journal and sees exactly the stored runs
        r = history("--json", "--history", db)
        assert r.returncode == 0, r.stderr
        assert [json.loads(l)["job_name"] for l in r.stdout.splitlines()] == ["keep2", "keep1", "keep0"]
    r = track(db, "true", job="after")
    assert r.returncode == 0 and r.stderr == ""
    assert [r["job_name"] for r in rows(db)] == ["keep0", "keep1", "keep2", "after"]
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def unusable(tmp_path):
    """Paths SQLite cannot create or write: refused before the command starts (test_terminal.py
    holds the line's words)."""
    yield "a directory", str(tmp_path)
    yield "a missing directory", str(tmp_path / "no" / "such" / "dir" / "h.db")
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        os.chmod(ro, 0o555)
        yield "a read-only directory", str(ro / "h.db")


def test_uncreatable_database_is_a_usage_error_before_the_job(tmp_path):
    ran = tmp_path / "ran"
    for what, path in unusable(tmp_path):
        r = track(path, "sh", "-c", f"touch {ran}; exit 3")
        assert r.returncode == 2, what
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and "--history" in lines[0] and path in lines[0], (what, lines)
        assert not ran.exists(), what


def test_unusable_database_is_one_warning_not_a_failed_job(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"garbage, not SQLite\n" * 500)
    path = str(junk)  # writable, so it passes the check at the start; not a database
    r = track(path, "sh", "-c", "exit 3")
    assert r.returncode == 3
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert "warning" in lines[0] and "history" in lines[0] and path in lines[0], lines
    r = track(path, "true")
    assert r.returncode == 0


def recommend_stub():
    r = run(["recommend", "--job", "x", "--history", "/nonexistent/h.db"])
    return "not available yet" in r.stderr


def find_values(obj, pred):
    """Every value in the JSON tree whose key satisfies pred."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if pred(k):
                out.append(v)
            out += find_values(v, pred)
    elif isinstance(obj, list):
        for v in obj:
            out += find_values(v, pred)
    return out


@pytest.mark.skipif(recommend_stub(), reason="recommend is not available yet on this branch")
def test_recommend_from_the_last_successful_runs(tmp_path):
    db = str(tmp_path / "runs.db")
    assert track(db, "true", job="setup").returncode == 0  # makes the schema
    con = sqlite3.connect(db)

    def add(exit_status, cores, pss):
        con.execute("INSERT INTO runs (job_name, exit_status, samples, duration_secs, start_secs, end_secs,"
                    " process_cores_mean, process_cores_peak, process_pss_mib_mean, process_pss_mib_peak,"
                    " process_gpus_used, process_gpu_vram_mib_peak, process_cpu_secs)"
                    " VALUES ('train', ?, 10, 10, 1000, 1010, ?, ?, ?, ?, 0, 0, ?)",
                    (exit_status, cores, cores, pss / 2, pss, cores * 10))

    add(0, 8.0, 50000)  # older than the last 2: left out
    add(0, 2.0, 1000)
    add(0, 4.0, 3000)
    add(1, 16.0, 90000)  # failed: left out
    con.commit()
    con.close()
    r = run(["recommend", "--job", "train", "--last", "2", "--history", db, "--json"],
            env=tracker_env(TRACKER_KEEPER_URL="http://127.0.0.1:9"))
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert isinstance(rec, dict)
    # cores: round(mean(2, 4)) = 3; memory: 3000 MiB x 1.2 rounded up to whole GiB = 4096 MiB
    assert 3 in find_values(rec, lambda k: k in ("cpu", "cpus", "cores", "vcpus"))
    assert 4096 in find_values(rec, lambda k: k.startswith("memory"))
    runs = find_values(rec, lambda k: k == "runs")
    assert not runs or runs[0] == 2


def test_rows_from_another_writer_list_safely(tmp_path):
    """Rows another program wrote: an infinity, a NULL start, a job name and a command with
    terminal escapes. The table shows no control character (an escape would reach the
    terminal of whoever lists the runs), --json stays valid JSON with null for the infinity."""
    db = str(tmp_path / "runs.db")
    assert track(db, "true").returncode == 0
    con = sqlite3.connect(db)
    con.execute("INSERT INTO runs (job_name, command, start_secs, end_secs, exit_status, process_cores_mean,"
                " process_pss_mib_peak) VALUES (?, ?, NULL, 1e300, 0, ?, ?)",
                ("evil\x1b]0;pwned\x07\x1b[2J", json.dumps(["sh", "-c", "echo \x1b[31mred\u009b"]),
                 float("inf"), float("-inf")))
    con.execute("INSERT INTO runs (job_name, start_secs, end_secs, exit_status) VALUES ('far', 1e300, 2e300, 0)")
    con.commit()
    con.close()
    r = history("--history", db)
    assert r.returncode == 0, r.stderr
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) < 0xa0 for c in r.stdout), repr(r.stdout)
    assert "evil" in r.stdout and "far" in r.stdout
    r = history("--history", db, "--json")
    assert r.returncode == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(got) == 3
    assert got[1]["process_cores_mean"] is None and got[1]["process_pss_mib_peak"] is None
    assert got[1]["job_name"].startswith("evil\x1b")  # JSON carries it escaped, as data


def test_lock_held_past_the_timeout_is_one_warning(tmp_path):
    """Another program holds the write lock for longer than the busy timeout (10 s): the run is
    not recorded, one warning says so, the job's exit status is its own."""
    db = str(tmp_path / "runs.db")
    assert track(db, "true").returncode == 0
    con = sqlite3.connect(db, isolation_level=None, timeout=0)
    con.execute("BEGIN EXCLUSIVE")
    try:
        r = track(db, "sh", "-c", "exit 3")  # waits out the timeout (the run's hang guard: 30 s)
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert r.returncode == 3
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "warning" in lines[0] and "locked" in lines[0], r.stderr
    assert len(rows(db)) == 1


def test_read_while_another_writes(tmp_path):
    """A writer inside its transaction (holding the reserved lock, its row not committed):
    `history` reads what was committed, at once."""
    db = str(tmp_path / "runs.db")
    assert track(db, "true").returncode == 0
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    con.execute("INSERT INTO runs (job_name, exit_status) VALUES ('pending', 0)")
    try:
        r = history("--history", db, "--json")
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert r.returncode == 0, r.stderr
    assert [json.loads(l)["job_name"] for l in r.stdout.splitlines()] == ["train"]


def test_version1_database_read_then_migrated(tmp_path):
    """0.5's database: `history` and `recommend --job` read it as it is (the 0.6 figures missing,
    nothing written), and the next run adds the columns (the same as a new database's), keeps the
    old run as it was and stores the new figures."""
    db = str(tmp_path / "old.db")
    old = {"job_name": "train", "exit_status": 0, "samples": 10, "start_secs": 1000.0, "end_secs": 1060.0,
           "duration_secs": 60.0, "process_cpu_secs": 90.0, "process_cores_mean": 1.5, "process_cores_peak": 2.0,
           "process_pss_mib_mean": 2000.0, "process_pss_mib_peak": 3000.0, "tool_version": "0.5.0",
           "command": json.dumps(["python3", "train.py"]), "tags": "[]"}
    make_v1(db, old)
    before = schema(db)
    assert before[0] == 1

    r = history("--history", db)
    assert r.returncode == 0, r.stderr
    assert "train" in r.stdout and "OOM" not in r.stdout
    r = history("--history", db, "--json")
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    assert o["process_cores_mean"] == 1.5 and "oom_kills" not in o
    r = run(["recommend", "--job", "train", "--history", db, "--json"])
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)["recommendation"]
    assert rec["cpu"] == 2 and rec["memory_mib"] == 4096  # 1.5 -> 2 cores; 3000 MiB x 1.2 -> 4 GiB
    assert rec["oom_killed"] is False and rec["cpu_quota_cores"] is None
    assert schema(db) == before  # reading wrote nothing

    r = track(db, PY, "-c", "pass")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    fresh = str(tmp_path / "new.db")
    assert track(fresh, "true").returncode == 0
    assert schema(db) == schema(fresh)  # the same version, columns and order
    assert schema(db)[0] == SCHEMA
    later = (V4_COLUMNS + V5_COLUMNS + V6_COLUMNS + V7_COLUMNS + V8_COLUMNS + V9_COLUMNS + V10_COLUMNS
             + V11_COLUMNS + V12_COLUMNS)
    assert [c for c, _ in schema(db)[1][-len(later):]] == later
    got = rows(db)
    assert len(got) == 2
    assert {k: got[0][k] for k in old} == old  # the old run as it was
    assert all(got[0][c] is None for c in V2_COLUMNS + V3_COLUMNS + V4_COLUMNS + V5_COLUMNS)
    assert got[1]["phases"] is None and got[1]["phase_marks"] is None  # a run without marks
    assert got[1]["job_name"] == "train" and got[1]["exit_status"] == 0 and got[1]["samples"] >= 1
    r = history("--history", db, "--json")
    assert r.returncode == 0, r.stderr
    assert [json.loads(l)["id"] for l in r.stdout.splitlines()] == [2, 1]
    assert all(c in json.loads(r.stdout.splitlines()[0]) for c in V2_COLUMNS)


def summary_columns(summary, have):
    """The columns of a runs row for a run's `summary --json`: process.X -> process_X (process.left_behind
    and left_behind_mib keep their names), machine.cores
    -> cpu_cores, machine.X -> X, cgroup.X -> X, pressure.X -> pressure_X, a distribution's
    members as _mean/_peak/_p50/_p95; only the columns in have."""
    out = {}
    for group, prefix in (("process", "process_"), ("machine", ""), ("cgroup", ""), ("pressure", "pressure_")):
        for k, v in summary.get(group, {}).items():
            name = "cpu_cores" if (group, k) == ("machine", "cores") else prefix + k
            if group == "process" and k.startswith("left_behind"):  # the run's end, not the tree's figure
                name = k
            items = ((f"{name}_{m}", x) for m, x in v.items()) if isinstance(v, dict) else [(name, v)]
            out.update((n, x) for n, x in items if n in have)
    for k in ("samples", "duration_secs", "start_secs", "end_secs", "allocation"):
        out[k] = summary[k]
    if "cores" in have and summary.get("cores") is not None:  # the table under other core counts
        out["cores"] = json.dumps(summary["cores"])
    return out


@pytest.mark.skipif(recommend_stub(), reason="recommend is not available yet on this branch")
def test_recommend_from_history_keeps_oom_and_quota_floors(tmp_path):
    """The recorded OOM-killed, throttled run (cgroup-oom.jsonl) stored as a history row from its
    summary: `recommend --job` from the history asks for what `recommend` of the file asks (twice
    the limit it died at, a core above the quota that held it back), and `history` marks it. The
    killed command exited 137: the run still counts (only runs that failed otherwise do not)."""
    s = json.loads(run(["summary", "--json", OOM_RUN]).stdout)
    db = str(tmp_path / "runs.db")
    assert track(db, "true", job="setup").returncode == 0  # makes the schema
    have = dict(schema(db)[1])
    row = summary_columns(s, have)
    assert all(c in row for c in V2_COLUMNS), sorted(set(V2_COLUMNS) - set(row))
    assert row["oom_kills"] == 1 and row["cpu_throttled_periods"] == 32 and row["memory_limit_mib"] == 8192
    row.update(job_name="oom-job", exit_status=137, summary_json=json.dumps(s))
    con = sqlite3.connect(db)
    con.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", list(row.values()))
    con.commit()
    con.close()

    want = json.loads(run(["recommend", "--json", OOM_RUN]).stdout)["recommendation"]
    assert want["oom_killed"] is True and want["cpu"] == 3 and want["memory_mib"] == 16384  # 2x the limit
    r = run(["recommend", "--job", "oom-job", "--history", db, "--json"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["recommendation"] == want
    r = run(["recommend", "--job", "oom-job", "--history", db])
    assert r.returncode == 0, r.stderr
    assert ("the job was OOM-killed at its 8 GiB limit (peak 7.9 GiB): its need is above that, unknown; "
            "asking for 16 GiB (2x the limit) to learn it") in r.stdout
    assert "the CPU quota of 2 cores held the job back: throttled in 40% of periods; asking for 3" in r.stdout

    r = history("--history", db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "oom-job" in lines[1] and " 137 OOM " in lines[1]
    assert "setup" in lines[2] and "OOM" not in lines[2]
    o = json.loads(history("--history", db, "--json", "--last", "1").stdout)
    assert o["oom_kills"] == 1 and o["summary"]["cgroup"]["oom_kills"] == 1


def test_run_records_its_energy_and_carbon(tmp_path):
    """A run with --history records its energy with the methods (this VM has no counter: the
    CPU estimate, "estimated"), and with --grid-intensity 400 its carbon: the job's grams are
    its kWh times 400, as the run's summary says; `history` shows the job's energy marked ~
    (estimated) and --json carries the figures with their methods."""
    db = str(tmp_path / "runs.db")
    r = track(db, PY, "-c", "sum(range(3000000))", extra=["-i", "0.2", "--grid-intensity", "400"])
    assert r.returncode == 0, r.stderr
    (got,) = rows(db)
    summary = json.loads(got["summary_json"])["energy"]
    methods = {"measured", "sampled", "estimated"}
    assert got["energy_method"] in methods and got["process_energy_method"] in methods
    assert got["energy_method"] == summary["method"]
    assert got["process_energy_method"] == summary["process_method"]
    assert got["process_energy_joules"] > 0 and got["energy_joules"] >= got["process_energy_joules"]
    assert round(got["energy_joules"], 3) == summary["joules"]
    assert round(got["process_energy_joules"], 3) == summary["process_joules"]
    assert got["grid_g_per_kwh"] == 400 and got["grid_source"] == "given" and got["grid_zone"] is None
    assert got["process_co2e_grams"] == pytest.approx(got["process_energy_joules"] / 3.6e6 * 400, rel=1e-12)
    assert got["co2e_grams"] == pytest.approx(got["energy_joules"] / 3.6e6 * 400, rel=1e-12)
    carbon = summary["carbon"]
    assert carbon["g_per_kwh"] == 400
    assert round(got["process_co2e_grams"], 6) == carbon["process_co2e_grams"]  # the summary: to the microgram
    assert got["power_watts_mean"] > 0 and got["idle_power_watts"] > 0

    r = history("--history", db)
    assert r.returncode == 0, r.stderr
    head, line = r.stdout.splitlines()
    assert "ENERGY" in head.split()
    cell = line[:head.index("ENERGY") + len("ENERGY")].split()[-1]  # the column is right-aligned
    unit = cell.rstrip("~")
    assert unit in ("J", "kJ", "MJ") and cell.endswith("~") == (got["process_energy_method"] == "estimated")
    r = history("--history", db, "--json")
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    assert o["process_energy_joules"] == got["process_energy_joules"]
    assert o["process_energy_method"] == got["process_energy_method"]
    assert o["process_co2e_grams"] == got["process_co2e_grams"] and o["grid_g_per_kwh"] == 400

    # --energy off: nothing recorded, the table says "-", never a number without its method
    r = track(db, "true", extra=["--energy", "off"])
    assert r.returncode == 0, r.stderr
    last = rows(db)[-1]
    assert all(last[c] is None for c in V5_COLUMNS), {c: last[c] for c in V5_COLUMNS}
    r = history("--history", db, "--last", "1")
    head, line = r.stdout.splitlines()
    assert line[:head.index("ENERGY") + len("ENERGY")].split()[-1] == "-"


def test_version4_database_upgraded_keeping_its_rows(tmp_path):
    """0.14's database (schema 4): `history` lists it as it is (no energy: "-"), and the next run
    adds the 0.15, 0.16, 0.18, 0.19, 0.20 and 0.21 columns and who ran what at the end (the same table as a new
    database's), stamps version 12,
    keeps the old rows as they were and records the new run's energy."""
    fresh = str(tmp_path / "new.db")
    assert track(fresh, "true").returncode == 0
    v7 = schema(fresh)
    added = V5_COLUMNS + V6_COLUMNS + V7_COLUMNS + V8_COLUMNS + V9_COLUMNS + V10_COLUMNS + V11_COLUMNS + V12_COLUMNS
    assert v7[0] == SCHEMA and [c for c, _ in v7[1][-len(added):]] == added
    v4_cols = v7[1][:-len(added)]
    db = str(tmp_path / "old.db")
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                + ", ".join(f"{c} {t}" for c, t in v4_cols[1:]) + ")")
    con.execute("CREATE INDEX runs_job ON runs (job_name, exit_status, id)")
    con.execute("PRAGMA user_version = 4")
    old = [{"job_name": "train", "exit_status": 0, "samples": 10, "start_secs": 1000.0, "end_secs": 1060.0,
            "duration_secs": 60.0, "process_cores_mean": 1.5, "process_pss_mib_peak": 3000.0,
            "tool_version": "0.14.0", "phases": '[{"name":"load"}]', "memory_need_mib": 3100.0},
           {"job_name": "train", "exit_status": 1, "samples": 3, "tool_version": "0.14.0", "notes": "[]"}]
    for o in old:
        con.execute(f"INSERT INTO runs ({', '.join(o)}) VALUES ({', '.join('?' for _ in o)})", list(o.values()))
    con.commit()
    con.close()
    before = schema(db)

    r = history("--history", db)
    assert r.returncode == 0, r.stderr
    head, *lines = r.stdout.splitlines()
    end = head.index("ENERGY") + len("ENERGY")
    assert [l[:end].split()[-1] for l in lines] == ["-", "-"]
    assert schema(db) == before  # reading wrote nothing

    r = track(db, PY, "-c", "pass")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert schema(db) == v7
    got = rows(db)
    assert len(got) == 3
    for o, g in zip(old, got):
        assert {k: g[k] for k in o} == o  # the old rows as they were
        assert all(g[c] is None for c in added)
    assert got[2]["process_energy_method"] in ("measured", "sampled", "estimated")
    # a figure with its method (0 when the short run had no CPU in a sampled interval, as under ASan)
    assert got[2]["process_energy_joules"] >= 0 and got[2]["grid_g_per_kwh"] is None  # no grid given
    assert got[2]["co2e_grams"] is None and got[2]["process_co2e_grams"] is None

    assert json.loads(got[2]["cores"])["durations_secs"]  # the new run's table, read back below
    assert got[2]["member"] is None  # no job of several nodes
    # a database stamped 12 (a newer tool's) is still refused: not written, one warning
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {SCHEMA + 1}")
    con.commit()
    con.close()
    r = track(db, "true")
    assert r.returncode == 0
    assert "newer resource-tracker" in r.stderr and len(rows(db)) == 3
