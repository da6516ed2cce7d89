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

_RETRY_NS = 1_000_000_000  # after a failed connect, marks are dropped for a second before the next try

_lock = threading.Lock()
# "address": the socket's address (None: no socket), read from the environment on first use;
# "sock": the connection, reused for every mark and made again when the tracker closed it (it
# closes a connection idle for a minute); "pending": bytes a full socket did not take yet
# (whole lines, but for the first when "partial"); "retry_at": when to try connecting again.
_state: dict = {}


def _reset() -> None:
    """Forget the address and close the connection: after a fork (the child must not share the
    parent's stream: a line could interleave with the parent's, and the tracker takes the
    sender's pid from the connection), or for a test that changed the variable."""
    global _lock
    sock = _state.get("sock")
    _state.clear()
    _lock = threading.Lock()
    if sock is not None:
        try:
            sock.close()  # in a child, its copy only
        except OSError:
            pass


os.register_at_fork(after_in_child=_reset)


def _address() -> str | None:
    address = os.environ.get(_ENV)
    if not address:
        return None
    return "\0" + address[1:] if address.startswith("@") else address


def _connect(address: str):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK)
    try:
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


def _drop_partial_line() -> None:
    # what is left of a line begun on a closed connection would be garbage on a new one
    if _state.get("partial"):
        pending = _state.get("pending", b"")
        _state["pending"] = pending[pending.find(b"\n") + 1:]
        _state["partial"] = False


def _send_locked(address: str, line: bytes) -> None:
    for _attempt in range(2):
        sock = _state.get("sock")
        if sock is None:
            if _monotonic_ns() < _state.get("retry_at", 0):
                return
            sock = _connect(address)
            if sock is None:
                _state["retry_at"] = _monotonic_ns() + _RETRY_NS
                return
            _state["sock"] = sock
            _drop_partial_line()
        out = _state.get("pending", b"") + line
        try:
            sent = sock.send(out, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
        except BlockingIOError:
            sent = 0
        except OSError:  # the tracker closed the connection: once more on a new one
            sock.close()
            _state["sock"] = None
            continue
        rest = out[sent:]
        if len(rest) > _MAX_PENDING:  # the tracker reads none: drop this mark, keep the others
            rest = rest[: len(rest) - len(line)]
        began = out[sent - 1:sent] != b"\n" if sent else _state.get("partial", False)
        _state["pending"] = rest
        _state["partial"] = bool(rest) and began  # the socket took part of rest's first line
        return


def send(verb: str, name: str) -> None:
    """Write "VERB NAME\\tt=NS\\n" to the phase socket, if there is one; never raises."""
    try:
        if "address" not in _state:
            _state["address"] = _address()
        address = _state["address"]
        if address is None:
            return
        data = _name_bytes(name)
        if data is None:
            return
        line = verb.encode() + b" " + data + b"\tt=" + str(_monotonic_ns()).encode() + b"\n"
        with _lock:
            _send_locked(address, line)
    except Exception:  # noqa: BLE001  (a mark must never break the job)
        pass
