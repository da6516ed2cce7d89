"""The tool as a user drives it: help, version, usage and config errors (exit 2, nothing
started), output destinations, formats, signals and the final sample."""
import csv
import io
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, Tracker, run, tracker_env

CSV_HEADER = ("timestamp,system_processes,system_utime,system_stime,system_cpu_usage,"
              "system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,system_memory_cached_mib,"
              "system_memory_active_mib,system_memory_inactive_mib,system_disk_read_bytes,system_disk_write_bytes,"
              "system_disk_space_total_gb,system_disk_space_used_gb,system_disk_space_free_gb,"
              "system_net_recv_bytes,system_net_sent_bytes,system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,"
              "process_pid,process_children,process_utime,process_stime,process_cpu_usage,process_memory_mib,"
              "process_disk_read_bytes,process_disk_write_bytes,process_gpu_usage,process_gpu_vram_mib,"
              "process_gpu_utilized")
# the four columns --csv-energy (TRACKER_CSV_ENERGY, [tracker] csv_energy) adds after the 32
ENERGY_COLUMNS = "system_energy_joules,system_energy_method,process_energy_joules,process_energy_method"


def test_help_and_version():
    r = run(["--help"])
    assert r.returncode == 0
    for flag in ("--pid", "--interval", "--config", "--format", "--output", "--quiet", "--view", "--job-name", "--tag",
                 "--container-image", "--cgroup", "--wait-all", "--prometheus", "--prometheus-textfile", "--otlp",
                 "--otlp-interval", "OTEL_EXPORTER_OTLP_ENDPOINT", "summary", "recommend", "report", "info"):
        assert flag in r.stdout
    r = run(["-V"])
    assert r.returncode == 0 and r.stdout.startswith("resource-tracker 0.")


def assert_usage_error(args, words, cwd=None, env=None):
    r = run(args, cwd=cwd, env=env or tracker_env())
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert r.stdout == ""
    return lines[0]


def test_usage_errors_exit_2_and_start_nothing(tmp_path):
    out = tmp_path / "out.jsonl"
    assert_usage_error(["-i", "0", "-o", str(out)], ["--interval", "'0'"])
    assert_usage_error(["-i", "1e9", "-o", str(out)], ["--interval"])
    assert_usage_error(["-f", "yaml", "-o", str(out)], ["--format", "yaml"])
    assert_usage_error(["--bogus", "-o", str(out)], ["unknown option", "--bogus"])
    assert_usage_error(["-p", "abc", "-o", str(out)], ["--pid", "abc"])
    assert_usage_error(["--tag", "x", "-o", str(out)], ["--tag", "KEY=VALUE"])
    assert_usage_error(["--cgroup", "on", "-o", str(out), "--", "true"], ["--cgroup", "'on'", "auto or off"])
    assert_usage_error(["--wait-all", "-o", str(out)], ["--wait-all", "needs a command"])
    assert not out.exists()


def test_export_settings_checked_before_anything_starts(tmp_path):
    """Bad export values, a textfile directory that is not one, an OTEL_* variable that cannot be
    read, and a port already taken: one line, exit 2, and the command never ran."""
    ran = tmp_path / "ran"
    cmd = ["--", "sh", "-c", f"touch {ran}"]
    assert_usage_error(["--prometheus", "host:80"] + cmd, ["--prometheus", "'host:80'", "ADDR:PORT"])
    assert_usage_error(["--prometheus", "127.0.0.1:70000"] + cmd, ["--prometheus"])
    assert_usage_error(["--prometheus-textfile", str(tmp_path / "none")] + cmd,
                       ["--prometheus-textfile", "No such file or directory"])
    (tmp_path / "file").write_text("")
    assert_usage_error(["--prometheus-textfile", str(tmp_path / "file")] + cmd, ["not a directory"])
    assert_usage_error(["--otlp", "127.0.0.1:4318"] + cmd, ["--otlp", "not an http:// or https:// URL"])
    assert_usage_error(["--otlp-interval", "5"] + cmd, ["--otlp-interval needs --otlp"])
    env = tracker_env()
    env["OTEL_EXPORTER_OTLP_HEADERS"] = "Authorization: Bearer sekrit"
    line = assert_usage_error(["--otlp", "http://127.0.0.1:9"] + cmd,
                              ["OTEL_EXPORTER_OTLP_HEADERS", "member 1 is not KEY=VALUE"], env=env)
    assert "sekrit" not in line  # a header's value may be a credential: never shown
    env["OTEL_EXPORTER_OTLP_HEADERS"] = "a=1"
    env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
    assert_usage_error(["--otlp", "http://127.0.0.1:9"] + cmd, ["OTEL_EXPORTER_OTLP_PROTOCOL", "'grpc'", "http/json"],
                       env=env)
    cfg = tmp_path / "rt.toml"
    cfg.write_text("[export]\nprometheus = 9101\n")
    assert_usage_error(["-c", str(cfg)] + cmd, [f"{cfg}:2:1: [export] prometheus must be"])
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert_usage_error(["--prometheus", f"127.0.0.1:{port}"] + cmd,
                           ["--prometheus", f"port {port}", "Address already in use"])
    assert not ran.exists()


