"""s3_upload.py - PUT one object to S3 with temporary (STS) credentials, signed with AWS
Signature V4 by hand (urllib, no boto): the Python resource-tracker 0.5's put_bytes_with_sts,
put_object_with_sts and its command line (`python -m resource_tracker.s3_upload`). As in
docs/contracts.md §5: service s3, the session token as X-Amz-Security-Token, x-amz-content-sha256
sent; AWS_ENDPOINT_URL_S3 turns to path style on that endpoint (http://127.0.0.1:9000/BUCKET/KEY);
the region is the caller's, else AWS_REGION, else asked of the bucket, else eu-central-1. The
tracker's own uploads are the C library's stream; this module is for callers of 0.5's API."""

from __future__ import annotations

import hashlib
import hmac
import os
from logging import getLogger

from ._lazy import lazy_globals

logger = getLogger(__name__)

DEFAULT_REGION = "eu-central-1"
bucket_region_cache: dict[str, str] = {}


# urlopen and Request (urllib.request), imported when first asked for and kept as globals:
# the calls look them up here (tests may replace them), and importing this module stays light
__getattr__, _global = lazy_globals(globals(), {"urlopen": "urllib.request", "Request": "urllib.request"})


def _parse_s3_uri(s3_uri: str) -> tuple[str, str]:
    """(bucket, key) of s3://BUCKET/KEY; ValueError unless both are there.

    >>> _parse_s3_uri("s3://bkt/runs/r1/000000.csv.gz")
    ('bkt', 'runs/r1/000000.csv.gz')
    """
    rest = s3_uri[5:] if isinstance(s3_uri, str) and s3_uri.startswith("s3://") else None
    bucket, _, key = (rest or "").partition("/")
    if not bucket or not key:
        raise ValueError(f"Expected s3 URI as s3://BUCKET/KEY, got {s3_uri!r}")
    return bucket, key


def _sha256_hex(data: bytes) -> str:
    """The SHA-256 of data as lower-case hex."""
    return hashlib.sha256(data).hexdigest()


def _hmac_sha256(key: bytes, msg: str) -> bytes:
    """HMAC-SHA256 of msg (UTF-8) under key, as bytes."""
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def _derive_signing_key(secret_key: str, date_stamp: str, region: str) -> bytes:
    """SigV4's signing key of service s3: HMAC chain over YYYYMMDD, region, "s3", "aws4_request"."""
    key = ("AWS4" + secret_key).encode("utf-8")
    for part in (date_stamp, region, "s3", "aws4_request"):
        key = _hmac_sha256(key, part)
    return key


def _endpoint() -> str | None:
    return (os.environ.get("AWS_ENDPOINT_URL_S3") or "").rstrip("/") or None


def _object_url(bucket: str, key: str, region: str) -> str:
    """The object's URL: path style on AWS_ENDPOINT_URL_S3, else AWS's virtual-hosted style;
    the key's bytes encoded as SigV4's canonical URI wants them (each once, "/" kept)."""
    from urllib.parse import quote

    path = quote(key, safe="-_.~/")
    endpoint = _endpoint()
    if endpoint:
        return f"{endpoint}/{quote(bucket, safe='-_.~')}/{path}"
    return f"https://{bucket}.s3.{region}.amazonaws.com/{path}"


def _get_bucket_region(bucket: str, timeout: float = 10) -> str:
    """The bucket's region: AWS_REGION when set, else the x-amz-bucket-region header of a HEAD
    of the bucket (S3 sends it on a 301 or 403 too), else eu-central-1; remembered per bucket."""
    env = os.environ.get("AWS_REGION")
    if env:
        return env
    if bucket in bucket_region_cache:
        return bucket_region_cache[bucket]
    from urllib.error import HTTPError

    endpoint = _endpoint()
    url = f"{endpoint}/{bucket}" if endpoint else f"https://{bucket}.s3.amazonaws.com/"
    region = None
    try:
        with _global("urlopen")(_global("Request")(url, method="HEAD"), timeout=timeout) as resp:
            region = resp.headers.get("x-amz-bucket-region")
    except HTTPError as e:
        region = e.headers.get("x-amz-bucket-region") if e.headers else None
    except Exception as e:
        logger.warning("Cannot ask bucket %s for its region (%s): using %s", bucket, e, DEFAULT_REGION)
    region = region or DEFAULT_REGION
    bucket_region_cache[bucket] = region
    return region


def _error_code(body: bytes) -> str:
    """The <Code> of an S3 XML error body ("" when none): never the whole body, which for a
    SignatureDoesNotMatch echoes what was signed."""
    import re

    m = re.search(rb"<Code>([^<]{1,100})</Code>", body or b"")
    return m.group(1).decode("utf-8", "replace") if m else ""


