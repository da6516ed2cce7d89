"""Say the wait (issue 67, item 5; docs/contracts.md §5): when the end of the run waits on S3 or
the Sentinel API after a failure, one line says for how long at most and why, once (not per
retry): "waiting up to N s for S3 (HTTP 403 InternalError so far); TRACKER_FINISH_TIMEOUT sets
it". Against the stand-ins on 127.0.0.1; no wall-clock time is asserted (N is the budget left)."""
import json
import re
import urllib.request

from test_delivery import env_for, peers, track  # noqa: F401 (peers: a fixture)

WAIT = re.compile(r"waiting up to (\d+) s for (S3|the Sentinel API) \((.*) so far\); TRACKER_FINISH_TIMEOUT sets it")


def waits(stderr):
    return [m.groups() for m in WAIT.finditer(stderr)]


def test_end_waiting_on_s3_says_so_once(tmp_path, peers):
    api, s3 = peers(s3_extra=("--fail-first", "100000", "--fail-status", "403"))
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="4")
    p, local, _ = track(tmp_path, env, "refused", ["sleep", "1"])
    assert p.returncode == 0, p.stderr
    said = waits(p.stderr)
    print(f"\n{said}; {s3.control()['failed']} PUTs refused")
    assert len(said) == 1, p.stderr
    secs, on, why = said[0]
    assert on == "S3" and why == "HTTP 403 InternalError" and 1 <= int(secs) <= 4, said
    assert s3.control()["failed"] >= 2  # retried after the line, which was said once


def test_end_waiting_on_the_api_says_so_once(tmp_path, peers):
    api, s3 = peers()
    rq = urllib.request.Request(api.url + "/__control", json.dumps({"fail_register": 100000}).encode(), method="POST")
    urllib.request.urlopen(rq, timeout=30).read()
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="4")
    p, local, _ = track(tmp_path, env, "unregistered", ["sleep", "1"])
    assert p.returncode == 0, p.stderr
    said = waits(p.stderr)
    assert said and len(said) == 1, p.stderr
    secs, on, why = said[0]
    assert on == "the Sentinel API" and why == "HTTP 503" and 1 <= int(secs) <= 4, said


def test_nothing_said_when_nothing_waits(tmp_path, peers):
    api, s3 = peers()
    env = env_for(tmp_path, api.url, s3.url)
    p, local, _ = track(tmp_path, env, "fine", ["sleep", "1"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
