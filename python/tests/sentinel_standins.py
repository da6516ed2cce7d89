"""The local stand-ins of the Sentinel API (tests/stubs/sentinel_server.py, strict about
docs/contracts.md §5) and of S3 (tests/stubs/s3_sigv4.py: Signature V4 checked for real, objects
kept in memory, no node needed) for the package's tests, on loopback ports, each stopped by its
own PID. The Sentinel stand-in checks each finish against the run's objects in the S3 one."""
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STUBS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "stubs")
TOKEN = "sentinel-api-token-VERYSECRET"
AK, SK, ST = "ASIAPYTHONTEST", "python/test+SECRETKEY", "PythonSessionTOKEN"
BUCKET, PREFIX, REGION = "bkt", "runs/py", "eu-central-1"
SECRETS = (TOKEN, SK, ST)


class Sentinel:
    """sentinel_server.py on a free port (its log in tmp_path/sentinel.json)."""

    def __init__(self, tmp_path, *flags):
        self.log = tmp_path / "sentinel.json"
        self.p = subprocess.Popen([sys.executable, os.path.join(STUBS, "sentinel_server.py"), "--token", TOKEN,
                                   "--log", str(self.log), "--bucket", BUCKET, "--prefix", PREFIX,
                                   "--access-key", AK, "--secret-key", SK, "--session-token", ST, *flags],
                                  stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.p.stdout.readline())}"

    def doc(self):
        if not self.log.exists():
            return {"requests": [], "runs": {}}
        return json.loads(self.log.read_text())

    def stop(self):
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGTERM)
            self.p.wait(10)
        self.p.stdout.close()


def start_peers(tmp_path, sentinel_flags=(), s3_extra=()):
    """(sentinel, s3): both started, the Sentinel checking finishes against the S3 store.
    Stop both (stop_peers) whatever happens."""
    sys.path.insert(0, STUBS)
    try:
        import s3_sigv4
    finally:
        sys.path.remove(STUBS)
    s3 = s3_sigv4.start(tmp_path, secret=SK, token=ST, buckets=(BUCKET,), access_key=AK, region=REGION,
                        s3rver=False, extra=s3_extra)
    try:
        api = Sentinel(tmp_path, "--s3-url", s3.url, *sentinel_flags)
    except BaseException:
        s3.stop()
        raise
    return api, s3


def stop_peers(api, s3):
    try:
        api.stop()
    finally:
        s3.stop()
        if s3.proc.stdout:
            s3.proc.stdout.close()
