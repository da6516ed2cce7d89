"""The scenario of sharers outside the job (issue 66 item 4), run by tests/e2e/test_sharers.py
and bench/sharers_lag.py: the tool wraps a job of 4 processes sharing one mapping (a file
mapped MAP_SHARED, or a SysV shm segment), each touching every page; a process outside the job
maps it, touches every page, holds it, unmaps it, for some rounds, and writes its own
timestamps of each map and unmap. run() returns what the judge needs: the kernel's PSS of the
job at rest before and in the middle of each hold, the outsider's timestamps, the samples."""
import json
import os
import subprocess
import time

PY = "/usr/bin/python3"

SHM = r"""
import ctypes, ctypes.util
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
def attach(shmid, size):  # attaches the segment and touches every page
    addr = libc.shmat(shmid, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "shmat")
    view = (ctypes.c_char * size).from_address(addr)
    for off in range(0, size, 4096):
        view[off]
    return addr
def touched(kind, what, size):  # the shared mapping, every page touched
    if kind == "shm":
        return attach(int(open(what).read()), size)
    view = mmap.mmap(os.open(what, os.O_RDONLY), size, prot=mmap.PROT_READ)
    for off in range(0, size, 4096):
        view[off]
    return view
"""

# The job: makes the segment (kind shm: its id into argv[2]) or maps the file argv[2], has 3
# children map it too; writes its 4 pids into argv[4] once all are mapped, holds for argv[5]
# seconds, removes the segment.
JOB = r"""
import mmap, os, sys, time
""" + SHM + r"""
kind, what, size, pids_file, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
if kind == "shm":
    shmid = libc.shmget(0, size, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    with open(what, "w") as f:
        f.write(str(shmid))
hold_r, hold_w = os.pipe()
def child():  # maps, then holds it until the parent closes the pipe
    pid = os.fork()
    if pid == 0:
        os.close(hold_w)
        m = touched(kind, what, size)
        os.read(hold_r, 1)
        os._exit(0)
    return pid
kids = [child() for _ in range(3)]
m = touched(kind, what, size)
time.sleep(0.5)
with open(pids_file + ".tmp", "w") as f:
    f.write(" ".join(map(str, [os.getpid()] + kids)))
os.rename(pids_file + ".tmp", pids_file)
time.sleep(secs)
os.close(hold_w)
for k in kids:
    os.waitpid(k, 0)
if kind == "shm":
    libc.shmctl(shmid, 0, None)  # IPC_RMID
"""

# The outsider: argv[4] rounds of map and touch, hold argv[5] s, unmap, wait argv[5] s; its own
# timestamps into argv[6], a line a round: map start, map end, unmap start, unmap end.
OUTSIDER = r"""
import mmap, os, sys, time
""" + SHM + r"""
kind, what, size, rounds, hold, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
with open(log, "w") as f:
    for _ in range(rounds):
        t0 = time.time()
        m = touched(kind, what, size)
        t1 = time.time()
        f.write(f"{t0} {t1} ")
        f.flush()
        time.sleep(hold)
        t2 = time.time()
        if kind == "shm":
            libc.shmdt(ctypes.c_void_p(m))
        else:
            m.close()
        t3 = time.time()
        f.write(f"{t2} {t3}\n")
        f.flush()
        time.sleep(hold)
"""


def kernel_pss(pids):
    """The Pss of the processes' smaps_rollup, summed (MiB)."""
    kib = 0
    for p in pids:
        with open(f"/proc/{p}/smaps_rollup") as f:
            kib += sum(int(l.split()[1]) for l in f if l.startswith("Pss:"))
    return kib / 1024


def run(tracker, tmp, env, kind="file", interval=0.1, rounds=2, hold=1.5, size_mib=200, args=(), timeout=60,
        steady=None, prefix=()):
    """Runs the scenario in the directory tmp with the tool tracker (its extra arguments args)
    at interval, under the command prefix (e.g. setpriv's, to run the tool and the job as
    another user; tmp must then be theirs to write). Returns (levels, times, samples, cpu): the kernel's PSS of the job (MiB) at rest
    before the outsider and in the middle of each of its holds; the outsider's timestamps, 4 a
    round; the samples' (timestamp_secs, pss_mib); and steady (a function of the tool's pid
    returning its CPU seconds: then cpu is (its CPU, wall seconds) from the job's mapping to the
    outsider's end, or over hold seconds of the steady job when rounds is 0), else None."""
    size = size_mib << 20
    what = os.path.join(tmp, "shared.bin" if kind == "file" else "shmid")
    if kind == "file":
        with open(what, "wb") as f:
            block = bytes(range(256)) * 4096
            for _ in range(size_mib):
                f.write(block)
    pids_file, log, out = (os.path.join(tmp, n) for n in ("pids", "outsider.log", "out.jsonl"))
    secs = 1.5 + max(rounds * 2, 1) * hold + 2 * interval + 4  # ends well after the outsider (its children exit then)
    job = subprocess.Popen([*prefix, tracker, "-i", str(interval), "-q", "-o", out, *args, "--", PY, "-c", JOB, kind, what,
                            str(size), pids_file, str(secs)], env=env, stderr=subprocess.PIPE, text=True)
    levels, cpu = [], None
    try:
        for _ in range(1200):
            if os.path.exists(pids_file) or job.poll() is not None:
                break
            time.sleep(0.05)
        assert os.path.exists(pids_file), job.stderr.read() if job.poll() is not None else "the job never mapped"
        pids = [int(x) for x in open(pids_file).read().split()]
        c0, w0 = (steady(job.pid), time.monotonic()) if steady else (0, 0)
        time.sleep(1.5)
        levels.append(kernel_pss(pids))
        outsider = subprocess.Popen([PY, "-c", OUTSIDER, kind, what, str(size), str(rounds), str(hold), log])
        for k in range(2 * rounds):  # once the outsider's log says the hold began, its middle
            while len(open(log).read().split() if os.path.exists(log) else []) < 2 * k + 2:
                assert outsider.poll() in (None, 0)
                time.sleep(0.02)
            time.sleep(hold / 2)
            levels.append(kernel_pss(pids))
        assert outsider.wait(timeout=timeout) == 0
        if rounds == 0:
            time.sleep(hold)
        if steady:
            cpu = (steady(job.pid) - c0, time.monotonic() - w0)
        _, err = job.communicate(timeout=timeout)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode == 0, err
    times = [float(x) for x in open(log).read().split()]
    samples = [(x["timestamp_secs"], x["process"]["pss_mib"]) for x in map(json.loads, open(out))
               if x.get("process") and x["process"].get("pss_mib") is not None]
    return levels, times, samples, cpu
