"""Nothing lost, nothing misdelivered, nothing delivered twice under the faults of issue 50
(docs/contracts.md §5), against the strict stand-ins on 127.0.0.1 (tests/stubs/sentinel_server.py
counts a run's rows from its S3 objects plus its inline rows; s3rver behind s3_sigv4.py):

- a spilled run is delivered only with the token and API URL it was made with: another run's
  tracker and `upload` with other credentials leave it (one line says so), `upload --list` shows
  it, and its own `upload` delivers it;
- an S3 PUT that times out and lands later: the run is not finished inline (its rows would
  arrive twice); `upload` finishes it once the PUT is answered, every row once;
- a registration whose reply never comes (the API stalls): its retries, and the later delivery,
  carry the run's key as Idempotency-Key and get the same run: one run for the job;
- no writable home (as nobody) and a spill directory planted by another user: the batches go to
  a directory of the user's own ($XDG_RUNTIME_DIR), said, and `upload` finds them there;
- a damaged run record, a deleted batch file, a spill disk with room for one more file: said, and
  `upload` exits non-zero while anything is left.

Each test prints, per fault, rows written / delivered / spilled / twice."""
import gzip
import json
import os
import shutil
import subprocess
import time
import urllib.request

import pytest

from conftest import TRACKER, tracker_env
from test_delivery import (Api, api_url, check_run, delivered_rows, down_job, leftovers, runs_by_job, spill_dir,
                           track, upload)
from test_recommend import closed_port_url
from test_stream import AK, BUCKET, PREFIX, SK, ST, TOKEN, csv_rows, local_rows, no_secrets, s3_module

TOKEN_B = "token-of-another-project-B"


def env_with(tmp_path, api_url, s3_url, token=TOKEN, **extra):
    return tracker_env(SENTINEL_API_TOKEN=token, SENTINEL_API_URL=api_url, AWS_ENDPOINT_URL_S3=s3_url,
                       AWS_REGION="eu-central-1", TRACKER_UPLOAD_INTERVAL="0.4",
                       XDG_STATE_HOME=str(tmp_path / "state"), **extra)


def spilled_rows(d):
    return [r for p in sorted(d.glob("*.csv.gz")) for r in csv_rows(gzip.decompress(p.read_bytes()).decode())]


def report(fault, written, delivered, spilled):
    twice = len(delivered) - len(set(delivered))
    print(f"\n{fault}: rows written {len(written)} / delivered {len(set(delivered))} / spilled {len(spilled)} / "
          f"twice {twice}")
    return twice


@pytest.fixture
def stand_ins(tmp_path):
    """start(token, *api_flags, s3_extra=()) -> (api, s3): one S3 and any number of APIs on it."""
    s3mod = s3_module()
    made, s3s = [], []

    def start(token=TOKEN, *flags, s3_extra=()):
        """TOKEN's API comes up at api_url(tmp_path), where the test's runs found it down."""
        if token == TOKEN and "--port" not in flags:
            flags = (*flags, "--port", api_url(tmp_path).rsplit(":", 1)[1])
        if not s3s:
            s3s.append(s3mod.start(tmp_path, secret=SK, token=ST, buckets=(BUCKET,), access_key=AK, extra=s3_extra))
            made.append(s3s[0])
        sub = tmp_path / f"api-{len(made)}"
        sub.mkdir()
        api = Api(sub, s3s[0].url, *flags, token=token)
        made.append(api)
        return api, s3s[0]

    yield start
    for m in reversed(made):
        m.stop()


def control(api, **kw):
    rq = urllib.request.Request(api.url + "/__control", json.dumps(kw).encode(), method="POST")
    urllib.request.urlopen(rq, timeout=30).read()


