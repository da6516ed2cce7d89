"""The helpers of test_rust_smoke.py (the Rust tool's tests/smoke.rs against ours): its
collect_lines, run_to_exit and run_for (the tracker's stderr read as the Rust tests read the
Rust tool's), serde_json's reading of a value (a missing key is null, as_u64 takes integers
only), and the CSV cells parsed as Rust parses them."""
import json
import os
import queue
import re
import subprocess
import threading
import time

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env

RS = ["-f", "json-rs"]
TIMEOUT = 10 * TIMEOUT_SCALE          # the Rust TIMEOUT (10 s) per line: a guard, never asserted
OUTPUT_TEST_WAIT = 3                  # the Rust OUTPUT_TEST_WAIT: how long run_for lets it run

EXPECTED_HEADER = ("timestamp,"
                   "system_processes,system_utime,system_stime,system_cpu_usage,"
                   "system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,"
                   "system_memory_cached_mib,system_memory_active_mib,system_memory_inactive_mib,"
                   "system_disk_read_bytes,system_disk_write_bytes,"
                   "system_disk_space_total_gb,system_disk_space_used_gb,system_disk_space_free_gb,"
                   "system_net_recv_bytes,system_net_sent_bytes,"
                   "system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,"
                   "process_pid,process_children,process_utime,process_stime,process_cpu_usage,"
                   "process_memory_mib,process_disk_read_bytes,process_disk_write_bytes,"
                   "process_gpu_usage,process_gpu_vram_mib,process_gpu_utilized")
# the four columns ours adds after the 32 with --csv-energy (TRACKER_CSV_ENERGY, [tracker] csv_energy)
ENERGY_COLUMNS = "system_energy_joules,system_energy_method,process_energy_joules,process_energy_method"


# ---- the Rust helpers ---------------------------------------------------------------------------


def spawn(args, env=None, stderr=subprocess.PIPE):
    return subprocess.Popen([TRACKER] + list(args), stdout=subprocess.DEVNULL, stderr=stderr, text=True,
                            env=env or tracker_env())


def collect_lines(args, n, env=None):
    """Spawns the tracker with args, collects up to n stderr lines (each within TIMEOUT), then
    kills it (SIGKILL, as Rust's child.kill()). Returns however many lines arrived."""
    p = spawn(args, env)
    q = queue.Queue()

    def reader():
        for line in p.stderr:
            q.put(line.rstrip("\n"))
        q.put(None)

    threading.Thread(target=reader, daemon=True).start()
    lines = []
    try:
        while len(lines) < n:
            line = q.get(timeout=TIMEOUT)
            if line is None:
                break
            lines.append(line)
    except queue.Empty:
        pass
    finally:
        p.kill()
        p.wait()
    return lines


def run_to_exit(args, timeout=8):
    """The Rust run_to_exit: the tracker runs to its own end; returns its exit status."""
    p = subprocess.run([TRACKER] + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=tracker_env(), timeout=timeout * TIMEOUT_SCALE)
    return p.returncode


def run_for(args, env=None, wait=OUTPUT_TEST_WAIT):
    """The Rust run_for / run_for_with_env: lets it run `wait` seconds, kills it, returns the
    non-empty stderr lines. Ours also asserts that it was still running then: a tracker that
    refused its arguments prints no samples either, and must not pass for a quiet one."""
    p = spawn(args, env)
    time.sleep(wait)
    alive = p.poll() is None
    p.kill()
    _, err = p.communicate(timeout=TIMEOUT)
    assert alive, f"the tracker ended early (status {p.returncode}): {err}"
    return [l for l in err.splitlines() if l]


def sample(args=(), n=1, env=None):
    """n json-rs samples (asserting that n came), parsed."""
    lines = collect_lines(RS + ["--interval", "1"] + list(args), n, env)
    assert len(lines) == n, f"expected {n} JSON line(s), got {lines}"
    return [json.loads(l) for l in lines]


def at(v, *path):
    """serde_json's v["a"]["b"]: None where a key or index is missing (Value::Null)."""
    for k in path:
        if isinstance(k, int):
            v = v[k] if isinstance(v, list) and 0 <= k < len(v) else None
        else:
            v = v.get(k) if isinstance(v, dict) else None
    return v


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_u64(x):
    """serde's as_u64(): a JSON integer >= 0 (1.0 is not one)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def csv_rows(n, args=()):
    lines = collect_lines(["--interval", "1", "--format", "csv"] + list(args), n)
    assert len(lines) >= n, f"expected header + {n - 1} row(s), got {lines}"
    return lines


def csv_col(lines, row=1):
    headers = lines[0].split(",")
    cells = lines[row].split(",")

    def col(name):
        assert name in headers, f"column '{name}' not found in CSV header"
        return cells[headers.index(name)]
    return col


def csv_int(s, name):
    """Rust's parse::<u64>/<u32>: digits only."""
    assert re.fullmatch(r"\d+", s), f"{name}: not an unsigned integer: {s!r}"
    return int(s)


def csv_decimal(s, name):
    """A non-negative number where Rust parses u64 but ours writes decimals, as the Python tracker
    0.5 does (timestamp with 3 decimals, MiB with decimals): docs/contracts.md §3."""
    assert re.fullmatch(r"\d+(\.\d+)?", s), f"{name}: not a non-negative number: {s!r}"
    return float(s)


def csv_f64(s, name):
    """Rust's parse::<f64>()."""
    try:
        return float(s)
    except ValueError:
        raise AssertionError(f"{name}: not f64: {s!r}")


def ncpus():
    return os.cpu_count() or 1
