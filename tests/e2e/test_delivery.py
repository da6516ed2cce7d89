"""Every batch is delivered, later if not now (docs/contracts.md §5), against the strict
stand-ins on 127.0.0.1 (tests/stubs/sentinel_server.py, which checks each finish against the
run's objects in S3 and counts a run's rows; s3rver behind tests/stubs/s3_sigv4.py): the API
down for a whole run, then up for the next run or for `resource-tracker upload` (the first run's
rows all land, exactly once, with its own metadata, exit status and end time); S3 failing for
the last batch (the finish names every uploaded object, the rest goes later under the same
run); a spill file truncated by hand (skipped, counted, the rest goes); SIGKILL of a delivery
mid-upload; two deliverers at once. Per run: rows in its S3 objects + its inline rows == the
rows it sampled, no duplicates."""
import calendar
import gzip
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import BUILD_DIR, TRACKER, tracker_env
from test_recommend import closed_port_url
from test_stream import (AK, BUCKET, PREFIX, SENTINEL, SK, ST, TOKEN, csv_rows, local_rows, no_secrets,
                         s3_module)


class Api:
    """The Sentinel stand-in (checking finishes against s3_url), stopped by its own pid."""

    def __init__(self, tmp_path, s3_url, *flags, token=TOKEN):
        self.log = tmp_path / "sentinel.json"
        self.p = subprocess.Popen(["/usr/bin/python3", SENTINEL, "--token", token, "--log", str(self.log),
                                   "--bucket", BUCKET, "--prefix", PREFIX, "--access-key", AK, "--secret-key", SK,
                                   "--session-token", ST, "--s3-url", s3_url, *flags], stdout=subprocess.PIPE,
                                  text=True)
        self.url = f"http://127.0.0.1:{int(self.p.stdout.readline())}"

    def doc(self):
        return json.loads(self.log.read_text()) if self.log.exists() else {"requests": [], "runs": {}}

    def rows(self, run_id):
        with urllib.request.urlopen(f"{self.url}/__runs/{run_id}/rows", timeout=30) as r:
            return json.loads(r.read())

    def stop(self):
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGTERM)
            self.p.wait(10)


@pytest.fixture
def peers(tmp_path):
    s3mod = s3_module()
    made = []

    def start(s3_extra=()):
        s3 = s3mod.start(tmp_path, secret=SK, token=ST, buckets=(BUCKET,), access_key=AK, extra=s3_extra)
        made.append(s3)
        # up at the URL the test's runs had while it was down: a spilled run goes only where its
        # own token and API URL send it
        api = Api(tmp_path, s3.url, "--port", api_url(tmp_path).rsplit(":", 1)[1])
        made.append(api)
        return api, s3

    yield start
    for m in reversed(made):
        m.stop()


def env_for(tmp_path, api_url, s3_url, **extra):
    return tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=api_url, AWS_ENDPOINT_URL_S3=s3_url,
                       AWS_REGION="eu-central-1", TRACKER_UPLOAD_INTERVAL="0.4",
                       XDG_STATE_HOME=str(tmp_path / "state"), **extra)


def api_url(tmp_path):
    """The test's API URL: a port on 127.0.0.1 where nothing listens until peers() starts the
    stand-in there (as a real API is down, then up, at one URL)."""
    f = tmp_path / "api-url"
    if not f.exists():
        f.write_text(closed_port_url())
    return f.read_text()


def spill_dir(tmp_path):
    return tmp_path / "state" / "resource-tracker"


def track(tmp_path, env, name, cmd, timeout=120):
    out = tmp_path / f"{name}.csv"
    t0 = time.time()
    p = subprocess.run([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out), "--job-name", name, "--", *cmd],
                       env=env, capture_output=True, text=True, timeout=timeout)
    no_secrets(p.stdout, p.stderr, out.read_text())
    return p, local_rows(out), (t0, time.time())