def test_otel_environment_of_the_job_never_stops_it(tmp_path):
    """OTEL_* variables set for the wrapped program (a gRPC collector, a value we cannot read) do
    not stop the job: OTLP is off with one warning naming the variable, the command runs and its
    status passes through; without any endpoint they are not even looked at."""
    ran = tmp_path / "ran"
    env = tracker_env()
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    r = run(["-q", "--", "sh", "-c", f"touch {ran}; exit 4"], env=env)
    assert r.returncode == 4, r.stderr
    assert ran.exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "warning: not pushing OTLP metrics: OTEL_EXPORTER_OTLP_PROTOCOL" in lines[0], r.stderr
    env = tracker_env()
    env.update(OTEL_METRIC_EXPORT_INTERVAL="abc", OTEL_EXPORTER_OTLP_HEADERS="broken")
    r = run(["-q", "--", "sh", "-c", "exit 6"], env=env)
    assert r.returncode == 6 and r.stderr == "", r.stderr


def test_missing_pid_is_usage_error(tmp_path):
    p = subprocess.Popen(["true"])
    p.wait()  # a pid that existed and is gone
    assert_usage_error(["-p", str(p.pid), "-o", str(tmp_path / "o")], ["no process", str(p.pid)])
    assert not (tmp_path / "o").exists()


def test_unopenable_output_is_usage_error(tmp_path):
    line = assert_usage_error(["-o", str(tmp_path / "no" / "such" / "dir.jsonl")], ["--output", "cannot open"])
    assert "No such file or directory" in line


def test_config_errors_name_file_line_col(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[tracker]\ninterval_secs = 1\nformat = \"xml\"\n")
    line = assert_usage_error(["-c", str(cfg), "-o", str(tmp_path / "o")], [f"{cfg}:3:1:", "format"])
    assert not (tmp_path / "o").exists()
    cfg.write_text("[job]\nname = 'a'\nname = 'b'\n")
    assert_usage_error(["-c", str(cfg)], [f"{cfg}:3:", "duplicate key"])
    assert_usage_error(["-c", str(tmp_path / "missing.toml")], ["missing.toml", "cannot read"])
    cfg.write_text("[tracker]\nquiet = true\ncgroup = 'v2'\n")
    assert_usage_error(["-c", str(cfg), "--", "true"], [f"{cfg}:3:1:", "cgroup", '"auto" or "off"'])
    cfg.write_text("[tracker]\nwait_all = 1\n")
    assert_usage_error(["-c", str(cfg), "--", "true"], [f"{cfg}:2:1:", "wait_all", "true or false"])
    # the default file in the working directory is read too
    (tmp_path / "resource-tracker.toml").write_text("[tracker]\nquiet = 'no'\n")
    assert_usage_error([], ["resource-tracker.toml:2:1:", "quiet"], cwd=tmp_path)


