"""sentinel_api and s3_upload for real, against the strict local stand-ins (sentinel_standins.py):
a run registered with 0.5-style metadata (tags as a dict, command as a shell string, a pid, None
values: sent as the contract wants), two gzipped CSV batches PUT with Signature V4 (the region
asked of the bucket; the second batch with refreshed credentials), the run finished with its
objects, a second run finished inline (plain JSON); the errors (a wrong token, a wrong secret, a
second finish) raised without a secret in their text; and the s3_upload command line."""
import gzip
import os
import subprocess
import sys

import pytest

from resource_tracker import s3_upload
from resource_tracker.s3_upload import put_bytes_with_sts
from resource_tracker.sentinel_api import (DataSource, RunStatus, SentinelAPIError, finish_run,
                                           refresh_credentials, register_run)
from sentinel_standins import BUCKET, PREFIX, SECRETS, SK, STUBS, TOKEN, start_peers, stop_peers

sys.path.insert(0, STUBS)
from sentinel_server import CSV_HEADER  # noqa: E402  (the contract's §3 header)

sys.path.remove(STUBS)


def csv_text(first, n):
    cols = CSV_HEADER.count(",") + 1
    return CSV_HEADER + "\n" + "".join(f"{first + i}" + ",1" * (cols - 1) + "\n" for i in range(n))


@pytest.fixture
def peers(tmp_path, monkeypatch):
    api, s3 = start_peers(tmp_path)
    monkeypatch.setenv("SENTINEL_API_URL", api.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3.url)
    monkeypatch.delenv("AWS_REGION", raising=False)
    s3_upload.bucket_region_cache.clear()
    try:
        yield api, s3
    finally:
        stop_peers(api, s3)


def creds(reply):
    c = reply["upload_credentials"]
    return {"access_key": c["access_key"], "secret_key": c["secret_key"], "session_token": c["session_token"]}


def test_register_upload_finish(peers):
    api, s3 = peers
    reg = register_run(TOKEN, metadata={"job_name": "train", "project_name": "p", "pid": 4242,
                                        "tags": {"team": "ml", "env": "dev"}, "stage_name": None,
                                        "command": 'python train.py --name "my run"', "team": ""},
                       host_info={"host_vcpus": 4, "host_memory_mib": 8192.5, "host_gpu_count": None},
                       cloud_info={"cloud_vendor_id": "aws", "cloud_region_id": None})
    run_id, prefix = reg["run_id"], reg["upload_uri_prefix"]
    assert prefix == f"s3://{BUCKET}/{PREFIX}"
    body = api.doc()["runs"][run_id]["register"]
    assert body == {"job_name": "train", "project_name": "p", "tags": ["team=ml", "env=dev"],
                    "command": '["python", "train.py", "--name", "my run"]', "host_vcpus": 4,
                    "host_memory_mib": 8192.5, "cloud_vendor_id": "aws"}

    uris = [put_bytes_with_sts(s3_uri=f"{prefix}/{run_id}/000000.csv.gz",
                               body=gzip.compress(csv_text(0, 3).encode()), **creds(reg))]
    fresh = refresh_credentials(TOKEN, run_id)
    uris.append(put_bytes_with_sts(s3_uri=f"{prefix}/{run_id}/000001.csv.gz",
                                   body=gzip.compress(csv_text(3, 2).encode()), **creds(fresh)))
    assert [r for r in s3.rejections() if r["method"] == "PUT"] == []  # (the HEAD for the region is not signed)
    assert [o["key"] for o in s3.objects()] == [f"{PREFIX}/{run_id}/00000{i}.csv.gz" for i in (0, 1)]
    assert s3_upload.bucket_region_cache == {BUCKET: "eu-central-1"}  # asked of the bucket

    reply = finish_run(TOKEN, run_id, exit_code=0, data_source=DataSource.s3, data_uris=uris)
    assert reply["run_status"] == "finished"
    fin = api.doc()["runs"][run_id]["finish"]
    assert fin["data_uris"] == uris and fin["exit_code"] == 0 and fin["finished_at"].endswith("Z")
    with pytest.raises(SentinelAPIError) as e:  # a run finishes once
        finish_run(TOKEN, run_id, data_uris=uris)
    assert e.value.status_code == 409


def test_inline_finish_is_plain_json(peers):
    api, _ = peers
    run_id = register_run(TOKEN, metadata={"job_name": "inline"})["run_id"]
    data = csv_text(0, 4)
    finish_run(TOKEN, run_id, exit_code=3, run_status=RunStatus.failed, data_source=DataSource.inline,
               data_csv=data)
    call = [r for r in api.doc()["requests"] if r["path"].endswith("/finish")][-1]
    assert call["status"] == 200 and "Content-Encoding" not in call["headers"]
    assert call["json"]["data_csv"] == data and call["json"]["run_status"] == "failed"
    with pytest.raises(ValueError):
        finish_run(TOKEN, run_id)  # no data at all: refused before any request


def test_errors_keep_secrets_out(peers):
    api, s3 = peers
    with pytest.raises(SentinelAPIError) as e:
        register_run("wrong-token", metadata={"job_name": "x"})
    assert e.value.status_code == 401 and "wrong-token" not in str(e.value)
    reg = register_run(TOKEN, metadata={"job_name": "x"})
    bad = dict(creds(reg), secret_key="not-the-secret")
    with pytest.raises(RuntimeError) as e:
        put_bytes_with_sts(s3_uri=f"{reg['upload_uri_prefix']}/{reg['run_id']}/000000.csv.gz", body=b"x", **bad)
    text = str(e.value)
    assert "403" in text and "SignatureDoesNotMatch" in text and "StringToSign" not in text
    assert not any(s in text for s in SECRETS + ("not-the-secret",))
    assert [r["code"] for r in s3.rejections() if r["method"] == "PUT"] == ["SignatureDoesNotMatch"]


def test_s3_upload_command_line(peers, tmp_path):
    _, s3 = peers
    reg = register_run(TOKEN, metadata={"job_name": "cli"})
    c = creds(reg)
    f = tmp_path / "batch.csv.gz"
    f.write_bytes(gzip.compress(csv_text(0, 1).encode()))
    uri = f"{reg['upload_uri_prefix']}/{reg['run_id']}/000000.csv.gz"
    env = dict(os.environ, AWS_ACCESS_KEY_ID=c["access_key"], AWS_SECRET_ACCESS_KEY=c["secret_key"],
               AWS_SESSION_TOKEN=c["session_token"], AWS_REGION="eu-central-1")
    cmd = [sys.executable, "-m", "resource_tracker.s3_upload", "--s3-uri", uri, "--file", str(f)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == uri
    assert s3.object(BUCKET, uri.split("/", 3)[3]) == f.read_bytes()
    env["AWS_SECRET_ACCESS_KEY"] = "wrong"
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "HTTP 403" in out.stderr and SK not in out.stderr + out.stdout
    env.pop("AWS_SESSION_TOKEN")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--session-token" in out.stderr
