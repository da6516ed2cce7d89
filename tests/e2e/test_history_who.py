"""Who ran what (issue 69): each history row carries the user (the real uid's login name and the
uid), the node and the job's id (schema version 12); `history` keeps the runs of --user, --host
(host name or node) and --since (an ISO 8601 time or an age) with --job and --last; `recommend
--job` says how many runs on how many hosts by how many users it is based on, and leaves out the
runs whose command line differs from the newest run's unless --any-command; an SQLite history on
a network file system (the mount table's word: TRACKER_TEST_MOUNTINFO names one for the tests) is
one warning naming the risk and the PostgreSQL option, and the run is recorded as ever."""
import json
import os
import pwd
import re
import socket
import sqlite3
import time

import pytest

from conftest import run, tracker_env

PY = "/usr/bin/python3"
ME = pwd.getpwuid(os.getuid()).pw_name


def track(db, *cmd, job="train", env=None):
    r = run(["-q", "--history", str(db), "--job-name", job, "--", *cmd], env=env or tracker_env())
    assert r.returncode == 0, r.stderr
    return r


def rows(db):
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM runs ORDER BY id")]
    finally:
        con.close()


def update(db, rid, **values):
    con = sqlite3.connect(db)
    con.execute(f"UPDATE runs SET {', '.join(k + ' = ?' for k in values)} WHERE id = ?", [*values.values(), rid])
    con.commit()
    con.close()


def listed(db, *args):
    """The ids `history --json` lists for args, newest first."""
    r = run(["history", "--json", "--history", str(db), *args])
    assert r.returncode == 0, r.stderr
    return [json.loads(line)["id"] for line in r.stdout.splitlines()]


def test_row_says_who(tmp_path):
    """The user and uid of the process, the short host name as the node and no job id outside a
    scheduler; SLURM's job id and node name inside one (SLURM_JOB_ID, SLURMD_NODENAME)."""
    db = tmp_path / "h.db"
    track(db, "/bin/true")
    slurm = tracker_env(PATH="/nonexistent", SLURM_JOB_ID="4711", SLURMD_NODENAME="rtnode7", SLURM_PROCID="0",
                        SLURM_NTASKS="1", SLURM_JOB_NUM_NODES="1")
    track(db, "/bin/true", env=slurm)
    plain, job = rows(db)
    for r in (plain, job):
        assert (r["user_name"], r["user_uid"]) == (ME, os.getuid())
        assert re.fullmatch(r"[0-9a-f]{32}", r["run_uuid"])  # the run's own id, made at its start
    assert plain["run_uuid"] != job["run_uuid"]
    assert plain["node"] == socket.gethostname().split(".")[0] and plain["job_id"] is None
    assert (job["node"], job["job_id"]) == ("rtnode7", "4711")
    assert json.loads(job["member"])["job_id"] == job["job_id"]  # the same name the summary's member has
    got = [json.loads(line) for line in run(["history", "--json", "--history", str(db)]).stdout.splitlines()]
    assert [(g["user_name"], g["node"], g["job_id"]) for g in got] == [(ME, "rtnode7", "4711"),
                                                                      (ME, plain["node"], None)]


@pytest.fixture
def four(tmp_path):
    """Four runs of two jobs, made to be other users' on other hosts at other times."""
    db = tmp_path / "h.db"
    for job in ("train", "train", "eval", "train"):
        track(db, "/bin/true", job=job)
    now = time.time()
    update(db, 1, user_name="alice", user_uid=1001, host_hostname="gpu1.example.org", node="gpu1",
           start_secs=now - 10 * 86400)
    update(db, 2, user_name="bob", user_uid=1002, host_hostname="login.example.org", node="n17",
           start_secs=now - 3 * 86400)
    update(db, 3, user_name="alice", user_uid=1001, start_secs=now - 3600)
    return db


def test_history_filters(four):
    db = four
    assert listed(db) == [4, 3, 2, 1]
    assert listed(db, "--user", "alice") == [3, 1]
    assert listed(db, "--user", "alice", "--job", "train") == [1]
    assert listed(db, "--host", "n17") == [2]  # the node's name
    assert listed(db, "--host", "gpu1.example.org") == [1]  # the host's
    assert listed(db, "--since", "7d") == [4, 3, 2]
    assert listed(db, "--since", "2h") == [4, 3]
    assert listed(db, "--since", "7d", "--job", "train", "--last", "1") == [4]
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 5 * 86400))
    assert listed(db, "--since", day) == [4, 3, 2]
    assert listed(db, "--since", day + "T00:00:00Z", "--user", "bob") == [2]
    assert listed(db, "--since", day + "T00:00+14:00") == [4, 3, 2]
    # the table: the same runs, and a line when none matches
    r = run(["history", "--history", str(db), "--user", "alice"])
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3, r.stdout
    r = run(["history", "--history", str(db), "--user", "carol", "--job", "train"])
    assert r.returncode == 0 and r.stdout == ""
    assert "no runs of job 'train' match --user carol" in r.stderr, r.stderr


