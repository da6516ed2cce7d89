"""0.5's tracker_procfs / tracker_psutil (answered by the C library's rt_counters) against the
kernel's own accounting: CPU seconds of this process and of children that run, exit between
two readings, or wait as zombies, against os.times() and wait4's rusage; bytes written with
fsync and read with O_DIRECT against /proc/self/io; fresh PSS; the machine's figures against
/proc read here (the test is the judge, the package reads nothing itself); 0.5's key set and
types."""

import json
import mmap
import os
import time

import pytest

from resource_tracker import tracker_procfs, tracker_psutil
from resource_tracker._tracker_choice import (
    get_tracker_implementation,
    is_procfs_available,
    is_psutil_available,
)

TICK = 1.0 / os.sysconf("SC_CLK_TCK")

PROCESS_KEYS = {
    "timestamp": float, "pid": int, "children": int, "utime": float, "stime": float,
    "memory_mib": float, "disk_read_bytes": int, "disk_write_bytes": int,
    "gpu_usage": float, "gpu_vram_mib": float, "gpu_utilized": int,
}
SYSTEM_KEYS = {
    "timestamp": float, "processes": int, "utime": float, "stime": float,
    "memory_free_mib": float, "memory_used_mib": float, "memory_buffers_mib": float,
    "memory_cached_mib": float, "memory_active_mib": float, "memory_inactive_mib": float,
    "disk_stats": dict, "disk_spaces": dict, "net_recv_bytes": int, "net_sent_bytes": int,
    "gpu_usage": float, "gpu_vram_mib": float, "gpu_utilized": int,
}


def tree_cpu(children=True):
    s = tracker_procfs.get_process_stats(os.getpid(), children)
    return s["utime"] + s["stime"], s["children"]


def others():
    """What the tree holds beside this process and the children a test starts (the test
    session's own helpers, such as the Keeper stand-in, idle): their CPU seconds (the tree's
    total less times(2)'s own + reaped) and their count."""
    total, kids = tree_cpu()
    return total - kernel_cpu(), kids