def upload(env, timeout=120):
    p = subprocess.run([TRACKER, "upload"], env=env, capture_output=True, text=True, timeout=timeout)
    no_secrets(p.stdout, p.stderr)
    return p


def runs_by_job(api):
    out = {}
    for run_id, run in api.doc()["runs"].items():
        out.setdefault(run["register"].get("job_name"), []).append((run_id, run))
    return out


def delivered_rows(api, run_id):
    """The run's rows: those of its objects in S3 plus its inline rows (the stand-in's count)."""
    got = api.rows(run_id)
    return [r for k in sorted(got["s3"]) for r in got["s3"][k]] + got["inline"]


def check_run(api, name, local, exit_code, window=None, missing=()):
    """The run of job name was registered once, finished with exit_code (and a finished_at within
    window), and its rows are the local rows but missing, each once."""
    runs = runs_by_job(api).get(name, [])
    assert len(runs) == 1, f"{name}: registered {len(runs)} times"
    run_id, run = runs[0]
    fin = run["finish"]
    assert fin is not None, f"{name}: not finished"
    assert fin["exit_code"] == exit_code and fin["run_status"] == ("finished" if exit_code == 0 else "failed")
    if window:
        at = calendar.timegm(time.strptime(fin["finished_at"], "%Y-%m-%dT%H:%M:%SZ"))
        assert int(window[0]) <= at <= window[1] + 1, (fin["finished_at"], window)
    got = delivered_rows(api, run_id)
    assert len(got) == len(set(got)), f"{name}: a row arrived twice"
    assert sorted(got) == sorted(set(local) - set(missing)), f"{name}: rows differ"
    return run_id, run


def leftovers(tmp_path):
    d = spill_dir(tmp_path)
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def down_job(tmp_path, code):
    """The job of api_down_run: 1.5 s and then until three batches are spilled (within 60 s):
    on a slow build (valgrind) the stream thread's closes come late, and 1.5 s alone left
    exactly three; exits with code."""
    spill = spill_dir(tmp_path)
    return ["sh", "-c", f"sleep 1.5; i=0; until [ $(ls '{spill}' 2>/dev/null | grep -c '[.]csv[.]gz$') -ge 3 ] || "
                        f"[ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done; exit {code}"]


def api_down_run(tmp_path, name="first", code=5, **extra):
    """A whole run with the API down: every row spilled, with the run's record beside them."""
    env = env_for(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="2", **extra)
    p, local, window = track(tmp_path, env, name, down_job(tmp_path, code))
    assert p.returncode == code
    assert "rows were not sent" in p.stderr
    names = leftovers(tmp_path)
    runs = [n for n in names if n.endswith(".run")]
    assert len(runs) == 1, names
    st = os.stat(spill_dir(tmp_path) / runs[0])
    assert st.st_mode & 0o777 == 0o600
    assert os.stat(spill_dir(tmp_path)).st_mode & 0o777 == 0o700
    return local, window


# ---- the stand-in holds the protocol ----------------------------------------------------------------