def put_bytes_with_sts(*, s3_uri: str, body: bytes, access_key: str, secret_key: str,
                       session_token: str, region: str | None = None, timeout: float = 30,
                       content_type: str | None = None) -> str:
    """PUTs body as the object s3_uri (s3://BUCKET/KEY), signed with SigV4 with the STS
    credentials; content_type defaults to application/gzip for a .gz key, else
    application/octet-stream. Returns s3_uri. RuntimeError naming the HTTP status (and S3's
    error code) when S3 refuses it; OSError when S3 cannot be reached. The keys and the token
    are never in a message."""
    from time import gmtime, strftime
    from urllib.error import HTTPError
    from urllib.parse import urlsplit

    bucket, key = _parse_s3_uri(s3_uri)
    region = region or _get_bucket_region(bucket, timeout=timeout)
    url = _object_url(bucket, key, region)
    parts = urlsplit(url)
    body = bytes(body)
    now = gmtime()
    amz_date, date_stamp = strftime("%Y%m%dT%H%M%SZ", now), strftime("%Y%m%d", now)
    payload_hash = _sha256_hex(body)
    if content_type is None:
        content_type = "application/gzip" if key.endswith(".gz") else "application/octet-stream"
    signed = {"content-type": content_type, "host": parts.netloc, "x-amz-content-sha256": payload_hash,
              "x-amz-date": amz_date, "x-amz-security-token": session_token}
    names = ";".join(sorted(signed))
    canonical = "\n".join(["PUT", parts.path, "", "".join(f"{k}:{signed[k].strip()}\n" for k in sorted(signed)),
                           names, payload_hash])
    scope = f"{date_stamp}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, _sha256_hex(canonical.encode("utf-8"))])
    signature = hmac.new(_derive_signing_key(secret_key, date_stamp, region), to_sign.encode("utf-8"),
                         hashlib.sha256).hexdigest()
    headers = {"Host": parts.netloc, "Content-Type": content_type, "Content-Length": str(len(body)),
               "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date,
               "x-amz-security-token": session_token,
               "Authorization": f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                                f"SignedHeaders={names}, Signature={signature}"}
    req = _global("Request")(url, data=body, method="PUT", headers=headers)
    try:
        with _global("urlopen")(req, timeout=timeout) as resp:
            status = resp.status
    except HTTPError as e:
        try:
            code = _error_code(e.read())
        except Exception:
            code = ""
        raise RuntimeError(f"S3 upload of {s3_uri} failed: HTTP {e.code}" + (f" ({code})" if code else "")) from None
    if not 200 <= int(status) < 300:
        raise RuntimeError(f"S3 upload of {s3_uri} failed: HTTP {status}")
    logger.debug("Uploaded %d bytes to %s", len(body), s3_uri)
    return s3_uri


def put_object_with_sts(*, s3_uri: str, file_path, access_key: str, secret_key: str,
                        session_token: str, region: str | None = None, timeout: float = 30) -> str:
    """put_bytes_with_sts of the bytes of the file at file_path. Returns s3_uri."""
    with open(file_path, "rb") as f:
        body = f.read()
    return put_bytes_with_sts(s3_uri=s3_uri, body=body, access_key=access_key, secret_key=secret_key,
                              session_token=session_token, region=region, timeout=timeout)


def _build_arg_parser():
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m resource_tracker.s3_upload",
        description="Upload a file to S3 with temporary (STS) credentials (AWS Signature V4). "
                    "The keys may come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
                    "AWS_SESSION_TOKEN instead of the command line.")
    p.add_argument("--s3-uri", required=True, help="the object, s3://BUCKET/KEY")
    p.add_argument("--file", required=True, help="the local file to upload")
    p.add_argument("--access-key", default=os.environ.get("AWS_ACCESS_KEY_ID"), help="STS access key id")
    p.add_argument("--secret-key", default=os.environ.get("AWS_SECRET_ACCESS_KEY"), help="STS secret key")
    p.add_argument("--session-token", default=os.environ.get("AWS_SESSION_TOKEN"), help="STS session token")
    p.add_argument("--region", default=None,
                   help="the bucket's region (default: AWS_REGION, else asked of the bucket)")
    p.add_argument("--timeout", type=float, default=30, help="seconds (default 30)")
    return p


def main(argv=None) -> int:
    """The command line: uploads --file to --s3-uri and prints the URI; exit status 0, or 1
    with the reason on stderr, 2 for a usage error."""
    import sys

    parser = _build_arg_parser()
    args = parser.parse_args(argv)
    missing = [f"--{n.replace('_', '-')}" for n in ("access_key", "secret_key", "session_token")
               if not getattr(args, n)]
    if missing:
        parser.error("missing " + ", ".join(missing))
    try:
        uri = put_object_with_sts(s3_uri=args.s3_uri, file_path=args.file, access_key=args.access_key,
                                  secret_key=args.secret_key, session_token=args.session_token,
                                  region=args.region, timeout=args.timeout)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"s3_upload: {e}", file=sys.stderr)
        return 1
    print(uri)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
