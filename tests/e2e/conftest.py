"""Shared settings for the end-to-end tests: where the build is, and environment that keeps
every test on loopback (no cloud metadata, no real Sentinel)."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.environ.get("RT_BUILD_DIR", os.path.join(REPO, "build"))
TRACKER = os.path.join(BUILD_DIR, "resource-tracker")

# Nothing in the suite may reach a metadata service or the internet.
os.environ["TRACKER_CLOUD_DISCOVERY"] = "0"
os.environ["TRACKER_KEEPER_URL"] = "http://127.0.0.1:9"
os.environ.pop("SENTINEL_API_TOKEN", None)

import json
import signal
import subprocess
import time

import pytest


def tracker_env(**extra):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("TRACKER_") and k not in ("TRACKER_CLOUD_DISCOVERY",):
            del env[k]
    env["TRACKER_CLOUD_DISCOVERY"] = "0"
    # the Keeper is never the real one: a closed local port unless a test starts a stand-in
    env["TRACKER_KEEPER_URL"] = "http://127.0.0.1:9"
    env.update(extra)
    return env


def run(args, timeout=30, **kw):
    """Runs the tracker to completion; returns CompletedProcess with text output."""
    kw.setdefault("env", tracker_env())
    return subprocess.run([TRACKER] + list(args), capture_output=True, text=True, timeout=timeout, **kw)


class Tracker:
    """A tracker running in the background, writing JSON lines to stdout."""

    def __init__(self, args, env=None, cwd=None):
        self.p = subprocess.Popen([TRACKER] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env or tracker_env(), cwd=cwd)
        self.lines = []

    def next_sample(self, timeout=10):
        deadline = time.monotonic() + timeout
        line = self.p.stdout.readline()
        assert line, f"tracker ended: rc={self.p.poll()} stderr={self.p.stderr.read()}"
        assert time.monotonic() < deadline + 5
        self.lines.append(line)
        return json.loads(line)

    def stop(self, sig=signal.SIGTERM, timeout=10):
        self.p.send_signal(sig)
        out, err = self.p.communicate(timeout=timeout)
        self.lines += [l for l in out.splitlines() if l.strip()]
        return self.p.returncode, err

    def samples(self):
        return [json.loads(l) for l in self.lines]


@pytest.fixture
def tracker_factory():
    started = []

    def make(args, **kw):
        t = Tracker(args, **kw)
        started.append(t)
        return t

    yield make
    for t in started:
        if t.p.poll() is None:
            t.p.kill()
            t.p.wait()
