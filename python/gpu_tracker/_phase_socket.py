"""_phase_socket.py - tells the resource-tracker that wraps this job where a SubTracker's code
block starts and stops: when TRACKER_PHASE_SOCKET names a unix stream socket (a path, or
"@name" in the abstract namespace), `send` writes the tool's phase protocol to it, one line
per mark: "start NAME" or "stop NAME", a tab and "t=" with CLOCK_MONOTONIC in nanoseconds.
Never blocks and never raises: without the variable, or when the socket cannot be reached or
is full, the mark is dropped (the sub-tracking file still has it). It reads no clock of
sub_tracker's (whose `time` tests replace) and never asks for the process ID."""

from __future__ import annotations

import os
import socket
import threading
from time import monotonic_ns as _monotonic_ns

_ENV = "TRACKER_PHASE_SOCKET"
_MAX_NAME = 255  # bytes of UTF-8, the protocol's limit
_MAX_PENDING = 64 * 1024  # bytes kept for a full socket before marks are dropped

_lock = threading.Lock()
_state: dict = {}  # "sock": the connected socket, or None once it proved unusable; "pending": bytes


def _reset() -> None:
    """Forget the connection (after a fork, or for a test that changed the variable)."""
    global _lock
    sock = _state.get("sock")
    _state.clear()
    _lock = threading.Lock()
    if sock is not None:
        try:
            sock.close()
        except OSError:
            pass


def _child_after_fork() -> None:
    # the child must not share the parent's stream: a line could interleave with the parent's
    _state.clear()
    globals()["_lock"] = threading.Lock()


os.register_at_fork(after_in_child=_child_after_fork)


def _connect():
    address = os.environ.get(_ENV)
    if not address:
        return None
    if address.startswith("@"):
        address = "\0" + address[1:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.setblocking(False)
        sock.connect(address)
    except OSError:
        sock.close()
        return None
    return sock


def _name_bytes(name: str) -> bytes | None:
    """The name as the protocol takes it: control characters as "?", at most 255 bytes (the
    end of a longer name kept, at a character boundary: the file and line tell blocks apart)."""
    text = "".join("?" if ord(c) < 32 or ord(c) == 127 else c for c in str(name))
    data = text.encode("utf-8", "replace")
    if len(data) > _MAX_NAME:
        data = data[-_MAX_NAME:]
        while data and (data[0] & 0xC0) == 0x80:  # do not start inside a character
            data = data[1:]
    return data or None


def send(verb: str, name: str) -> None:
    """Write "VERB NAME\\tt=NS\\n" to the phase socket, if there is one; never raises."""
    try:
        if _state.get("sock", True) is None:
            return  # no socket, or it failed before
        data = _name_bytes(name)
        if data is None:
            return
        line = verb.encode() + b" " + data + b"\tt=" + str(_monotonic_ns()).encode() + b"\n"
        with _lock:
            if "sock" not in _state:
                _state["sock"] = _connect()
                _state["pending"] = b""
            sock = _state["sock"]
            if sock is None:
                return
            out = _state["pending"] + line
            try:
                sent = sock.send(out, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
            except BlockingIOError:
                sent = 0
            except OSError:  # the tracker went away
                _state["sock"] = None
                sock.close()
                return
            rest = out[sent:]
            if len(rest) > _MAX_PENDING:  # keep whole lines only: drop the newest
                rest = rest[: len(rest) - len(line)]
            _state["pending"] = rest
    except Exception:  # noqa: BLE001  (a mark must never break the job)
        pass
