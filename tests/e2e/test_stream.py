"""Streaming to the Sentinel API and S3 (docs/contracts.md §5) with real peers on 127.0.0.1: the
Sentinel stand-in (tests/stubs/sentinel_server.py) and s3rver behind the Signature V4 checker
(tests/stubs/s3_sigv4.py). The tool runs in wrapper mode with a short TRACKER_UPLOAD_INTERVAL and
writes its samples locally as CSV; the rows that reach S3 plus the rows sent inline must be the
local rows, each once. Faults: API down at start, S3 failing then hanging, credentials expiring,
SIGTERM mid-batch, SIGKILL, a hanging S3 at the end. Figures (jitter, loss) are printed, not
asserted. Without a token nothing connects and neither libcurl nor zlib is mapped."""
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import REPO, TIMEOUT_SCALE, TRACKER, VALGRIND, tracker_env
from test_recommend import closed_port_url

STUBS = os.path.join(REPO, "tests", "stubs")
SENTINEL = os.path.join(STUBS, "sentinel_server.py")
S3STUB = os.path.join(STUBS, "s3_sigv4.py")
TOKEN = "sentinel-api-token-VERYSECRET"
AK, SK, ST = "ASIASTREAMTEST", "stream/test+SECRETKEY", "StreamSessionTOKEN"
BUCKET, PREFIX = "bkt", "runs/test"
SECRETS = (TOKEN, SK, ST)


def s3_module():
    if not os.path.exists(S3STUB) or not os.path.exists(SENTINEL):
        pytest.skip("the S3 and Sentinel stand-ins are not on this branch yet")
    sys.path.insert(0, STUBS)
    import s3_sigv4
    ok, why = s3_sigv4.s3rver_available()
    if not ok:
        pytest.skip(why)
    return s3_sigv4


class Sentinel:
    """The Sentinel stand-in on a free port, stopped by its own pid."""

    def __init__(self, tmp_path, *flags):
        self.log = tmp_path / "sentinel.json"
        self.p = subprocess.Popen(["/usr/bin/python3", SENTINEL, "--token", TOKEN, "--log", str(self.log),
                                   "--bucket", BUCKET, "--prefix", PREFIX, "--access-key", AK, "--secret-key", SK,
                                   "--session-token", ST, *flags], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.p.stdout.readline())}"

    def doc(self):
        if not self.log.exists():
            return {"requests": [], "runs": {}}
        return json.loads(self.log.read_text())

    def stop(self):
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGTERM)
            self.p.wait(10)


@pytest.fixture
def peers(tmp_path):
    s3mod = s3_module()
    made = []

    def start(sentinel_flags=(), s3_extra=()):
        s3 = s3mod.start(tmp_path, secret=SK, token=ST, buckets=(BUCKET,), access_key=AK, extra=s3_extra)
        made.append(s3)
        # the stand-in checks each finish against the run's objects in S3 (--s3-url)
        api = Sentinel(tmp_path, "--s3-url", s3.url, *sentinel_flags)
        made.append(api)
        return api, s3

    yield start
    for m in made:
        m.stop()


def stream_env(tmp_path, api_url, s3_url, **extra):
    env = tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=api_url, AWS_ENDPOINT_URL_S3=s3_url,
                      AWS_REGION="eu-central-1", TRACKER_UPLOAD_INTERVAL="0.5",
                      XDG_STATE_HOME=str(tmp_path / "state"))
    env.update(extra)
    return env


def local_rows(path):
    lines = path.read_text().splitlines()
    assert lines and lines[0].startswith("timestamp,")
    return lines[1:]


def csv_rows(text):
    lines = text.splitlines()
    assert lines[0].startswith("timestamp,system_processes,")
    return lines[1:]