def test_config_unknown_keys_warn_and_the_rest_is_read(tmp_path):
    """An unknown key or table is one warning line naming FILE:LINE:COL and what is known (the
    Rust tool ignores them: a config written for a newer version must still load); the known
    keys around it are read, the job runs and its exit status is the command's."""
    cfg = tmp_path / "newer.toml"
    out = tmp_path / "o.csv"
    cfg.write_text(f"[tracker]\nformat = 'csv'\nintervall = 2\noutput = '{out}'\n[sentinel]\nbatch = 3\n")
    r = run(["-c", str(cfg), "--", "sh", "-c", "exit 3"], env=tracker_env())
    assert r.returncode == 3, r.stderr
    warnings = [line for line in r.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 2, r.stderr
    assert f"{cfg}:3:1: unknown key 'intervall' in [tracker] left out (known keys: interval_secs," in warnings[0]
    assert f"{cfg}:5:1: unknown table 'sentinel' left out (known tables:" in warnings[1]
    assert out.read_text().startswith("timestamp,system_processes,")  # format and output were read
    # a malformed file and a missing -c file stay errors: nothing would be known of them
    cfg.write_text("[tracker\n")
    assert_usage_error(["-c", str(cfg), "--", "true"], [f"{cfg}:1:9:", "expected ']'"])


def test_rust_tool_flags_and_variables(tmp_path):
    """-n NAME, TRACKER_OUTPUT and TRACKER_QUIET, as the Rust tool's users set them."""
    out = tmp_path / "env.jsonl"
    env = tracker_env()
    env.update(TRACKER_OUTPUT=str(out), TRACKER_QUIET="true")
    r = run(["-n", "nightly", "-i", "0.2", "--", "sleep", "0.3"], env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr  # quiet: nothing on the terminal
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and all(s["job_name"] == "nightly" for s in lines)
    env.update(TRACKER_QUIET="1")  # clap takes only true/false; 1 is what env files hold
    assert run(["-i", "0.2", "--", "true"], env=env).returncode == 0
    env.update(TRACKER_QUIET="maybe")
    assert_usage_error(["--", "true"], ["TRACKER_QUIET", "'maybe'"], env=env)


def test_subcommands_name_a_missing_file(tmp_path):
    for sub in ("summary", "recommend", "report"):
        r = run([sub, str(tmp_path / "nothing.jsonl")] + (["-o", str(tmp_path / "r.html")] if sub == "report" else []))
        assert r.returncode == 2 and "nothing.jsonl" in r.stderr, (sub, r.stderr)


@pytest.mark.parametrize("typed,meant", [("summery", "summary"), ("reprot", "report"), ("recomend", "recommend"),
                                         ("histroy", "history"), ("infos", "info")])
def test_a_mistyped_subcommand_is_named(tmp_path, typed, meant):
    """A word a typo away from a subcommand, found nowhere in PATH: exit 2 with "did you mean",
    nothing tracked; a command of that name in PATH runs as any command does."""
    r = run([typed, "runs.jsonl"], cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"did you mean 'resource-tracker {meant}'?" in r.stderr and f"'{typed}'" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []
    tool = tmp_path / "bin" / typed
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nexit 5\n")
    tool.chmod(0o755)
    env = tracker_env(PATH=f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    mine = run(["-q", typed], env=env, cwd=tmp_path)
    assert mine.returncode == 5 and mine.stderr == "", mine.stderr


def test_a_word_far_from_every_subcommand_is_a_command():
    r = run(["-q", "no-such-command-here"])
    assert r.returncode == 127 and "did you mean" not in r.stderr, r.stderr


@pytest.mark.release
@pytest.mark.serial
def test_json_lines_to_stdout_and_sigint_final_sample(tracker_factory):
    t = tracker_factory(["-i", "0.2", "-o", "-", "--job-name", "e2e"])
    first = t.next_sample()
    second = t.next_sample()
    rc, err = t.stop(signal.SIGINT)
    assert rc == 0, err
    samples = t.samples()
    assert len(samples) >= 3  # the final sample for the partial interval
    version = run(["--version"]).stdout.split()[-1]  # the first key of every line (0.17)
    for s in samples:
        assert set(s) == {"resource-tracker-version", "timestamp_secs", "interval_secs", "job_name", "cpu", "memory",
                          "network", "disk", "gpu", "process", "pressure", "cgroup", "energy"}
        assert next(iter(s)) == "resource-tracker-version" and s["resource-tracker-version"] == version
        # the whole machine: the group the tracker runs in (none in the root group everywhere)
        assert s["cgroup"] is None or (s["cgroup"]["own"] is False and s["cgroup"]["exclusive"] is False)
        if os.path.exists("/proc/pressure/cpu"):  # the machine's pressure stall information
            for r in ("cpu", "memory", "io"):
                assert set(s["pressure"][r]) == {"some_avg10", "full_avg10", "some_pct", "full_pct",
                                                 "some_total_usec", "full_total_usec"}
        assert s["job_name"] == "e2e"
        assert s["gpu"] == [] and s["process"] is None
        assert set(s["cpu"]) == {"utilization_pct", "per_core_pct", "utime_secs", "stime_secs", "process_count",
                                 "process_cores_used", "process_child_count", "all_process_count"}
        assert s["cpu"]["all_process_count"] >= 1  # every process, the tracker among them
        assert s["cpu"]["process_cores_used"] is None and s["cpu"]["process_child_count"] is None
        assert set(s["memory"]) == {"total_mib", "free_mib", "available_mib", "used_mib", "used_pct", "buffers_mib",
                                    "cached_mib", "active_mib", "inactive_mib", "swap_total_mib", "swap_used_mib",
                                    "swap_used_pct"}
        for n in s["network"]:
            assert set(n) == {"interface", "mac_address", "driver", "operstate", "speed_mbps", "mtu",
                              "rx_bytes_per_sec", "tx_bytes_per_sec", "rx_bytes_total", "tx_bytes_total"}
            assert n["interface"] != "lo"
            assert n["rx_bytes_per_sec"] >= 0 and n["tx_bytes_per_sec"] >= 0
        # the devices of /sys/block but loop and ram, by name (as the Rust tool lists them), the
        # virtual ones (under /sys/devices/virtual: zram, dm, md) flagged
        assert [d["device"] for d in s["disk"]] == sorted(d["device"] for d in s["disk"])
        if os.path.isdir("/sys/block"):
            listed = {n.replace("!", "/") for n in os.listdir("/sys/block") if not n.startswith(("loop", "ram"))}
            assert {d["device"] for d in s["disk"]} <= listed
        for d in s["disk"]:
            assert set(d) == {"device", "model", "vendor", "serial", "device_type", "capacity_bytes",
                              "read_bytes_per_sec", "write_bytes_per_sec", "read_bytes_total", "write_bytes_total",
                              "is_virtual", "mounts"}
            link = os.path.realpath(f"/sys/block/{d['device'].replace('/', '!')}")
            assert d["is_virtual"] == ("/devices/virtual/" in link)
            for m in d["mounts"]:
                assert set(m) == {"mount_point", "filesystem", "total_bytes", "used_bytes", "available_bytes",
                                  "used_pct"}
    assert samples[-1]["interval_secs"] <= 0.2 + 0.05 * TIMEOUT_SCALE  # a late tick on a slow build
    assert first["timestamp_secs"] < second["timestamp_secs"] <= samples[-1]["timestamp_secs"]
    assert "warning" not in err


def test_sigterm_exits_0_with_final_sample(tmp_path):
    out = tmp_path / "s.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "5", "-o", str(out)], env=tracker_env(), stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 1  # only the final sample: the first full interval had not passed
    assert json.loads(lines[0])["interval_secs"] < 5


def test_default_output_is_stderr():
    p = subprocess.Popen([TRACKER, "-i", "0.1"], env=tracker_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stderr.readline()
    p.terminate()
    out, _ = p.communicate(timeout=10)
    assert json.loads(line)["memory"]["total_mib"] > 0
    assert out == ""


def test_quiet_writes_nothing():
    p = subprocess.Popen([TRACKER, "-i", "0.05", "-q"], env=tracker_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.terminate()
    out, err = p.communicate(timeout=10)
    assert p.returncode == 0 and out == "" and err == ""


@pytest.mark.parametrize("energy", ["no", "flag", "env", "config"])
def test_csv_header_once_and_columns(tmp_path, energy):
    """The 32 columns the Python and Rust trackers write, exactly; the four energy columns after
    them only when asked, by the flag, the variable or the config key (each row as many cells)."""
    out = tmp_path / "s.csv"
    args, env = [], tracker_env()
    if energy == "flag":
        args = ["--csv-energy"]
    elif energy == "env":
        env["TRACKER_CSV_ENERGY"] = "1"
    elif energy == "config":
        (tmp_path / "rt.toml").write_text("[tracker]\ncsv_energy = true\n")
        args = ["-c", str(tmp_path / "rt.toml")]
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out)] + args, env=env)
    deadline = time.monotonic() + 30 * TIMEOUT_SCALE  # 4 rows and the header (about 0.5 s)
    while (not out.exists() or out.read_text().count("\n") < 5) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.terminate()
    assert p.wait(timeout=10) == 0
    text = out.read_text()
    lines = text.splitlines()
    assert lines[0] == (CSV_HEADER if energy == "no" else CSV_HEADER + "," + ENERGY_COLUMNS)
    assert sum(1 for l in lines if l.startswith("timestamp,")) == 1
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) >= 4
    for i, r in enumerate(rows):
        assert len(r) == (32 if energy == "no" else 36) and None not in r
        assert r["process_pid"] == "" and r["process_memory_mib"] == ""
        assert re.fullmatch(r"\d{10}\.\d{3}", r["timestamp"]), r["timestamp"]  # 3 decimals, always
        # the last row's partial interval (SIGTERM came right after a sample) may be too short
        # for a tick of /proc/stat: its busy share is null then, an empty cell
        if not (i == len(rows) - 1 and r["system_cpu_usage"] == ""):
            assert float(r["system_cpu_usage"]) >= 0
        assert int(r["system_disk_write_bytes"]) >= 0 and int(r["system_net_recv_bytes"]) >= 0
        assert float(r["system_memory_free_mib"]) > 0


def test_config_file_and_precedence(tmp_path):
    cfg = tmp_path / "rt.toml"
    cfg.write_text("[job]\nname = 'from-file'\nteam = 'file-team'\n[tracker]\ninterval_secs = 0.1\nformat = 'json'\n"
                   f"output = '{tmp_path / 'file-out.jsonl'}'\n")
    env = tracker_env(TRACKER_JOB_NAME="from-env")
    p = subprocess.Popen([TRACKER, "-c", str(cfg)], env=env)
    time.sleep(0.45 * TIMEOUT_SCALE)  # 3 samples at 0.1 s; slower under the sanitizers, valgrind
    p.terminate()
    assert p.wait(timeout=10) == 0
    lines = (tmp_path / "file-out.jsonl").read_text().splitlines()
    assert len(lines) >= 3  # interval 0.1 from the file
    assert json.loads(lines[0])["job_name"] == "from-env"  # environment over file
    p = subprocess.Popen([TRACKER, "-c", str(cfg), "--job-name", "from-cli", "-o", str(tmp_path / "cli.jsonl")],
                         env=env)
    time.sleep(0.35)
    p.terminate()
    assert p.wait(timeout=10) == 0
    assert json.loads((tmp_path / "cli.jsonl").read_text().splitlines()[0])["job_name"] == "from-cli"


def test_closed_pipe_ends_tracker():
    """`resource-tracker -o - | head -1`: when the reader goes, the tracker stops quietly."""
    p = subprocess.run(f"{TRACKER} -i 0.05 -o - | head -n 1", shell=True, capture_output=True, text=True,
                       timeout=20, env=tracker_env())
    assert p.returncode == 0
    assert json.loads(p.stdout)["cpu"]["per_core_pct"] is not None
    assert p.stderr == ""


def test_output_is_flushed_per_sample(tmp_path):
    """Each sample reaches the file as soon as it is taken (tail -f sees it)."""
    out = tmp_path / "live.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out)], env=tracker_env())
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 2):
            time.sleep(0.05)
        text = out.read_text()
        assert text.count("\n") >= 2 and text.endswith("\n")
        for l in text.splitlines():
            json.loads(l)
        assert p.poll() is None  # still running
    finally:
        p.terminate()
        p.wait(timeout=10)


def test_docs_cover_every_option():
    """--help, the man page and the docs (README.md and docs/*.md) name the same options."""
    import re
    from conftest import REPO
    help_text = run(["--help"]).stdout
    flags = set(re.findall(r"--[a-z][a-z-]+", help_text))
    assert len(flags) >= 20
    with open(os.path.join(REPO, "docs", "resource-tracker.1")) as f:
        man = f.read().replace("\\-", "-")
    import glob
    docs = ""
    for name in [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))):
        with open(name) as f:
            docs += f.read()
    for flag in flags:
        assert flag in man, f"{flag} missing from the man page"
        assert flag in docs, f"{flag} missing from README.md and docs/*.md"
    # the man page's heading names the version the tool says it is
    version = run(["--version"]).stdout.split()[-1]
    assert re.search(r'^\.TH RESOURCE-TRACKER 1 "[^"]*" "resource-tracker ' + re.escape(version) + '"', man, re.M), version