def kernel_cpu():
    """This process's CPU seconds as times(2) counts them: its own plus its reaped children's."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def burn(secs):
    t0 = time.process_time()
    x = 0
    while time.process_time() - t0 < secs:
        x += sum(range(1000))
    return x


def burning_child(secs):
    """Forks a child that burns secs of CPU and exits (a zombie until reaped)."""
    pid = os.fork()
    if pid == 0:
        try:
            burn(secs)
        finally:
            os._exit(0)
    return pid


def rusage_secs(ru):
    return ru.ru_utime + ru.ru_stime


def test_keys_types_and_the_same_functions():
    p = tracker_procfs.get_process_stats(os.getpid())
    assert {k: type(v) for k, v in p.items()} == PROCESS_KEYS
    assert p["pid"] == os.getpid() and p["timestamp"] == pytest.approx(time.time(), abs=60)
    s = tracker_procfs.get_system_stats()
    assert {k: type(v) for k, v in s.items()} == SYSTEM_KEYS
    for disk, d in s["disk_stats"].items():
        assert set(d) == {"read_bytes", "write_bytes"} and all(isinstance(v, int) for v in d.values())
    for mount, m in s["disk_spaces"].items():
        assert set(m) == {"total", "used", "free"} and m["used"] + m["free"] == m["total"]
    assert tracker_psutil.get_process_stats is tracker_procfs.get_process_stats
    assert tracker_psutil.get_system_stats is tracker_procfs.get_system_stats
    assert is_procfs_available() and isinstance(is_psutil_available(), bool)
    assert get_tracker_implementation() == (tracker_procfs.get_process_stats, tracker_procfs.get_system_stats)


def test_own_cpu_against_times():
    burn(0.05)
    own, children = tree_cpu(children=False)
    t = os.times()
    assert children is None
    # counted in whole ticks: the same counters, moments apart (the seconds are sums of floats,
    # 2 ticks once read as 0.020000000000010232 > 2 * 0.01)
    assert round(abs(own - (t.user + t.system)) / TICK) <= 2
    extra, _ = others()
    burn(0.05)
    total, _ = tree_cpu()
    assert round(abs(total - kernel_cpu() - extra) / TICK) <= 2


def test_zombie_counted_once_then_reaped():
    extra, base = others()
    before, _ = tree_cpu()
    pid = burning_child(0.3)
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
        zombie, kids = tree_cpu()
        assert kids == base + 1  # a zombie is still a descendant
    finally:
        _, _, ru = os.wait4(pid, 0)
    reaped, kids = tree_cpu()
    assert kids == base
    child = rusage_secs(ru)
    assert child >= 0.29
    assert abs((zombie - before) - child) <= 0.05  # its time once, from its own stat
    assert abs(reaped - zombie) <= 0.05  # moved to our cutime, not counted twice
    assert round(abs(reaped - kernel_cpu() - extra) / TICK) <= 2  # in whole ticks, as above


def test_child_exits_between_calls():
    extra, base = others()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        burn(0.2)
        os.write(ready_w, b"x")
        os.read(go_r, 1)  # alive until the parent has read the tree
        os._exit(0)
    try:
        assert os.read(ready_r, 1) == b"x"
        running, kids = tree_cpu()
    finally:
        os.write(go_w, b"x")
        _, _, ru = os.wait4(pid, 0)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)
    after, kids_after = tree_cpu()
    assert kids == base + 1 and kids_after == base
    assert after >= running - 2 * TICK  # the total does not drop when a child leaves
    assert abs(after - kernel_cpu() - extra) <= 2 * TICK
    assert rusage_secs(ru) >= 0.19


def proc_self_io():
    with open("/proc/self/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


def on_tmpfs(path):
    best, fstype = "", None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            mp, fs = parts[4], parts[parts.index("-") + 1]
            if (path == mp or path.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best):
                best, fstype = mp, fs
    return fstype in ("tmpfs", "ramfs")


def test_io_against_proc_self_io(tmp_path):
    path = str(tmp_path / "block")
    size = 4 << 20
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.write(fd, os.urandom(size))
        os.fsync(fd)
    finally:
        os.close(fd)
    got = tracker_procfs.get_process_stats(os.getpid(), children=False)
    kernel = proc_self_io()
    assert got["disk_write_bytes"] == kernel["write_bytes"]
    storage = not on_tmpfs(os.path.realpath(path))
    if storage:
        assert got["disk_write_bytes"] >= size
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        pytest.skip("no O_DIRECT on this file system")
    buf = mmap.mmap(-1, size)  # page-aligned, as O_DIRECT wants
    try:
        before = tracker_procfs.get_process_stats(os.getpid(), children=False)["disk_read_bytes"]
        n = os.readv(fd, [buf])
        after = tracker_procfs.get_process_stats(os.getpid(), children=False)
        assert after["disk_read_bytes"] == proc_self_io()["read_bytes"]
        assert n == size and after["disk_read_bytes"] - before == size
    finally:
        os.close(fd)
        buf.close()


def _child_io_figures(path):
    """In a process with no other children (pytest's own, a stand-in server started by a
    fixture, write bytes of their own that a reading of pytest's tree would count): (before,
    zombie, reaped, own) write bytes around a child that writes 1 MiB and exits."""
    before = tracker_procfs.get_process_stats(os.getpid())["disk_write_bytes"]
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT)
            os.write(fd, b"y" * (1 << 20))
            os.fsync(fd)
            os.close(fd)
        finally:
            os._exit(0)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    zombie = tracker_procfs.get_process_stats(os.getpid())
    os.waitpid(pid, 0)
    reaped = tracker_procfs.get_process_stats(os.getpid())
    own = proc_self_io()["write_bytes"]
    return before, zombie["disk_write_bytes"], reaped["disk_write_bytes"], own


def test_child_io_in_the_tree(tmp_path):
    path = str(tmp_path / "child")
    rfd, wfd = os.pipe()
    runner = os.fork()
    if runner == 0:  # a fresh process: its only child is the writer
        status = 1
        try:
            os.close(rfd)
            os.write(wfd, json.dumps(_child_io_figures(path)).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        got = f.read()
    _, status = os.waitpid(runner, 0)
    assert status == 0 and got, "the measuring process failed"
    before, zombie, reaped, own = json.loads(got)
    assert reaped == own  # the reaped child's bytes folded into the process's own
    assert zombie == reaped  # counted once either way
    if not on_tmpfs(os.path.realpath(path)):
        assert reaped - before >= 1 << 20


def pss_mib():
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024


def test_memory_is_fresh():
    first = tracker_procfs.get_process_stats(os.getpid(), children=False)["memory_mib"]
    big = bytearray(64 << 20)
    now = tracker_procfs.get_process_stats(os.getpid(), children=False)["memory_mib"]
    assert now - first >= 60
    assert abs(now - pss_mib()) <= 2  # the kernel's own figure, a moment later
    del big


def test_missing_pid_gives_zeros():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # reaped: the pid is free now
    s = tracker_procfs.get_process_stats(pid)
    assert s["pid"] == pid and s["children"] == 0 and s["utime"] == 0.0 and s["memory_mib"] == 0.0


def proc_stat_cpu():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1]) * TICK, v[2] * TICK


def meminfo_mib():
    with open("/proc/meminfo") as f:
        m = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in f}
    return m


def test_system_against_proc():
    u0, s0 = proc_stat_cpu()
    got = tracker_procfs.get_system_stats()
    u1, s1 = proc_stat_cpu()
    eps = 1e-6  # the same ticks, divided apart
    assert u0 - eps <= got["utime"] <= u1 + eps and s0 - eps <= got["stime"] <= s1 + eps
    pids = sum(1 for e in os.listdir("/proc") if e.isdigit())
    assert abs(got["processes"] - pids) <= 5
    m = meminfo_mib()
    assert got["memory_used_mib"] == pytest.approx(m["MemTotal"] - m["MemAvailable"], abs=20)
    assert got["memory_cached_mib"] == pytest.approx(m["Cached"] + m.get("SReclaimable", 0), abs=20)
    assert got["memory_buffers_mib"] == pytest.approx(m["Buffers"], abs=5)
    assert got["memory_free_mib"] == pytest.approx(m["MemFree"], abs=50)
    with open("/proc/net/dev") as f:
        rx = sum(int(line.split(":")[1].split()[0]) for line in list(f)[2:] if line.split(":")[0].strip() != "lo")
    assert got["net_recv_bytes"] <= rx <= got["net_recv_bytes"] * 1.1 + 1_000_000