def s3_rows(s3, run_id):
    """Rows of the run's objects in S3, by seq: {seq: [rows]} (a key stored twice must hold the
    same bytes, and counts once)."""
    out, seen = {}, {}
    for o in s3.objects():
        m = re.fullmatch(re.escape(f"{PREFIX}/{run_id}/") + r"(\d{6})\.csv\.gz", o["key"])
        assert m and o["bucket"] == BUCKET, o
        if o["key"] in seen:
            assert seen[o["key"]] == o["sha256"], "a seq uploaded twice with other content"
            continue
        seen[o["key"]] = o["sha256"]
        out[int(m.group(1))] = csv_rows(gzip.decompress(s3.object(BUCKET, o["key"])).decode())
    return out


def the_run(api):
    runs = api.doc()["runs"]
    assert len(runs) == 1, runs
    return next(iter(runs.items()))


def check_delivery(api, s3, local, expect_source=None, spilled=()):
    """The rows the finish call names (objects of data_uris, or data_csv) plus the run's objects in
    S3 (plus spilled: the rows kept for a later delivery) are the local rows, each once. Returns
    the finish body."""
    run_id, run = the_run(api)
    fin = run["finish"]
    assert fin is not None, "the run was not finished"
    objs = s3_rows(s3, run_id)
    if expect_source:
        assert fin["data_source"] == expect_source
    if fin["data_source"] == "s3":
        assert sorted(objs) == list(range(len(objs)))
        assert fin["data_uris"] == [f"s3://{BUCKET}/{PREFIX}/{run_id}/{i:06d}.csv.gz" for i in range(len(objs))]
        inline = []
    else:
        assert not objs, "inline while objects are in S3: inline must never mean only the rest"
        inline = csv_rows(fin["data_csv"])
    got = [r for seq in sorted(objs) for r in objs[seq]] + inline + list(spilled)
    assert len(got) == len(set(got)), "a row arrived twice"
    assert sorted(got) == sorted(local)
    return fin


def no_secrets(*texts):
    for t in texts:
        for s in SECRETS:
            assert s not in t, "a secret leaked into the output"


def spilled_rows(tmp_path):
    d = tmp_path / "state" / "resource-tracker"
    rows = []
    for f in sorted(d.glob("*.csv.gz")) if d.exists() else []:
        rows += csv_rows(gzip.decompress(f.read_bytes()).decode())
    return rows


def jitter(rows, interval):
    ts = [float(r.split(",")[0]) for r in rows]
    d = [b - a for a, b in zip(ts, ts[1:])]
    return max(abs(x - interval) for x in d[:-1]) if len(d) > 1 else 0.0


def track(tmp_path, env, cmd, timeout=60, interval="0.1"):
    out = tmp_path / "local.csv"
    p = subprocess.run([TRACKER, "-i", interval, "-f", "csv", "-o", str(out), "--job-name", "streamjob",
                        "--tag", "team=x", "--", *cmd], env=env, capture_output=True, text=True, timeout=timeout)
    no_secrets(p.stdout, p.stderr, out.read_text())
    return p, local_rows(out)


# ---- without a token ------------------------------------------------------------------------------


