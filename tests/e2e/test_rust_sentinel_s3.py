"""The Rust resource-tracker's Sentinel unit tests of src/sentinel/s3.rs and upload.rs (the
#[cfg(test)] modules at 3825a8c) re-expressed as request shapes against our stream: the S3 PUTs
(their headers, signature scope, keys, region) and the batches (gzip CSV, never empty, delivered
once through failures). Peers and helpers: rust_sentinel_util.py; mod.rs and run.rs:
test_rust_sentinel.py. Where ours is deliberately different the test asserts ours and says
"Rust:" and why."""
import gzip
import json
import re
import subprocess


from rust_sentinel_util import (  # noqa: F401 (the fixtures are used by name)
    AK, BUCKET, ST, TIMEOUT_SCALE, TRACKER, closed_port, creds, csv_data_rows, finish_of, peer, s3_run, spilled,
    started_standin, stream_env, track)
from rust_smoke_util import EXPECTED_HEADER
from test_cli import ENERGY_COLUMNS


# ---- s3.rs ---------------------------------------------------------------------------------------------------


def test_s3_put_to_mock_server_returns_uri(tmp_path, peer):
    """T-S3-06: the batch is PUT with Content-Type application/gzip (not Content-Encoding), its body
    is gzip, and the finish names it as s3://BUCKET/KEY."""
    pr = peer()
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sleep", "0.3"])
    assert p.returncode == 0, p.stderr
    puts = pr.puts()
    assert puts
    for path, headers, body in puts:
        assert headers.get("content-type") == "application/gzip"
        assert "content-encoding" not in headers
        assert body[:2] == b"\x1f\x8b"
    uris = json.loads(pr.api("/finish")[0][2])["data_uris"]
    assert uris == ["s3://" + path.lstrip("/") for path, _, _ in puts]


def test_sig_v4_golden_value(tmp_path, peer):
    """T-S3-04: the PUT's Authorization is AWS4-HMAC-SHA256 with the credential scope
    AK/DATE/REGION/s3/aws4_request, SignedHeaders with host, x-amz-content-sha256, x-amz-date and
    x-amz-security-token, and a 64-hex signature (that the signature is right, the S3 checker
    verifies in every stand-in run of this file)."""
    pr = peer()
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sleep", "0.3"])
    assert p.returncode == 0, p.stderr
    for _, h, _ in pr.puts():
        date = h["x-amz-date"]
        assert re.fullmatch(r"\d{8}T\d{6}Z", date)
        auth = h["authorization"]
        assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={AK}/{date[:8]}/eu-central-1/s3/aws4_request"), auth
        signed = re.search(r"SignedHeaders=([^,]+)", auth).group(1).split(";")
        assert {"host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"} <= set(signed)
        assert re.search(r"Signature=([0-9a-f]{64})\Z", auth)
        assert h["x-amz-security-token"] == ST


def test_parse_valid_s3_uri(tmp_path, peer):
    """T-S3-01: upload_uri_prefix s3://my-bucket/path/to: bucket my-bucket, keys path/to/RUN/SEQ.csv.gz."""
    pr = peer(register={"run_id": "r1", "upload_uri_prefix": "s3://my-bucket/path/to", "upload_credentials": creds()})
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sleep", "0.3"])
    assert p.returncode == 0, p.stderr
    assert [x[0] for x in pr.puts()][:1] == ["/my-bucket/path/to/r1/000000.csv.gz"]


def refused_prefix(tmp_path, peer, prefix):
    """A run whose registration reply has this upload prefix: nothing PUT, no finish, the job's
    status kept, the reason in the one warning, every row in the spill directory."""
    pr = peer(register={"run_id": "r1", "upload_uri_prefix": prefix, "upload_credentials": creds()})
    p, local = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sh", "-c", "sleep 0.3; exit 6"])
    assert p.returncode == 6, p.stderr
    assert pr.puts() == [] and pr.api("/finish") == []
    assert "upload_uri_prefix is not an s3:// URI" in p.stderr
    rows = [r for f in spilled(tmp_path) for r in csv_data_rows(gzip.decompress(f.read_bytes()).decode())]
    assert sorted(rows) == sorted(local) and local


def test_parse_https_uri_is_error(tmp_path, peer):
    """T-S3-02: an upload prefix that is not s3:// is refused: nothing is PUT anywhere, the job's
    status is kept, the tool does not crash. Rust: the batches are skipped and the run finished
    inline. Ours takes such a reply as a failed registration (one warning naming the reason) and
    keeps every row in the spill directory for `resource-tracker upload`, as when the API is
    down: nothing is lost and no run is finished under an address the tool cannot use."""
    refused_prefix(tmp_path, peer, "https://bucket/path")


def test_upload_thread_processes_batch_with_invalid_uri(tmp_path, peer):
    """T-STR-05: an upload prefix that is no URI at all: as test_parse_https_uri_is_error (Rust:
    the batch is serialized, compressed, skipped, and the thread ends cleanly)."""
    refused_prefix(tmp_path, peer, "invalid-not-an-s3-uri")


