"""sentinel_api.py - a small client of the Spare Cores Sentinel API (docs/contracts.md §5) with
the Python resource-tracker 0.5's public functions: register_run, refresh_credentials and
finish_run over urllib, plain JSON bodies with the bearer token. The tracker itself streams
through the C library's stream (_stream.py); this module is for callers who drive a run by
hand, and its RunStatus is what ResourceTracker.stop takes.

Where 0.5's wire format and the contract differ, the contract wins: `tags` given as a dict go
out as a list of "k=v" strings, a `pid` is left out, the finish carries `finished_at`, and the
inline finish is plain JSON (0.5 gzips it; the live service takes no Content-Encoding)."""

from __future__ import annotations

import os
from enum import Enum
from logging import getLogger

from ._lazy import lazy_globals

DEFAULT_SENTINEL_URL = "https://api.sentinel.sparecores.net"
DEFAULT_TIMEOUT = 30

logger = getLogger(__name__)


# urlopen and Request (urllib.request), imported when first asked for and kept as globals:
# the calls look them up here (tests may replace them), and importing this module stays light
__getattr__, _global = lazy_globals(globals(), {"urlopen": "urllib.request", "Request": "urllib.request"})


class RunStatus(Enum):
    """How a run ended: `finished` (exit code 0, or a clean stop) or `failed`."""

    finished = "finished"
    failed = "failed"


class DataSource(Enum):
    """Where a finished run's rows are: uploaded objects in S3, or the CSV text inline."""

    s3 = "s3"
    inline = "inline"


class SentinelAPIError(Exception):
    """The Sentinel API answered with a status other than 2xx: .status_code, and .body, the
    reply's text (as far as it could be read)."""

    def __init__(self, status_code: int, body: str):
        self.status_code = status_code
        self.body = body
        super().__init__(f"Sentinel API error {status_code}: {body}")


def _get_base_url() -> str:
    """The API's base URL: SENTINEL_API_URL when set and not empty, else DEFAULT_SENTINEL_URL."""
    return os.environ.get("SENTINEL_API_URL") or DEFAULT_SENTINEL_URL


def _request(method: str, path: str, *, token: str, payload: dict | None = None,
             base_url: str | None = None, timeout: float = DEFAULT_TIMEOUT,
             compress: bool = False) -> dict:
    """One call: METHOD base_url + path with `Authorization: Bearer token`, `Content-Type:
    application/json`, `Accept: application/json` and payload as a JSON body (none when None);
    compress=True gzips the body with `Content-Encoding: gzip` (the contract's service does not
    take it; kept for 0.5's signature). Returns the reply's JSON object ({} for an empty reply).

    Raises SentinelAPIError for an HTTP error status (the token is never in its text), and
    urllib's URLError/OSError when the API cannot be reached."""
    from json import dumps, loads
    from urllib.error import HTTPError

    url = (base_url or _get_base_url()).rstrip("/") + path
    body = None if payload is None else dumps(payload).encode("utf-8")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json"}
    if compress and body is not None:
        import gzip

        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    req = _global("Request")(url, data=body, method=method, headers=headers)
    try:
        with _global("urlopen")(req, timeout=timeout) as resp:
            raw = resp.read()
    except HTTPError as e:
        try:
            text = e.read().decode("utf-8", "replace")
        except Exception:
            text = ""
        raise SentinelAPIError(e.code, text) from e
    return loads(raw.decode("utf-8")) if raw and raw.strip() else {}


def _clean(fields: dict | None) -> dict:
    """fields without the absent values (None or "")."""
    return {k: v for k, v in (fields or {}).items() if v is not None and v != ""}


def register_run(token: str, metadata: dict | None = None, *, host_info: dict | None = None,
                 cloud_info: dict | None = None) -> dict:
    """POST /runs: registers a run and returns the reply, with `run_id`, `upload_uri_prefix`
    (s3://bucket/prefix) and `upload_credentials` (access_key, secret_key, session_token,
    expiration or expires_at).

    metadata: the job's fields (job_name, project_name, stage_name, task_name, team, env,
    language, orchestrator, executor, external_run_id, container_image), `tags` (a list of
    "k=v" strings, or a dict: sent as such a list) and `command` (a list of arguments, or a
    shell string split with shlex: sent as a JSON array in a string). host_info: host_*
    fields; cloud_info: cloud_* fields. Absent values (None, "") are left out, and so is a
    `pid` (the API takes none). Raises SentinelAPIError."""
    from json import dumps

    payload = _clean(metadata)
    payload.update(_clean(host_info))
    payload.update(_clean(cloud_info))
    payload.pop("pid", None)
    tags = payload.get("tags")
    if isinstance(tags, dict):
        payload["tags"] = [f"{k}={v}" for k, v in tags.items()]
    if "command" in payload:
        cmd = payload["command"]
        if isinstance(cmd, str):
            from shlex import split

            cmd = split(cmd)
        payload["command"] = dumps([str(a) for a in cmd])
    logger.info("Registering the run at the Sentinel API")
    return _request("POST", "/runs", token=token, payload=payload)


def refresh_credentials(token: str, run_id: str) -> dict:
    """POST /runs/{run_id}/refresh-credentials (no body): {"upload_credentials": {...}} as in
    register_run's reply. Raises SentinelAPIError."""
    logger.info("Refreshing the upload credentials of run %s", run_id)
    return _request("POST", f"/runs/{run_id}/refresh-credentials", token=token)


def finish_run(token: str, run_id: str, *, exit_code: int = 0,
               run_status: RunStatus = RunStatus.finished, data_source: DataSource = DataSource.s3,
               data_uris: list[str] | None = None, data_csv: str | None = None,
               finished_at: str | None = None) -> dict:
    """POST /runs/{run_id}/finish with exit_code, run_status, finished_at (YYYY-MM-DDTHH:MM:SSZ,
    default now, UTC) and either data_uris (data_source s3: every uploaded object) or data_csv
    (data_source inline: the raw CSV text with its header). Returns the reply. ValueError when
    neither data_uris nor data_csv is given; SentinelAPIError from the API."""
    from time import gmtime, strftime

    if not data_uris and not data_csv:
        raise ValueError("Either 'data_uris' (for data_source='s3') or 'data_csv' "
                         "(for data_source='inline') must be provided.")
    run_status = RunStatus(run_status)
    data_source = DataSource(data_source)
    payload = {"exit_code": int(exit_code), "run_status": run_status.value,
               "finished_at": finished_at or strftime("%Y-%m-%dT%H:%M:%SZ", gmtime()),
               "data_source": data_source.value}
    if data_source is DataSource.s3:
        payload["data_uris"] = list(data_uris or [])
    else:
        payload["data_csv"] = data_csv
    logger.info("Finishing run %s (status %s, exit code %d)", run_id, run_status.value, exit_code)
    return _request("POST", f"/runs/{run_id}/finish", token=token, payload=payload)