def test_no_token_no_connection_nothing_loaded(tmp_path):
    """No token: no connection to the API or S3 addresses, and neither libcurl nor zlib mapped
    (the wrapped command reads its parent's maps); with a token libcurl is mapped."""
    listeners = [socket.socket() for _ in range(2)]
    for s in listeners:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.setblocking(False)
    urls = [f"http://127.0.0.1:{s.getsockname()[1]}" for s in listeners]
    env = tracker_env(SENTINEL_API_URL=urls[0], AWS_ENDPOINT_URL_S3=urls[1], TRACKER_UPLOAD_INTERVAL="0.2",
                      XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([TRACKER, "-q", "-i", "0.1", "--", "sh", "-c", "sleep 0.6; cat /proc/$PPID/maps"],
                       env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert "libcurl" not in p.stdout and "libz." not in p.stdout
    for s in listeners:
        with pytest.raises(BlockingIOError):
            s.accept()
        s.close()
    assert not (tmp_path / "state").exists()
    # the control: with a token (and the API on a closed port) libcurl is loaded; the command
    # looks until both are mapped (each tenth of a second, for 20 s at most, longer under the
    # sanitizers: a loaded machine loads them late, and a fixed wait missed them)
    env = stream_env(tmp_path, closed_port_url(), closed_port_url(), TRACKER_FINISH_TIMEOUT="1")
    look = (f"n=0; until grep -q libcurl /proc/$PPID/maps && grep -q 'libz[.]' /proc/$PPID/maps"
            f" || [ $n -ge {200 * TIMEOUT_SCALE} ]; do sleep 0.1; n=$((n+1)); done; cat /proc/$PPID/maps")
    p = subprocess.run([TRACKER, "-q", "-i", "0.1", "--", "sh", "-c", look],
                       env=env, capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
    assert "libcurl" in p.stdout and "libz." in p.stdout
    no_secrets(p.stdout, p.stderr)


def test_bad_upload_interval_is_usage_error(tmp_path):
    env = stream_env(tmp_path, closed_port_url(), closed_port_url(), TRACKER_UPLOAD_INTERVAL="soon")
    p = subprocess.run([TRACKER, "-q", "--", "true"], env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "TRACKER_UPLOAD_INTERVAL" in p.stderr
    no_secrets(p.stderr)
    # a subcommand does not stream, and is not refused over the streaming settings
    fixture = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "runs", "tool.csv")
    p = subprocess.run([TRACKER, "summary", fixture], env=env, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


# ---- with the peers ---------------------------------------------------------------------------------


def test_stream_run(tmp_path, peers):
    api, s3 = peers()
    p, local = track(tmp_path, stream_env(tmp_path, api.url, s3.url), ["sh", "-c", "sleep 2; exit 3"])
    assert p.returncode == 3
    assert p.stderr == ""
    run_id, run = the_run(api)
    reg = run["register"]
    assert reg["job_name"] == "streamjob" and reg["tags"] == ["team=x"]
    assert json.loads(reg["command"]) == ["sh", "-c", "sleep 2; exit 3"]
    assert "pid" not in reg and reg["host_vcpus"] >= 1
    fin = check_delivery(api, s3, local, "s3")
    # on a slow build (valgrind, the sanitizers) fewer uploads fit in the 2 s: two still show
    # uploading during the run
    assert len(fin["data_uris"]) >= (3 if TIMEOUT_SCALE == 1 else 2)
    assert fin["exit_code"] == 3 and fin["run_status"] == "failed"
    assert not s3.rejections()
    assert spilled_rows(tmp_path) == []
    req = api.doc()["requests"]
    assert all(r["headers"].get("Authorization") == f"Bearer {TOKEN}" for r in req)


def test_api_down_at_start(tmp_path):
    """No API: tracking goes on, one warning, the job's status, every row in the spill directory."""
    env = stream_env(tmp_path, closed_port_url(), closed_port_url(), TRACKER_FINISH_TIMEOUT="2")
    p, local = track(tmp_path, env, ["sh", "-c", "sleep 1.5; exit 5"])
    assert p.returncode == 5
    assert len(re.findall("cannot register", p.stderr)) == 1, p.stderr
    assert "rows were not sent" in p.stderr
    spilled = spilled_rows(tmp_path)
    assert sorted(spilled) == sorted(local) and len(set(spilled)) == len(spilled)


def test_s3_fails_then_hangs(tmp_path, peers):
    """S3 answers 500, then hangs 2 s per PUT for a while: everything still arrives once, and
    the samples keep to their grid (jitter printed)."""
    api, s3 = peers(s3_extra=("--fail-first", "4"))
    env = stream_env(tmp_path, api.url, s3.url, TRACKER_UPLOAD_INTERVAL="0.3")
    out = tmp_path / "local.csv"
    t = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out), "--", "sleep", "6"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    s3.control(hang_secs=2)
    time.sleep(3)
    s3.control(hang_secs=0)
    so, se = t.communicate(timeout=60)
    assert t.returncode == 0
    local = local_rows(out)
    no_secrets(so, se, out.read_text())
    check_delivery(api, s3, local, spilled=spilled_rows(tmp_path))
    print(f"\njitter during S3 faults at 0.1 s: {jitter(local, 0.1) * 1000:.1f} ms max")


def test_credentials_expire_mid_run(tmp_path, peers):
    """Credentials that expire within 300 s are refreshed, and uploads go on with the new ones:
    here each session token lives 2 s and is rotated at every refresh, and the S3 checker takes
    only tokens the Sentinel issued and that have not expired (--token-file), so every batch
    that reaches S3 after the first 2 s was signed with a refreshed token."""
    tokens = tmp_path / "tokens.json"
    api, s3 = peers(sentinel_flags=["--cred-ttl", "2", "--rotate-token", "--token-file", str(tokens)],
                    s3_extra=("--token-file", str(tokens)))
    p, local = track(tmp_path, stream_env(tmp_path, api.url, s3.url), ["sleep", "5"])
    assert p.returncode == 0, p.stderr
    run_id, run = the_run(api)
    assert run["refreshes"] >= 2
    assert len(json.loads(tokens.read_text())["tokens"]) >= 3
    check_delivery(api, s3, local, "s3")


def test_sigterm_mid_batch(tmp_path, peers):
    """No command: SIGTERM flushes the last (partial) batch and finishes the run as finished."""
    api, s3 = peers()
    env = stream_env(tmp_path, api.url, s3.url, TRACKER_UPLOAD_INTERVAL="1")
    out = tmp_path / "local.csv"
    t = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.6)
    t.send_signal(signal.SIGTERM)
    so, se = t.communicate(timeout=30)
    assert t.returncode == 0, se
    no_secrets(so, se)
    fin = check_delivery(api, s3, local_rows(out), "s3")
    assert fin["run_status"] == "finished" and fin["exit_code"] == 0


@pytest.mark.parametrize("s3_ok", [True, False])
def test_sigkill_keeps_spilled(tmp_path, peers, s3_ok):
    """SIGKILL: what reached S3 plus what is in the spill directory is a part of the local rows,
    without duplicates; how many rows were lost is printed."""
    api, s3 = peers(s3_extra=() if s3_ok else ("--fail-first", "100000"))
    env = stream_env(tmp_path, api.url, s3.url, TRACKER_UPLOAD_INTERVAL="0.3")
    out = tmp_path / "local.csv"
    t = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out), "--", "sleep", "30"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    t.kill()
    t.communicate(timeout=30)
    local = local_rows(out)
    run_id, _ = the_run(api)
    got = [r for rows in s3_rows(s3, run_id).values() for r in rows] + spilled_rows(tmp_path)
    assert len(got) == len(set(got)) and set(got) <= set(local)
    print(f"\nSIGKILL with S3 {'up' if s3_ok else 'down'}: {len(local) - len(got)} of {len(local)} rows lost")


def test_exit_bounded_when_s3_hangs(tmp_path, peers):
    """S3 hangs for good (each PUT sent, never answered: it may land later): the exit waits at
    most TRACKER_FINISH_TIMEOUT (printed; the test's own timeout guards a hang); the run is not
    finished (inline rows would repeat a late landing's) and every row is kept for a later
    delivery, which writes the same keys again."""
    api, s3 = peers(s3_extra=("--hang-secs", "60"))
    env = stream_env(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="2")
    t0 = time.monotonic()
    p, local = track(tmp_path, env, ["sleep", "1"], timeout=40)
    took = time.monotonic() - t0
    assert p.returncode == 0
    assert "may still land" in p.stderr, p.stderr
    (run,) = api.doc()["runs"].values()
    assert run["finish"] is None
    assert sorted(spilled_rows(tmp_path)) == sorted(local)
    print(f"\nexit after a 1 s job with S3 hanging, finish timeout 2 s: {took:.2f} s")