def list_runs(env):
    p = subprocess.run([TRACKER, "upload", "--list"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    no_secrets(p.stdout, p.stderr)
    return p.stdout


# ---- 1. another run's credentials ------------------------------------------------------------------


def test_spill_goes_only_where_its_token_sends_it(tmp_path, stand_ins):
    """Run A (token A, its API down) spills; run B (token B, another API, up) in the same state
    directory leaves A's run alone, saying so in one line; `upload` with B's token too;
    `upload --list` with A's shows A's run as its own; `upload` with A's delivers it, every row
    once, under A's API only."""
    env_a_down = env_with(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="2")
    p, local_a, window_a = track(tmp_path, env_a_down, "project-a", down_job(tmp_path, 0))
    assert p.returncode == 0 and "rows were not sent" in p.stderr
    before = leftovers(tmp_path)
    api_b, s3 = stand_ins(TOKEN_B)
    env_b = env_with(tmp_path, api_b.url, s3.url, token=TOKEN_B)
    p, local_b, _ = track(tmp_path, env_b, "project-b", ["sleep", "1.5"])
    assert p.returncode == 0, p.stderr
    assert "1 run left as it is: made with another token or API URL" in p.stderr, p.stderr
    assert list(runs_by_job(api_b)) == ["project-b"]
    check_run(api_b, "project-b", local_b, 0)
    p = upload(env_b)
    assert p.returncode == 1 and "another token or API URL" in p.stderr, p.stderr
    assert list(runs_by_job(api_b)) == ["project-b"]
    assert leftovers(tmp_path) == before
    api_a, _ = stand_ins(TOKEN)  # up at the URL A had
    env_a = env_with(tmp_path, api_a.url, s3.url)
    listing = list_runs(env_a)
    assert "made with this token and API URL" in listing and "not registered" in listing, listing
    assert "made with another token" in list_runs(env_b)
    p = upload(env_a)
    assert p.returncode == 0, p.stderr
    assert "delivered as run" in p.stderr
    check_run(api_a, "project-a", local_a, 0, window_a)
    assert list(runs_by_job(api_b)) == ["project-b"]
    assert leftovers(tmp_path) == []
    got = delivered_rows(api_a, runs_by_job(api_a)["project-a"][0][0])
    assert report("another project's spill", local_a, got, local_a) == 0


# ---- 3. slow S3, slow API --------------------------------------------------------------------------


def test_s3_put_that_lands_late_is_not_sent_twice(tmp_path, stand_ins):
    """Every PUT is held past the tracker's request timeout (1 s with TRACKER_FINISH_TIMEOUT=2)
    and then stored: the run is not finished inline at the end (the late objects would repeat
    those rows); `upload` once S3 is quick writes the same keys again and finishes the run naming
    them: every row once."""
    api, s3 = stand_ins(TOKEN, s3_extra=("--hang-secs", "1.6"))
    env = env_with(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="2")
    p, local, window = track(tmp_path, env, "slow-s3", ["sleep", "1.5"])
    assert p.returncode == 0, p.stderr
    assert "may still land" in p.stderr, p.stderr
    (run_id, run), = runs_by_job(api)["slow-s3"]
    assert run["finish"] is None
    spilled = spilled_rows(spill_dir(tmp_path))
    deadline = time.monotonic() + 30
    while (lambda c: c["puts"] > c["accepted"] + c["failed"])(s3.control()) and time.monotonic() < deadline:
        time.sleep(0.1)  # the held PUTs land, after the tracker gave up on them
    assert s3.objects(), "no PUT landed late"

    s3.control(hang_secs=0)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    check_run(api, "slow-s3", local, 0, window)
    got = delivered_rows(api, run_id)
    assert report("S3 PUT landing after its timeout", local, got, spilled) == 0
    assert leftovers(tmp_path) == []


def test_registration_whose_reply_is_lost_makes_one_run(tmp_path, stand_ins):
    """The API records every call and answers only after 1.5 s (past the tracker's 1 s request
    timeout): each registration try makes the run at the API and the tracker never hears; with
    the run's key as Idempotency-Key every try, and the later delivery, get that one run."""
    api, s3 = stand_ins(TOKEN, "--stall-secs", "1.5")
    env = env_with(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="2")
    p, local, window = track(tmp_path, env, "slow-api", ["sleep", "2.5"])
    assert p.returncode == 0, p.stderr
    regs = [r for r in api.doc()["requests"] if r["path"] == "/runs"]
    assert len(regs) >= 2, regs  # the tries the tracker made (each one a run without the key)
    assert len({r["headers"].get("Idempotency-Key") for r in regs}) == 1
    assert len(api.doc()["runs"]) == 1
    control(api, stall_secs=0)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    check_run(api, "slow-api", local, 0, window)
    (run_id, run), = runs_by_job(api)["slow-api"]
    print(f"\nregistrations answered {run['retries'] + 1}, runs made {len(api.doc()['runs'])}")
    got = delivered_rows(api, run_id)
    assert report("API answering after the tracker's timeout", local, got, local) == 0
    assert leftovers(tmp_path) == []


# ---- 4. no writable home, a planted spill directory ------------------------------------------------


def test_no_writable_home_falls_back(tmp_path, stand_ins):
    """As nobody with HOME a directory nobody cannot write (and no XDG_STATE_HOME), the API down:
    the batches go to $XDG_RUNTIME_DIR/resource-tracker (said once), every row is kept, and
    `upload` as nobody delivers them from there."""
    from test_delegation import as_nobody, collect_reports, nobody_dir, nobody_tracker
    if os.geteuid() != 0:
        pytest.skip("not root: the test runs the tracker as nobody")
    d = nobody_dir()
    try:
        tracker, env = nobody_tracker(d)
        home = os.path.join(d, "home")
        os.mkdir(home, 0o755)  # root's: nobody cannot write it
        rt = os.path.join(d, "run")
        os.mkdir(rt, 0o700)
        os.chown(rt, 65534, 65534)
        env.update(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=api_url(tmp_path), AWS_ENDPOINT_URL_S3=closed_port_url(),
                   TRACKER_UPLOAD_INTERVAL="0.3", TRACKER_FINISH_TIMEOUT="2", HOME=home, XDG_RUNTIME_DIR=rt)
        env.pop("XDG_STATE_HOME", None)
        out = os.path.join(d, "rows.csv")
        p = subprocess.run([tracker, "-i", "0.1", "-f", "csv", "-o", out, "--job-name", "homeless", "--",
                            "sleep", "1.5"], env=env, capture_output=True, text=True, timeout=120,
                           preexec_fn=as_nobody())
        assert p.returncode == 0, p.stderr
        fallback = os.path.join(rt, "resource-tracker")
        assert f"kept in {fallback} instead" in p.stderr, p.stderr
        assert "are lost" not in p.stderr
        from pathlib import Path
        local = local_rows(Path(out))
        spilled = spilled_rows(Path(fallback))
        assert sorted(spilled) == sorted(local)
        assert not os.path.exists(os.path.join(home, ".local"))
        api, s3 = stand_ins(TOKEN)
        env.update(SENTINEL_API_URL=api.url, AWS_ENDPOINT_URL_S3=s3.url)
        p = subprocess.run([tracker, "upload"], env=env, capture_output=True, text=True, timeout=120,
                           preexec_fn=as_nobody())
        assert p.returncode == 0, p.stderr
        check_run(api, "homeless", local, 0)
        got = delivered_rows(api, runs_by_job(api)["homeless"][0][0])
        assert report("no writable home (nobody)", local, got, spilled) == 0
        assert not [n for n in os.listdir(fallback) if n.endswith((".run", ".csv.gz"))]
    finally:
        collect_reports(d)
        shutil.rmtree(d, ignore_errors=True)


def test_planted_spill_directory_falls_back(tmp_path):
    """XDG_STATE_HOME/resource-tracker is a directory of another user's (planted): refused as
    before, and the batches go to a directory of our own instead, every row kept."""
    if os.geteuid() != 0:
        pytest.skip("not root: the planted directory is another user's")
    state = tmp_path / "state"
    (state / "resource-tracker").mkdir(parents=True)
    os.chown(state / "resource-tracker", 65534, 65534)
    rt = tmp_path / "run"
    rt.mkdir(mode=0o700)
    env = env_with(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="2",
                   XDG_RUNTIME_DIR=str(rt))
    p, local, _ = track(tmp_path, env, "planted", ["sleep", "1.2"])
    assert p.returncode == 0
    assert "not a directory of ours alone" in p.stderr and f"kept in {rt}/resource-tracker instead" in p.stderr
    spilled = spilled_rows(rt / "resource-tracker")
    assert sorted(spilled) == sorted(local)
    assert list((state / "resource-tracker").iterdir()) == []
    assert "made with this token" in list_runs(env)
    report("spill directory planted by another user", local, [], spilled)


# ---- 5. spill bookkeeping --------------------------------------------------------------------------


def api_down(tmp_path, name, code=0):
    env = env_with(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="2")
    p, local, window = track(tmp_path, env, name, down_job(tmp_path, code))
    assert p.returncode == code and "rows were not sent" in p.stderr
    return local, window


def test_damaged_record_is_said_and_kept(tmp_path, stand_ins):
    """A run record overwritten with garbage: `upload` says which run cannot be delivered and
    exits 1 (it used to exit 0 saying nothing), keeps its batches, and --list shows it."""
    api_down(tmp_path, "damaged-record")
    run, = [p for p in spill_dir(tmp_path).iterdir() if p.name.endswith(".run")]
    run.write_text("not a record\n")
    before = leftovers(tmp_path)
    api, s3 = stand_ins(TOKEN)
    env = env_with(tmp_path, api.url, s3.url)
    p = upload(env)
    assert p.returncode == 1, p.stderr
    assert run.name in p.stderr and "cannot be delivered" in p.stderr, p.stderr
    assert leftovers(tmp_path) == before
    assert "damaged or missing" in list_runs(env)
    run.unlink()  # the record gone altogether: its batches are said too
    p = upload(env)
    assert p.returncode == 1 and "no record" in p.stderr, p.stderr
    assert runs_by_job(api) == {}


def test_deleted_batch_file_is_said(tmp_path, stand_ins):
    """A batch file deleted by hand: `upload` warns once naming it, delivers the rest."""
    local, window = api_down(tmp_path, "deleted-batch")
    files = sorted(p for p in spill_dir(tmp_path).iterdir() if p.name.endswith(".csv.gz"))
    assert len(files) >= 3
    lost = csv_rows(gzip.decompress(files[1].read_bytes()).decode())
    files[1].unlink()
    api, s3 = stand_ins(TOKEN)
    env = env_with(tmp_path, api.url, s3.url)
    assert ", 1 missing" in list_runs(env)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("missing") == 1 and files[1].name in p.stderr, p.stderr
    check_run(api, "deleted-batch", local, 0, window, missing=lost)


def test_full_spill_disk_writes_the_record_first(tmp_path, stand_ins):
    """The spill directory on a tmpfs with room for one more page: the run's record takes it
    (written before any batch), so every batch the tracker says is kept has a record beside it
    and is delivered; the rest are said lost, never "kept" where no delivery can find them."""
    if os.geteuid() != 0:
        pytest.skip("not root: the test mounts a tmpfs")
    state = tmp_path / "state"
    state.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(state)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        d = state / "resource-tracker"
        d.mkdir(mode=0o700)
        filler = state / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)  # fill it, then give back one page
        try:
            while os.write(fd, b"\0" * 4096) == 4096:
                pass
        except OSError:
            pass
        os.close(fd)
        os.truncate(filler, os.path.getsize(filler) // 4096 * 4096 - 4096)
        env = env_with(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="2")
        p, local, _ = track(tmp_path, env, "full-disk", ["sleep", "1.2"])
        assert p.returncode == 0
        names = sorted(os.listdir(d))
        runs = [n for n in names if n.endswith(".run")]
        batches = [n for n in names if n.endswith(".csv.gz")]
        keys = {n[:-len(".run")] for n in runs}
        assert all(b.rsplit("-", 1)[0] in keys for b in batches), names  # no batch without its record
        assert "kept in" not in p.stderr or runs, p.stderr
        spilled = spilled_rows(d)
        filler.unlink()
        api, s3 = stand_ins(TOKEN)
        env = env_with(tmp_path, api.url, s3.url)
        p2 = upload(env)
        assert p2.returncode == 0, p2.stderr
        got = []
        for run_id, run in runs_by_job(api).get("full-disk", []):
            got += delivered_rows(api, run_id)
            assert run["finish"]["exit_code"] == 0  # the record's end was written in place
        assert sorted(got) == sorted(spilled)
        if len(spilled) < len(local):
            assert "are lost" in p.stderr, p.stderr
        assert report("spill disk with one page free", local, got, spilled) == 0
    finally:
        subprocess.run(["umount", "-l", str(state)], capture_output=True, timeout=30)