def test_standin_refuses_inline_beside_objects(tmp_path, peers):
    """With objects of the run in S3, an inline finish ("only the rest") is refused, and an s3
    finish must name every object stored."""
    api, s3 = peers()
    hdr = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

    def post(path, doc):
        rq = urllib.request.Request(api.url + path, json.dumps(doc).encode(), hdr, method="POST")
        try:
            with urllib.request.urlopen(rq, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    st, reg = post("/runs", {"job_name": "x"})
    assert st == 200
    run_id = reg["run_id"]
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK, AWS_SESSION_TOKEN=ST,
               AWS_REGION="eu-central-1")
    body = tmp_path / "b.gz"
    import sentinel_server  # on sys.path through s3_module()
    header = sentinel_server.CSV_HEADER
    row = lambda ts: str(ts) + "," * header.count(",")  # a row of the header's width
    body.write_bytes(gzip.compress((header + "\n" + row(1) + "\n").encode()))
    s3put = os.path.join(BUILD_DIR, "s3-put")
    if not os.path.exists(s3put):
        pytest.skip("s3-put not built")
    for seq in (0, 1):
        r = subprocess.run([s3put, s3.url, BUCKET, f"{PREFIX}/{run_id}/{seq:06d}.csv.gz", str(body), "1"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    fin = {"exit_code": 0, "run_status": "finished", "finished_at": "2026-01-01T00:00:00Z"}
    st, rep = post(f"/runs/{run_id}/finish", dict(fin, data_source="inline", data_csv=header + "\n" + row(3) + "\n"))
    assert st == 400 and "inline" in rep["detail"]
    uri = f"s3://{BUCKET}/{PREFIX}/{run_id}/000000.csv.gz"
    st, rep = post(f"/runs/{run_id}/finish", dict(fin, data_source="s3", data_uris=[uri]))
    assert st == 400 and "not the run's objects" in rep["detail"]
    st, rep = post(f"/runs/{run_id}/finish", dict(fin, data_source="s3", data_uris=[uri, uri.replace("0.csv", "1.csv")]))
    assert st == 200, rep
    assert len(delivered_rows(api, run_id)) == 2


# ---- later delivery ---------------------------------------------------------------------------------


def test_api_down_then_next_run_delivers(tmp_path, peers):
    """The API is down for a whole run, up for the next: the next run registers the first with
    its own metadata, uploads its rows and finishes it with its own exit status and end time;
    both runs' rows land exactly once, and nothing is left in the spill directory."""
    local1, window1 = api_down_run(tmp_path)
    api, s3 = peers()
    env = env_for(tmp_path, api.url, s3.url)
    p, local2, _ = track(tmp_path, env, "second", ["sh", "-c", "sleep 2"])
    assert p.returncode == 0, p.stderr
    _, run1 = check_run(api, "first", local1, 5, window1)
    assert json.loads(run1["register"]["command"]) == down_job(tmp_path, 5)
    check_run(api, "second", local2, 0)
    assert leftovers(tmp_path) == []
    assert not s3.rejections()


def test_upload_subcommand_delivers(tmp_path, peers):
    """`resource-tracker upload` does the same for cron or CI, and a second upload has nothing
    left to do; temporary files of the run's that a kill left half written (a spill file's, the
    record's) go with it, and another run's are left alone."""
    local1, window1 = api_down_run(tmp_path, "cronjob", 3)
    key = [n for n in leftovers(tmp_path) if n.endswith(".run")][0][:-len(".run")]
    stray = [f"{key}-000099.csv.gz.Ab12Cd", f"{key}.run.Xy34Zw"]
    other = "local-someone-else-000001.csv.gz.Ab12Cd"
    for n in stray + [other]:
        (spill_dir(tmp_path) / n).write_bytes(b"\x1f\x8b half")
    api, s3 = peers()
    env = env_for(tmp_path, api.url, s3.url)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    check_run(api, "cronjob", local1, 3, window1)
    assert leftovers(tmp_path) == [other]
    (spill_dir(tmp_path) / other).unlink()
    p = upload(env)
    assert p.returncode == 0 and p.stderr == ""
    assert len(api.doc()["runs"]) == 1


def test_upload_keeps_each_runs_columns(tmp_path, peers):
    """Two runs spilled with the API down, one with the energy columns asked for (as every run of
    0.15 to 0.17 spilled them) and one without: `upload` delivers each with its own header, the
    rows as the run wrote them locally (the stand-in holds every row to its header's cell count)."""
    local1, _ = api_down_run(tmp_path, "energy", 3, TRACKER_CSV_ENERGY="1")
    local2, _ = api_down_run_beside(tmp_path, "plain", 4)
    assert local1 and all(r.count(",") == 35 for r in local1)
    assert local2 and all(r.count(",") == 31 for r in local2)
    api, s3 = peers()
    p = upload(env_for(tmp_path, api.url, s3.url))
    assert p.returncode == 0, p.stderr
    check_run(api, "energy", local1, 3)
    check_run(api, "plain", local2, 4)
    assert leftovers(tmp_path) == []


def api_down_run_beside(tmp_path, name, code):
    """api_down_run for a second run beside the first's spill files: its own 3 batches spilled."""
    before = {n for n in leftovers(tmp_path) if n.endswith(".csv.gz")}
    env = env_for(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="2")
    spill = spill_dir(tmp_path)
    job = ["sh", "-c", f"sleep 1.5; i=0; until [ $(ls '{spill}' | grep -c '[.]csv[.]gz$') -ge {len(before) + 3} ] || "
                       f"[ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done; exit {code}"]
    p, local, window = track(tmp_path, env, name, job)
    assert p.returncode == code and "rows were not sent" in p.stderr
    return local, window


def test_upload_with_api_still_down(tmp_path):
    """The API still down: upload says the run is left for a later try (exit 1) and keeps it."""
    api_down_run(tmp_path)
    before = leftovers(tmp_path)
    p = upload(env_for(tmp_path, api_url(tmp_path), closed_port_url(), TRACKER_FINISH_TIMEOUT="1"))
    assert p.returncode == 1 and "left for a later try" in p.stderr
    assert leftovers(tmp_path) == before


def test_s3_fails_for_the_last_batch(tmp_path, peers):
    """S3 refuses every PUT from the middle of the run on: the finish names every object that
    did reach S3 (data_source s3, never inline with only the rest), the other batches stay
    spilled, and `upload` later puts them under the same run: its rows, once each."""
    api, s3 = peers()
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="2")
    out = tmp_path / "last.csv"
    t = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out), "--job-name", "last", "--",
                          "sleep", "2.5"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not s3.objects() and time.monotonic() < deadline:
        time.sleep(0.05)
    s3.control(fail_first=100000)
    so, se = t.communicate(timeout=120)
    assert t.returncode == 0, se
    no_secrets(so, se)
    local = local_rows(out)
    (run_id, run), = runs_by_job(api)["last"]
    fin = run["finish"]
    assert fin["data_source"] == "s3" and "data_csv" not in fin
    named = len(fin["data_uris"])
    assert named >= 1
    assert "rows were not sent" in se
    assert any(n.endswith(".csv.gz") for n in leftovers(tmp_path))
    s3.control(fail_first=0)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    check_run(api, "last", local, 0)
    assert len(api.rows(run_id)["s3"]) > named  # the rest went under the same run
    assert leftovers(tmp_path) == []