def bucket_only(tmp_path, peer, prefix):
    pr = peer(register={"run_id": "r1", "upload_uri_prefix": prefix, "upload_credentials": creds()})
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sleep", "0.3"])
    assert p.returncode == 0, p.stderr
    assert [x[0] for x in pr.puts()] == ["/bucket-only/r1/000000.csv.gz"]
    assert json.loads(pr.api("/finish")[0][2])["data_uris"] == ["s3://bucket-only/r1/000000.csv.gz"]


def test_parse_empty_key_is_error(tmp_path, peer):
    """T-S3-03. Rust: s3://BUCKET/ is an error, the batches skipped. Ours: an upload prefix of a
    bucket alone is a valid one (docs/contracts.md §5: the objects are then RUN_ID/SEQ.csv.gz at
    the bucket's root), so they are uploaded there and the finish names them."""
    bucket_only(tmp_path, peer, "s3://bucket-only/")


def test_parse_missing_slash_is_error(tmp_path, peer):
    """Rust: s3://BUCKET is an error. Ours: as test_parse_empty_key_is_error."""
    bucket_only(tmp_path, peer, "s3://bucket-only")


def test_detect_region_from_mock_server(tmp_path, peer):
    """T-S3-05: without AWS_REGION the bucket's region is the one S3 names in x-amz-bucket-region,
    and the PUTs are signed for it."""
    pr = peer(region="eu-west-1")
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url, AWS_REGION=None), ["sleep", "0.3"])
    assert p.returncode == 0, p.stderr
    assert pr.puts()
    for _, h, _ in pr.puts():
        assert "/eu-west-1/s3/aws4_request" in h["authorization"]


def test_region_cache_skips_network_on_hit(tmp_path, peer):
    """T-S3-05: the region is asked once per bucket, however many batches follow."""
    pr = peer(region="eu-west-1")
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url, AWS_REGION=None, TRACKER_UPLOAD_INTERVAL="0.2"),
                 ["sleep", "1.2"])
    assert p.returncode == 0, p.stderr
    assert len(pr.puts()) >= 2
    assert len([1 for m, path, _, _ in pr.seen if m != "PUT" and not path.startswith("/runs")]) == 1


# ---- upload.rs ----------------------------------------------------------------------------------------------


def objects_text(api):
    out = []
    for o in api.s3.objects():
        data = api.s3.object(BUCKET, o["key"])
        assert data[:2] == b"\x1f\x8b", "missing gzip magic bytes"
        out.append(gzip.decompress(data).decode())
    return out


def test_gzip_compress_decompresses_to_valid_csv(s3_run):
    """T-STR-02: every object is gzip and decompresses to the CSV header and rows of as many
    columns, the rows the run wrote locally. The header is the Rust tool's 32 columns exactly
    (the Sentinel's contract): the energy columns only where asked for (the next test)."""
    api, _, local = s3_run
    texts = objects_text(api)
    assert texts
    rows = []
    for text in texts:
        lines = text.splitlines()
        header = lines[0].split(",")
        assert lines[0] == EXPECTED_HEADER
        for line in lines[1:]:
            assert line and len(line.split(",")) == len(header)
        rows += lines[1:]
    assert rows == local


def test_energy_columns_only_where_asked(tmp_path):
    """--csv-energy: the batches, like the local CSV, carry the 32 columns and then the four of
    energy, header and rows (each row as many cells), the same rows as the local file."""
    api = started_standin(tmp_path)
    try:
        p, local = track(tmp_path, stream_env(tmp_path, api.url, api.s3.url), ["sleep", "0.6"], ["--csv-energy"])
        assert p.returncode == 0, p.stderr
        texts = objects_text(api)
    finally:
        api.stop()
    assert texts and local
    rows = []
    for text in texts:
        lines = text.splitlines()
        assert lines[0] == EXPECTED_HEADER + "," + ENERGY_COLUMNS
        assert all(len(line.split(",")) == 36 for line in lines[1:]), lines
        rows += lines[1:]
    assert rows == local


def test_samples_to_csv_all_lines_end_with_newline(s3_run):
    for text in objects_text(s3_run[0]):
        assert text.endswith("\n") and "\n\n" not in text and "\r" not in text


def test_upload_thread_shuts_down_promptly(tmp_path):
    """T-STR-01 (upload.rs): with an upload interval of an hour, the end of a short job does not
    wait for it: the last batch goes at once and the run is finished (the test's own timeout is
    the guard; no wall-clock time is asserted)."""
    api = started_standin(tmp_path)
    try:
        p, local = track(tmp_path, stream_env(tmp_path, api.url, api.s3.url, TRACKER_UPLOAD_INTERVAL="3600"),
                         ["sleep", "0.5"])
        assert p.returncode == 0, p.stderr
        fin = finish_of(api)[1]["json"]
        assert fin["data_source"] == "s3"
        assert [r for t in objects_text(api) for r in csv_data_rows(t)] == local
    finally:
        api.stop()