@pytest.mark.parametrize("bad", ["yesterday", "7", "-7d", "2026-02-30", "2026-11-29T25:00", "12 h", ""])
def test_bad_since_is_a_usage_error(four, bad):
    r = run(["history", "--history", str(four), "--since", bad])
    assert r.returncode == 2 and r.stdout == ""
    assert "--since" in r.stderr and f"'{bad}'" in r.stderr, r.stderr


def test_older_history_filters(tmp_path):
    """A history of schema 11 (no who columns until its next write): --user and --host by node
    match none of its runs, --host by host name and --since still do; no error."""
    db = tmp_path / "h.db"
    track(db, "/bin/true")
    con = sqlite3.connect(db)
    con.execute("DROP INDEX runs_uuid")
    for c in ("user_name", "user_uid", "node", "job_id", "run_uuid"):
        con.execute(f"ALTER TABLE runs DROP COLUMN {c}")
    con.execute("PRAGMA user_version = 11")
    con.commit()
    con.close()
    assert listed(db, "--user", ME) == []
    assert listed(db, "--host", socket.gethostname()) == [1]
    assert listed(db, "--since", "1d") == [1]
    r = run(["recommend", "--job", "train", "--history", str(db), "--no-price-lookup", "--json"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["based_on"] == {"runs": 1, "hosts": 1, "users": 0, "runs_without_user": 1,
                                                "left_out": 0, "left_out_why": None}


def test_recommend_says_its_basis(tmp_path):
    """Three runs of one command line (one made another user's on another host), then a run of
    another: the answer is the newest command line's, the other runs said left out; with
    --any-command all four, on two hosts by two users."""
    db = tmp_path / "h.db"
    a = [PY, "-c", "import time; time.sleep(0.2)"]
    for _ in range(3):
        track(db, *a)
    update(db, 2, user_name="alice", node="gpu9")
    b = [PY, "-c", "import time; time.sleep(0.3)"]
    track(db, *b)
    base = ["recommend", "--job", "train", "--history", str(db), "--no-price-lookup"]
    r = run(base)
    assert r.returncode == 0, r.stderr
    assert "based on 1 run on 1 host by 1 user\n" in r.stdout, r.stdout
    assert ("recommend: 3 of the last 4 runs of job 'train' left out: their command line differs from the newest "
            "run's (--any-command uses them)") in r.stderr, r.stderr
    r = run(base + ["--json"])
    doc = json.loads(r.stdout)
    assert doc["runs"] == 1 and doc["based_on"] == {
        "runs": 1, "hosts": 1, "users": 1, "runs_without_user": 0, "left_out": 3,
        "left_out_why": "their command line differs from the newest run's"}
    r = run(base + ["--any-command"])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "runs: 4 " in r.stdout and "based on 4 runs on 2 hosts by 2 users\n" in r.stdout, r.stdout
    doc = json.loads(run(base + ["--any-command", "--json"]).stdout)
    assert doc["based_on"] == {"runs": 4, "hosts": 2, "users": 2, "runs_without_user": 0, "left_out": 0,
                               "left_out_why": None}
    # --last counts the runs looked at: the newest two, one of them of the other command line
    doc = json.loads(run(base + ["--last", "2", "--json"]).stdout)
    assert doc["based_on"]["runs"] == 1 and doc["based_on"]["left_out"] == 1
    # FILEs: no history, no basis; --any-command only with --job
    r = run(["recommend", "--any-command", str(tmp_path / "x.jsonl")])
    assert r.returncode == 2 and "--any-command goes with --job NAME" in r.stderr, r.stderr


def mountinfo(tmp_path, mounts):
    """A mount table in /proc/self/mountinfo's format: [(mount point, fs type)], "/" first."""
    lines = []
    for i, (mp, fstype) in enumerate(mounts):
        esc = mp.replace("\\", "\\134").replace(" ", "\\040")
        lines.append(f"{30 + i} 1 0:{40 + i} / {esc} rw,relatime shared:{i + 1} - {fstype} src{i} rw")
    p = tmp_path / "mountinfo"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


WARNING = ("lies on {}, a network file system: SQLite's locking over network file systems is unreliable, and many "
           "nodes writing at once can corrupt the file; keep it on a local disk, or keep a team's or a cluster's "
           "history in PostgreSQL: --history postgresql://USER@HOST/DB")


@pytest.mark.parametrize("fstype", ["nfs4", "nfs", "cifs", "lustre", "gpfs", "9p", "ceph", "fuse.sshfs"])
def test_network_fs_warning(tmp_path, fstype):
    d = tmp_path / "shared dir"
    d.mkdir()
    db = d / "h.db"
    real = os.path.realpath(d)
    mi = mountinfo(tmp_path, [("/", "ext4"), (real, fstype), ("/elsewhere", "nfs4")])
    env = tracker_env(TRACKER_TEST_MOUNTINFO=mi)
    r = run(["-q", "--history", str(db), "--job-name", "train", "--", "sh", "-c", "exit 3"], env=env)
    assert r.returncode == 3  # the job's status, the row written
    warned = [l for l in r.stderr.splitlines() if "network file system" in l]  # one, whole
    assert warned == [f"resource-tracker: warning: history {db}: " + WARNING.format(f"{fstype} at {real}")], r.stderr
    assert len(rows(db)) == 1
    # reading it says nothing of it
    r = run(["history", "--history", str(db)], env=env)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_local_fs_no_warning(tmp_path):
    """The longest mount point decides: a local file system mounted inside a network one, and a
    network one whose mount point only begins like the file's directory, are no warning."""
    d = tmp_path / "local"
    d.mkdir()
    real = os.path.realpath(d)
    mi = mountinfo(tmp_path, [("/", "nfs4"), (real, "ext4"), (real + "2", "nfs4")])
    r = run(["-q", "--history", str(d / "h.db"), "--", "/bin/true"], env=tracker_env(TRACKER_TEST_MOUNTINFO=mi))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    # a history not there yet, named through a link: the directory it resolves to
    os.symlink(d, tmp_path / "link")
    mi = mountinfo(tmp_path, [("/", "ext4"), (real, "nfs4")])
    r = run(["-q", "--history", str(tmp_path / "link" / "new.db"), "--", "/bin/true"],
            env=tracker_env(TRACKER_TEST_MOUNTINFO=mi))
    assert r.returncode == 0 and "lies on nfs4 at " + real + ", a network" in r.stderr, r.stderr


def test_export_import_once(tmp_path):
    """`history --export` writes every run (every column by name, its run_uuid; a run recorded
    before schema 12 gets one made of its start, pid and host, the same each time); `--import`
    into another history twice adds each run once, and `recommend --job` answers the same from
    both."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for cmd in ([PY, "-c", "pass"], [PY, "-c", "pass"], ["/bin/true"]):
        track(a, *cmd)
    track(a, PY, "-c", "pass", job="eval")
    update(a, 1, run_uuid=None)  # a row of an older tool
    src = rows(a)
    assert all(re.fullmatch(r"[0-9a-f]{32}", r["run_uuid"]) for r in src[1:])
    assert len({r["run_uuid"] for r in src[1:]}) == 3
    out = tmp_path / "runs.jsonl"
    r = run(["history", "--history", str(a), "--export", str(out)])
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert f"history {a}: 4 runs exported to {out}" in r.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [set(line) for line in lines] == [set(src[0]) - {"id"}] * 4  # every column, by name
    assert [line["run_uuid"] for line in lines[1:]] == [r["run_uuid"] for r in src[1:]]
    assert re.fullmatch(r"[0-9a-f]{32}", lines[0]["run_uuid"])
    again = run(["history", "--history", str(a), "--export", "-"])  # to stdout, the same
    assert [json.loads(line) for line in again.stdout.splitlines()] == lines
    for added, skipped in ((4, 0), (0, 4)):
        r = run(["history", "--history", str(b), "--import", str(out)])
        assert r.returncode == 0, r.stderr
        assert r.stdout == f"history {b}: {added} runs added, {skipped} skipped (their run_uuid was there already)\n"
    got = rows(b)
    assert len(got) == 4 and [g["run_uuid"] for g in got] == [line["run_uuid"] for line in lines]
    for s, g in zip(src, got):
        assert {k: v for k, v in g.items() if k not in ("id", "run_uuid")} == {
            k: v for k, v in s.items() if k not in ("id", "run_uuid")}
    for extra in ([], ["--any-command"], ["--last", "2"]):
        ask = [run(["recommend", "--job", "train", "--history", str(h), "--no-price-lookup", "--json"] + extra)
               for h in (a, b)]
        assert ask[0].returncode == 0 and ask[0].stdout == ask[1].stdout and ask[0].stderr == ask[1].stderr
    # into a history with runs of its own: added after them, the shared ones skipped
    c = tmp_path / "c.db"
    track(c, "/bin/true", job="own")
    r = run(["history", "--history", str(c), "--import", str(out)])
    assert "4 runs added, 0 skipped" in r.stdout
    assert len(rows(c)) == 5


def test_import_refuses_a_bad_file(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    track(a, "/bin/true")
    out = tmp_path / "runs.jsonl"
    assert run(["history", "--history", str(a), "--export", str(out)]).returncode == 0
    good = out.read_text()
    track(b, "/bin/true", job="own")
    for bad, why in (("not json\n", "line 2: not a JSON object"), ('[1, 2]\n', "line 2: not a JSON object"),
                     ('{"run_uuid": "XYZ"}\n', "line 2: run_uuid is not 32 lowercase hex digits"),
                     ('{"start_secs": "soon"}\n', "line 2: start_secs: not a number"),
                     ('{"pid": 1.5}\n', "line 2: pid: not a whole number")):
        f = tmp_path / "bad.jsonl"
        f.write_text(good + bad)
        r = run(["history", "--history", str(b), "--import", str(f)])
        assert r.returncode == 2 and why in r.stderr and "(nothing imported)" in r.stderr, (bad, r.stderr)
        assert len(rows(b)) == 1  # all or nothing
    r = run(["history", "--history", str(b), "--import", str(tmp_path / "missing.jsonl")])
    assert r.returncode == 2 and "--import: cannot read" in r.stderr
    for args in (["--export", "x", "--job", "train"], ["--import", "x", "--since", "1d"], ["--export", "x", "--import", "y"]):
        r = run(["history", "--history", str(b)] + args)
        assert r.returncode == 2 and "takes every run" in r.stderr, r.stderr
    # a newer tool's columns are left out, said once; history --json's lines are taken too
    f = tmp_path / "newer.jsonl"
    line = json.loads(good)
    line.update(run_uuid="0" * 32, from_the_future=1)
    f.write_text(json.dumps(line) + "\n")
    r = run(["history", "--history", str(b), "--import", str(f)])
    assert r.returncode == 0 and "1 run added" in r.stdout and "'from_the_future'" in r.stderr, r.stderr
    js = run(["history", "--history", str(a), "--json"]).stdout
    f.write_text(js)
    r = run(["history", "--history", str(b), "--import", str(f)])
    assert r.returncode == 0 and "1 run added, 0 skipped" in r.stdout, (r.stdout, r.stderr)
    assert rows(b)[-1]["command"] == rows(a)[0]["command"]
    assert json.loads(rows(b)[-1]["summary_json"]) == json.loads(rows(a)[0]["summary_json"])


def test_job_of_three_nodes_run_twice(tmp_path):
    """Two steps of one SLURM job on three nodes, each node's tracker writing one history:
    `recommend --job` takes all six runs (past --last's default of 5) and says so: based on 6
    runs on 3 hosts by 1 user, the job view's six runs."""
    db = tmp_path / "h.db"
    track(db, "/bin/true", env=tracker_env(PATH="/nonexistent"))  # an older run, of no job
    for step in ("0", "1"):
        for i in range(3):
            env = tracker_env(PATH="/nonexistent", SLURM_JOB_ID="812", SLURM_STEP_ID=step,
                              SLURMD_NODENAME=f"node{i}", SLURM_PROCID=str(i), SLURM_LOCALID="0", SLURM_NTASKS="3",
                              SLURM_JOB_NUM_NODES="3", SLURM_NODEID=str(i))
            track(db, PY, "-c", "pass", env=env)
    r = run(["recommend", "--job", "train", "--history", str(db), "--no-price-lookup", "--json"])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    doc = json.loads(r.stdout)
    assert (doc["job_id"], doc["view"]["run_count"]) == ("812", 6)
    assert doc["based_on"] == {"runs": 6, "hosts": 3, "users": 1, "runs_without_user": 0, "left_out": 0,
                               "left_out_why": None}
    text = run(["recommend", "--job", "train", "--history", str(db), "--no-price-lookup"]).stdout
    assert "\nbased on 6 runs on 3 hosts by 1 user\n" in text, text
    # --last as given: the newest two, and the older runs of other jobs said unused with --last 8
    doc = json.loads(run(["recommend", "--job", "train", "--history", str(db), "--no-price-lookup", "--json",
                          "--last", "2"]).stdout)
    assert doc["based_on"]["runs"] == 2
    r = run(["recommend", "--job", "train", "--history", str(db), "--no-price-lookup", "--json", "--last", "8"])
    assert json.loads(r.stdout)["based_on"] == {"runs": 6, "hosts": 3, "users": 1, "runs_without_user": 0,
                                                "left_out": 1, "left_out_why": "runs of other jobs than the newest run's"}
    assert "its 1 older run of other jobs is not used" in r.stderr
