"""Shared settings of the package's tests: every test stays on loopback (python/conftest.py
turns cloud discovery off and picks the C library of the build; here the Keeper becomes a
local stand-in: tests/stubs/keeper_server.py on a free port, stopped by its PID at the end);
and `tracker`, a stopped run of this process with 3 samples at 0.2 s, one per test module."""
import atexit
import os
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KEEPER_STUB = os.path.join(REPO, "tests", "stubs", "keeper_server.py")

_keeper = None


def _stop_keeper():
    if _keeper is not None and _keeper.poll() is None:
        os.kill(_keeper.pid, signal.SIGTERM)
        _keeper.wait(5)
    if _keeper is not None and not _keeper.stdout.closed:
        _keeper.stdout.close()


def _start_keeper():
    global _keeper
    _keeper = subprocess.Popen([sys.executable, KEEPER_STUB], stdout=subprocess.PIPE, text=True)
    port = int(_keeper.stdout.readline())
    atexit.register(_stop_keeper)
    return f"http://127.0.0.1:{port}"


KEEPER_URL = _start_keeper()
os.environ["TRACKER_KEEPER_URL"] = KEEPER_URL


def pytest_unconfigure(config):
    _stop_keeper()


@pytest.fixture(scope="module")
def tracker():
    from resource_tracker import ResourceTracker

    t = ResourceTracker(autostart=True, interval=0.2)
    t.wait_for_samples(3)
    t.stop()
    return t