def test_upload_thread_handles_s3_failure_gracefully(tmp_path):
    """T-STR-06: S3 unreachable (a closed port): the job's status is kept, one warning at most, and
    the rows go inline."""
    api = started_standin(tmp_path)
    try:
        p, local = track(tmp_path, stream_env(tmp_path, api.url, closed_port(), TRACKER_FINISH_TIMEOUT="2"),
                         ["sh", "-c", "sleep 0.5; exit 3"])
        assert p.returncode == 3
        fin = finish_of(api)[1]["json"]
        assert fin["data_source"] == "inline" and csv_data_rows(fin["data_csv"]) == local
        assert spilled(tmp_path) == []
    finally:
        api.stop()


def test_upload_thread_skips_empty_batch_then_processes(tmp_path):
    """T-STR-07 (and T-COV-01, the empty batch): uploads every 0.2 s while samples come every 1 s:
    the intervals without a row upload nothing (no object without rows), the ones with rows do."""
    api = started_standin(tmp_path)
    try:
        out = tmp_path / "local.csv"
        p = subprocess.run([TRACKER, "-i", "1", "-f", "csv", "-o", str(out), "--", "sleep", "2.5"],
                           env=stream_env(tmp_path, api.url, api.s3.url, TRACKER_UPLOAD_INTERVAL="0.2"),
                           capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
        assert p.returncode == 0, p.stderr
        texts = objects_text(api)
        assert len(texts) >= 2
        assert all(csv_data_rows(t) for t in texts), "an object without rows"
        assert [r for t in texts for r in csv_data_rows(t)] == out.read_text().splitlines()[1:]
    finally:
        api.stop()


def test_upload_thread_resets_consecutive_failures(tmp_path):
    """T-STR-08: three failed uploads in a row do not stop the uploads: S3 refuses the first three
    PUTs (500), then takes them, and every row arrives once, in S3."""
    api = started_standin(tmp_path, s3_flags=("--fail-first", "3"))
    try:
        p, local = track(tmp_path, stream_env(tmp_path, api.url, api.s3.url, TRACKER_UPLOAD_INTERVAL="0.2"),
                         ["sleep", "1.5"])
        assert p.returncode == 0, p.stderr
        fin = finish_of(api)[1]["json"]
        assert fin["data_source"] == "s3"
        rows = [r for t in objects_text(api) for r in csv_data_rows(t)]
        assert rows, "nothing reached S3 after the failures"
        # a batch still failing at the deadline waits in the spill directory (named by no finish)
        rows += [r for f in spilled(tmp_path) for r in csv_data_rows(gzip.decompress(f.read_bytes()).decode())]
        assert sorted(rows) == sorted(local) and len(set(rows)) == len(rows)
    finally:
        api.stop()


def test_upload_thread_refreshes_expiring_credentials(tmp_path):
    """T-UPL-INT-02 uses the real API; here the stand-in: credentials that expire within 300 s are
    refreshed before an upload, and the uploads and the finish go on (s3 route)."""
    api = started_standin(tmp_path, "--cred-ttl", "100")
    try:
        p, local = track(tmp_path, stream_env(tmp_path, api.url, api.s3.url), ["sleep", "0.8"])
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert api.run()[1]["refreshes"] >= 1
        assert finish_of(api)[1]["json"]["data_source"] == "s3"
        assert [r for t in objects_text(api) for r in csv_data_rows(t)] == local
    finally:
        api.stop()


def test_upload_roundtrip_real_api(s3_run):
    """T-UPL-INT-01 uses the real API and bucket; here the stand-in and the S3 checker: the batch
    reaches S3 and the run is finished by the s3 route naming it."""
    api, _, _ = s3_run
    run_id, fin = finish_of(api)
    assert fin["json"]["data_uris"] and all(u.startswith("s3://") for u in fin["json"]["data_uris"])


# Not ported here (no request to look at; internal helpers of the Rust code): run.rs's
# test_days_since_epoch_known_dates, test_days_since_epoch_invalid_inputs,
# test_parse_iso8601_secs_known, test_parse_iso8601_secs_too_few_components,
# test_unix_secs_to_iso8601_known_values, test_unix_secs_to_iso8601_leap_day (their vectors are
# checked against our parser in tests/unit/test_sentinel.c, rust_date_vectors), test_now_iso8601_parses,
# test_base64_encode_rfc4648_vectors, test_base64_encode_csv_roundtrip, test_slice_is_empty_helper;
# s3.rs's test_format_amz_date_known_timestamp, test_epoch_to_utc_unix_epoch,
# test_epoch_to_utc_known_date (the X-Amz-Date format: test_sig_v4_golden_value); upload.rs's
# test_batch_uploader_new_shares_buffer and test_samples_to_csv_empty_slice (no batch without
# rows is ever made: test_upload_thread_skips_empty_batch_then_processes). Their observable
# effects are checked above (finished_at and X-Amz-Date formats, expiry parsing, no base64 anywhere).