def test_library_settings_come_from_the_environment(tmp_path):
    """The library reads no environment: the tool turns TRACKER_* into options. A bad
    TRACKER_PSS_MAX_AGE is a usage error; TRACKER_PROC_ROOT reaches the sampler."""
    out = tmp_path / "o.jsonl"
    for bad in ("abc", "-1", "1e9", "5s"):
        assert_usage_error(["-o", str(out)], ["TRACKER_PSS_MAX_AGE", bad],
                                  env=tracker_env(TRACKER_PSS_MAX_AGE=bad))
    assert not out.exists()
    root = tmp_path / "proc"
    root.mkdir()
    cores = os.cpu_count() + 3  # not this machine's count
    (root / "stat").write_text("cpu  1 0 1 10 0 0 0 0\n" + "".join(f"cpu{i} 1 0 1 10 0 0 0 0\n" for i in range(cores)))
    p = subprocess.Popen([TRACKER, "-i", "0.05", "-o", "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=tracker_env(TRACKER_PROC_ROOT=str(root), TRACKER_SYS_ROOT=str(tmp_path / "none")))
    first = json.loads(p.stdout.readline())
    p.terminate()
    p.communicate(timeout=10)
    assert len(first["cpu"]["per_core_pct"]) == cores  # the fake root's cores
    assert first["memory"]["total_mib"] is None  # no meminfo there
