"""_exit.py - the kernel's own figures for a tracked command that has ended but is not yet
reaped (a zombie child of this process), read without reaping it: the largest peak RSS of it
and the descendants it reaped (ru_maxrss of waitid(2) with WNOWAIT, which fills the rusage as
wait4 would, but leaves the child to whoever waits for it) and its CPU seconds, its own and its
reaped children's CPU ticks and its start time (/proc/PID/stat of the zombie), with the clocks
at the reading. The Tracker reads them at stop() when its process is such a zombie: a command
that ended between two samples (shorter than sleep_time) is otherwise seen by no sample while
it ran. Linux only; None wherever they cannot be read.

The kernel starts a child's ru_maxrss at the memory of the image it was forked from: exec(2)
records the old image's peak (the parent's own, shared until exec after vfork, or the copy
after fork). So a figure not above this process's own peak RSS (VmHWM: of its image, not the
ru_maxrss that its own start got from its parent's) may be this process's, not the command's,
and is not used (peak_rss_bytes None); above it, it is the command's or a descendant's (whose
own start carries the command's image: the tree's still)."""

from __future__ import annotations

import ctypes
import os
import platform
import select
import signal
import time
from typing import NamedTuple

# waitid's system call number (glibc's waitid() has no rusage argument; the kernel's has)
_SYS_WAITID = {
    "x86_64": 247, "amd64": 247, "aarch64": 95, "arm64": 95, "riscv64": 95, "loongarch64": 95,
    "ppc64le": 272, "ppc64": 272, "s390x": 281, "i386": 284, "i686": 284, "armv7l": 280,
}
_P_PID = 1


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class _Rusage(ctypes.Structure):
    _fields_ = [("ru_utime", _Timeval), ("ru_stime", _Timeval), ("ru_maxrss", ctypes.c_long)] + [
        (f"ru_{n}", ctypes.c_long) for n in ("ixrss", "idrss", "isrss", "minflt", "majflt", "nswap", "inblock",
                                             "oublock", "msgsnd", "msgrcv", "nsignals", "nvcsw", "nivcsw")
    ]


class _Siginfo(ctypes.Structure):  # the first fields of siginfo_t, padded to its 128 bytes
    _fields_ = [("si_signo", ctypes.c_int), ("si_errno", ctypes.c_int), ("si_code", ctypes.c_int),
                ("rest", ctypes.c_byte * 116)]


class ExitFigures(NamedTuple):
    """The kernel's figures for an ended command, kept until it is reaped."""

    peak_rss_bytes: int | None  # ru_maxrss: the largest peak RSS of the command or a descendant it
    #                             reaped; None where it may be this process's (not above its own)
    cpu_secs: float       # ru_utime + ru_stime: its CPU and its reaped descendants', to the microsecond
    own_ticks: int        # utime + stime of its /proc/PID/stat (clock ticks)
    children_ticks: int   # cutime + cstime: what the descendants it reaped used (clock ticks)
    start_secs: float     # its start (CLOCK_BOOTTIME seconds): the middle of its start tick
    boot_now: float       # CLOCK_BOOTTIME when these were read
    real_now: float       # the real-time clock (the samples' timestamps' clock) then


_libc = None


def _waitid_nowait(pid: int) -> _Rusage | None:
    """The rusage of pid when it is an ended, unreaped child of this process; None otherwise
    (still running, not a child, or no waitid system call known for this machine)."""
    global _libc
    number = _SYS_WAITID.get(platform.machine().lower())
    if number is None:
        return None
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    info, usage = _Siginfo(), _Rusage()
    flags = os.WEXITED | os.WNOWAIT | os.WNOHANG
    rc = _libc.syscall(ctypes.c_long(number), ctypes.c_long(_P_PID), ctypes.c_long(pid),
                       ctypes.byref(info), ctypes.c_long(flags), ctypes.byref(usage))
    if rc != 0 or info.si_signo != signal.SIGCHLD:  # an error (ECHILD), or not ended yet
        return None
    return usage


def _own_peak_rss() -> int | None:
    """VmHWM of this process's image (bytes), None where it cannot be read."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def exit_figures(pid: int) -> ExitFigures | None:
    """The kernel's figures for pid if it is a zombie child of this process, else None. Reaps
    nothing: the caller (a Popen's wait(), the gpu-tracker command) still gets its status."""
    if pid <= 0 or pid == os.getpid():
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] != b"Z":
        return None
    usage = _waitid_nowait(pid)
    if usage is None:
        return None
    boot_now, real_now = time.clock_gettime(time.CLOCK_BOOTTIME), time.time()
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    start = (int(fields[19]) + 0.5) / os.sysconf("SC_CLK_TCK")
    cpu = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    peak = int(usage.ru_maxrss) * 1024
    own = _own_peak_rss()
    if own is None or peak <= own:  # maybe the image it was forked from
        peak = None
    return ExitFigures(peak, cpu, utime + stime, cutime + cstime, start, boot_now, real_now)


def _stat_fields(pid) -> list | None:
    """The fields of /proc/PID/stat after the command name (pid "self" too); None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def early_peak(pid: int, until_secs: float) -> int | None:
    """The largest VmHWM (bytes) of pid's own image, read while it runs in its first until_secs
    (every 0.5 ms for the first 20 ms, then at doubling spacing), or until it ends: a command
    shorter than the tracker's first samples (`python3 -c pass`: 10 ms) whose ru_maxrss may
    be this process's (see the module's words) still gets a peak of its own, a lower bound
    (the last reading before its end; the tracker's samples take over after). Readings before
    its exec (a vfork or fork child: this process's memory map, the same start of code and
    stack as ours) are left out. None when no reading was of its own image."""
    mine = _stat_fields("self")
    if mine is None:
        return None
    own_map = (mine[23], mine[25])  # startcode, startstack (fields 26 and 28)
    try:  # its end wakes the wait at once: the caller's reaping and last sample are not held up
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        return _read_peak(pid, own_map, until_secs, pidfd)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _read_peak(pid: int, own_map: tuple, until_secs: float, pidfd: int | None) -> int | None:
    best, t0, step = None, time.monotonic(), 0.0005
    waiter = None
    if pidfd is not None:
        waiter = select.poll()
        waiter.register(pidfd, select.POLLIN)
    while True:
        fields = _stat_fields(pid)
        if fields is None or fields[0] in (b"Z", b"X"):
            break
        if (fields[23], fields[25]) != own_map:
            try:
                with open(f"/proc/{pid}/status", "rb") as f:
                    for line in f:
                        if line.startswith(b"VmHWM:"):
                            hwm = int(line.split()[1]) * 1024
                            best = hwm if best is None or hwm > best else best
                            break
            except (OSError, ValueError, IndexError):
                break
        elapsed = time.monotonic() - t0
        if elapsed >= until_secs:
            break
        if elapsed >= 0.02:
            step = min(step * 2, 0.25)
        wait = min(step, max(until_secs - elapsed, 0.0))
        if waiter is None:
            time.sleep(wait)
        elif waiter.poll(max(1, int(wait * 1000))):
            break  # it ended
    return best