def test_truncated_spill_file_skipped(tmp_path, peers):
    """A spill file truncated by hand: upload warns naming it, keeps it aside, delivers every
    other row; inline_csv would not fail either (S3 down: the rest goes inline)."""
    local1, window1 = api_down_run(tmp_path)
    files = sorted(p for p in spill_dir(tmp_path).iterdir() if p.name.endswith(".csv.gz"))
    assert len(files) >= 3
    victim = files[1]
    lost = csv_rows(gzip.decompress(victim.read_bytes()).decode())
    victim.write_bytes(victim.read_bytes()[:20])
    api, s3 = peers()
    s3.control(fail_first=100000)  # nothing reaches S3: every good batch inline
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="3")
    p = upload(env)
    assert p.returncode == 0, p.stderr
    assert victim.name in p.stderr and "damaged" in p.stderr
    run_id, run = check_run(api, "first", local1, 5, window1, missing=lost)
    assert run["finish"]["data_source"] == "inline"
    assert leftovers(tmp_path) == [victim.name + ".damaged"]


def test_sigkill_mid_upload(tmp_path, peers):
    """SIGKILL of `upload` while a PUT hangs: the next upload delivers the run, no row lost or
    twice (a PUT that landed after the kill is written again under the same key, same bytes)."""
    local1, window1 = api_down_run(tmp_path)
    assert len([n for n in leftovers(tmp_path) if n.endswith(".csv.gz")]) >= 2
    api, s3 = peers(s3_extra=("--hang-secs", "2"))  # each PUT is held 2 s, then stored
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="60")
    t = subprocess.Popen([TRACKER, "upload"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(s3.objects()) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the next PUT is in flight (held), and lands after the kill
    t.kill()
    so, se = t.communicate(timeout=30)
    assert t.returncode == -signal.SIGKILL, (se, s3.objects())
    s3.control(hang_secs=0)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    check_run(api, "first", local1, 5, window1)
    keys = [o["key"] for o in s3.objects()]
    print(f"\nPUTs {len(keys)} for {len(set(keys))} objects (a key written again after the kill)")
    assert leftovers(tmp_path) == []


def test_two_deliverers_at_once(tmp_path, peers):
    """Two `upload`s at once (as cron's upload while a new run starts): the run is registered,
    sent and finished once."""
    local1, window1 = api_down_run(tmp_path)
    api, s3 = peers(s3_extra=("--hang-secs", "0.2"))
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="60")
    ps = [subprocess.Popen([TRACKER, "upload"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
          for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in ps]
    codes = sorted(p.returncode for p in ps)
    assert codes in ([0, 0], [0, 1]), outs
    check_run(api, "first", local1, 5, window1)
    assert leftovers(tmp_path) == []


def test_sigkilled_run_delivered_later(tmp_path, peers):
    """A live run SIGKILLed while S3 refuses its batches (registered, every batch spilled): a
    later upload sends what was spilled under the same run and finishes it as failed, exit code
    137; nothing twice, nothing that was not sampled, every spilled row delivered."""
    api, s3 = peers(s3_extra=("--fail-first", "100000"))
    env = env_for(tmp_path, api.url, s3.url)
    out = tmp_path / "killed.csv"
    t = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out), "--job-name", "killed", "--",
                          "sleep", "30"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len([n for n in leftovers(tmp_path) if n.endswith(".csv.gz")]) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    t.kill()
    t.communicate(timeout=30)
    spilled = [r for p in sorted(spill_dir(tmp_path).glob("*.csv.gz"))
               for r in csv_rows(gzip.decompress(p.read_bytes()).decode())]
    local = local_rows(out)
    s3.control(fail_first=0)
    p = upload(env)
    assert p.returncode == 0, p.stderr
    (run_id, run), = runs_by_job(api)["killed"]
    fin = run["finish"]
    assert fin["exit_code"] == 137 and fin["run_status"] == "failed" and fin["data_source"] == "s3"
    got = delivered_rows(api, run_id)
    assert len(got) == len(set(got)) and set(got) <= set(local)
    assert set(spilled) <= set(got)
    print(f"\nSIGKILL with S3 down, delivered later: {len(got)} of {len(local)} rows (the open batch is lost)")
    assert leftovers(tmp_path) == []


def test_finish_refused_then_delivered(tmp_path, peers):
    """Every batch reached S3 but the finish call failed: the run's record (no spill file) lets
    upload finish it later with its own exit status and every object's URI."""
    api, s3 = peers()
    urllib.request.urlopen(urllib.request.Request(api.url + "/__control", json.dumps({"fail_finish": 1000}).encode(),
                                                  method="POST"), timeout=30).read()
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="2")
    p, local, window = track(tmp_path, env, "unfinished", ["sh", "-c", "sleep 1.2; exit 4"])
    assert p.returncode == 4 and "cannot finish" in p.stderr
    assert [n for n in leftovers(tmp_path) if n.endswith(".run")]
    urllib.request.urlopen(urllib.request.Request(api.url + "/__control", json.dumps({"fail_finish": 0}).encode(),
                                                  method="POST"), timeout=30).read()
    p = upload(env)
    assert p.returncode == 0, p.stderr
    run_id, run = check_run(api, "unfinished", local, 4, window)
    assert run["finish"]["data_source"] == "s3"
    assert leftovers(tmp_path) == []
