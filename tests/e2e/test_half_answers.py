"""Half answers are failures (issue 67, item 4; docs/contracts.md §5), against the strict
stand-ins on 127.0.0.1 (s3rver behind tests/stubs/s3_sigv4.py, whose --half-first answers a PUT
200 without an ETag and does not store it; tests/stubs/sentinel_server.py, whose half_finish takes
the finish and answers 200 with a body that is not its JSON):

- an S3 PUT answered 200 with an XML <Error> body, or with no body, and no ETag is a failed PUT:
  retried under the same key, and the run's rows all arrive once (before: counted as stored, the
  finish named objects that do not exist and was refused);
- a finish answered 200 with JSON cut short, or with a proxy's page, is not done: the run's record
  is kept and `resource-tracker upload` finishes it (the API answers 409: taken), every row once.

Each test prints the faults it met and the rows delivered."""
import json
import urllib.request

import pytest

from test_delivery import check_run, env_for, leftovers, peers, track, upload  # noqa: F401 (peers: a fixture)


@pytest.mark.parametrize("kind", ["error", "empty"])
def test_s3_put_answered_200_without_etag_is_retried(tmp_path, peers, kind):
    api, s3 = peers(s3_extra=("--half-first", "3", "--half-kind", kind))
    env = env_for(tmp_path, api.url, s3.url)
    p, local, window = track(tmp_path, env, "half", ["sleep", "2.5"])
    assert p.returncode == 0, p.stderr
    assert "failed (HTTP 200" in p.stderr and ("InternalError" in p.stderr) == (kind == "error"), p.stderr
    assert s3.control()["failed"] == 3
    run_id, run = check_run(api, "half", local, 0, window)
    fin = run["finish"]
    stored = {o["key"] for o in s3.objects()}
    print(f"\nPUT answered 200 without an ETag ({kind}) 3 times: {len(api.rows(run_id)['s3'])} objects, "
          f"{len(local)} rows delivered once, finish {fin['data_source']}")
    assert fin["data_source"] == "s3" and all(u.split("/", 3)[3] in stored for u in fin["data_uris"])
    assert leftovers(tmp_path) == []


def test_s3_that_only_half_answers_sends_the_rows_inline(tmp_path, peers):
    """No PUT is ever stored: no object is named, every row goes inline (as when S3 refuses)."""
    api, s3 = peers(s3_extra=("--half-first", "100000"))
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="2")
    p, local, window = track(tmp_path, env, "never", ["sleep", "1.5"])
    assert p.returncode == 0, p.stderr
    assert "HTTP 200 InternalError: We encountered an internal error. Please try again. (an error document)" in p.stderr
    assert s3.objects() == []
    run_id, run = check_run(api, "never", local, 0, window)
    assert run["finish"]["data_source"] == "inline"


def control(api, **kw):
    rq = urllib.request.Request(api.url + "/__control", json.dumps(kw).encode(), method="POST")
    with urllib.request.urlopen(rq, timeout=30) as r:
        return json.loads(r.read())


@pytest.mark.parametrize("kind", ["cut", "html"])
def test_finish_answered_200_with_a_half_reply_is_kept_for_upload(tmp_path, peers, kind):
    api, s3 = peers()
    control(api, half_finish=1, half_finish_kind=kind)
    env = env_for(tmp_path, api.url, s3.url, TRACKER_FINISH_TIMEOUT="3")
    p, local, window = track(tmp_path, env, "halfdone", ["sh", "-c", "sleep 1.2; exit 4"])
    assert p.returncode == 4, p.stderr
    assert "cannot finish the run at the Sentinel API (HTTP 200 with an unexpected reply: the reply is not JSON)" \
        in p.stderr, p.stderr
    assert [n for n in leftovers(tmp_path) if n.endswith(".run")], "the run's record is not kept"
    assert control(api)["half_finish"] == 0
    u = upload(env)
    assert u.returncode == 0, u.stderr
    check_run(api, "halfdone", local, 4, window)
    finishes = [r for r in api.doc()["requests"] if r["path"].endswith("/finish")]
    print(f"\nfinish answered 200 with a {kind} body: kept, upload's finish answered "
          f"{[r['status'] for r in finishes]}, {len(local)} rows once")
    assert [r["status"] for r in finishes] == [200, 409]
    assert leftovers(tmp_path) == []
