"""Soak: bench/soak's code for RT_SOAK_SECS (180 s; 300 with RT_LONG): the tool at -i 0.05
wrapping a churning tree (build/churn: 50 short processes a second, 200 MiB grown and freed every
10 s) with every exporter on against the local stand-ins (--prometheus scraped every second,
--otlp to the receiver, the Sentinel stream to the API and S3 stand-ins), watched through
/proc/PID. Judges growth and delivery, never speed: the RSS slope after warm-up, fds and threads
flat, no sample missed on the grid, CPU per sample late vs early, the exit status passed through
with no warning, every scrape answered, rows sampled == rows each receiver got."""
import importlib.machinery
import importlib.util
import os

import pytest

import conftest
from conftest import BUILD_DIR, REPO, tracker_env

# 180 s in CI (scripts/test): short, and still failing a 16-byte leak a sample by far (measured in
# docs/testing.md); scripts/test --long (RT_LONG=1) runs the 5 minutes, RT_SOAK_SECS any length
SECS = float(os.environ.get("RT_SOAK_SECS") or (300 if getattr(conftest, "LONG", False) else 180))
INTERVAL = 0.05
# the Sentinel stream sends a batch every 10 s here (the tool's default is 60 s): six times the
# uploads in the same minutes, and the batch the tool holds meanwhile (its heap swings by
# hundreds of KiB around each minute's upload) small enough to judge a slope over 3 minutes
UPLOAD_INTERVAL = 10
# the first minutes fill what the tool keeps by design (the rows of the next batch, the OTLP
# batch, the allocator's arenas of its threads): judged after (the 5 minutes: after 2; 3: after
# 1.5, since at 150 s a warm-up of 1 left a clean run's slope at +11.75 KiB/min, half the limit)
WARMUP = min(120.0, SECS * 0.5)
# glibc's malloc gives freed memory back at once here (no trim threshold, no sliding mmap
# threshold): by default the heap keeps hundreds of KiB resident but free after the first
# batches, and a small leak fills that first, unseen by RSS for minutes (a 16-byte leak a sample
# passed 5 minutes so; with these it grows RSS from the start)
MALLOC = "glibc.malloc.trim_threshold=0:glibc.malloc.mmap_threshold=65536"
# KiB a minute, least squares over the looks (every second) after warm-up. Five clean runs on the
# loaded 2-core machine measured +2.5 to +8.1 (a few 4 KiB pages in the 3 minutes as the allocator
# settles); a leak of 16 bytes a sample (malloc's 32-byte chunk, 20 samples a second: the
# smallest a malloc can leak) measured +48.7 and +49.6, 1 KiB a sample +1236: all fail. The
# limit sits about 2.5 times from each. A steep slope fails only with the floor risen too, in
# each third of the looks after warm-up (the fewest KiB over each, more than two pages above the
# last): CI once measured +24.4 from a swing that came back (4 KiB lower at the end), and twice a
# step that stayed (+64 and +58.75: an upload slowed on the loaded machine left the sawtooth's
# floor 60 to 88 KiB higher, flat after; reproduced with stress-ng beside, +46.94, floors 15064 ->
# 15124 -> 15124); the 16-byte leak raised the floor in each third (15272 -> 15312 -> 15372, +81.3).
# bench/soak holds the hour to 1 KiB a minute.
RSS_SLOPE_KIB_MIN = 20
# CPU per sample, the last third against the first (each a minute here, on a machine whose other
# load comes and goes: a clean run measured up to x1.37); bench/soak's hour holds it to x1.5
CPU_RATIO = 2.0
CHURN = os.path.join(BUILD_DIR, "churn")


def load_soak():
    """bench/soak (a script with no .py) as a module: the bench and this test share its code."""
    path = os.path.join(REPO, "bench", "soak")
    loader = importlib.machinery.SourceFileLoader("bench_soak", path)
    spec = importlib.util.spec_from_loader("bench_soak", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


pytestmark = [
    pytest.mark.serial,  # no sample missed on the 0.05 s grid, CPU per sample late vs early
    pytest.mark.skipif(getattr(conftest, "SANITIZED", False), reason="sanitizers change the tool's memory and CPU"),
    pytest.mark.skipif(getattr(conftest, "VALGRIND", False), reason="under valgrind the 0.05 s grid cannot be kept"),
    pytest.mark.skipif(not os.path.exists(CHURN), reason="build/churn not built"),
    pytest.mark.skipif(getattr(conftest, "QUICK", False), reason="RT_QUICK: the soak is left to the full suite"),
]


@pytest.fixture(scope="module")
def soak(tmp_path_factory):
    bench = load_soak()
    s = bench.Soak(conftest.TRACKER, CHURN, SECS, INTERVAL, poll=1.0, workdir=str(tmp_path_factory.mktemp("soak")),
                   env=tracker_env(GLIBC_TUNABLES=MALLOC), exit_code=7, procs=50, threads=50, grow_mib=200, grow_every=10, exporters=True,
                   upload_interval=UPLOAD_INTERVAL)
    s.run()
    f = s.figures(WARMUP)
    bench.print_final(s, f)  # shown with -s or on failure
    verdicts = {name: (ok, detail) for name, ok, detail in bench.checks(f, RSS_SLOPE_KIB_MIN, CPU_RATIO)}
    for name, (ok, detail) in verdicts.items():
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
    return f, verdicts


def judged(soak, name):
    f, verdicts = soak
    ok, detail = verdicts[name]
    assert ok, f"{name}: {detail}"
    return f


def test_exit_status_and_no_warning(soak):
    f = judged(soak, "exit status")
    # churn checked every child's status itself (bad) and started what it was asked to
    assert float(f["churn"]["procs_per_sec"]) > 20 and float(f["churn"]["threads_per_sec"]) > 20, f["churn"]
    assert int(f["churn"]["grows"]) >= SECS / 10 - 2, f["churn"]


def test_no_sample_missed(soak):
    # by the samples' own timestamps: one in every slot of the grid, none twice
    # a sample is missed only when the tool could not run for a whole interval: when it was
    # runnable and kept off the CPU for half an interval or more then (schedstat), the machine
    # missed it, not the tool (a sample within 2 ms of its next slot is then judged to be in
    # it: 'doubled'); every other one off the grid fails
    f = judged(soak, "no sample missed")
    assert abs(f["got"] - SECS / INTERVAL) <= SECS / INTERVAL * 0.1 + 10  # the run lasted about SECS


def test_fds_flat(soak):
    # besides the files of the processes it tracks (four each, closed once they end) the tool
    # holds the same descriptors at the end as after warm-up (the fewest over five looks each),
    # and never more than the few a sample opens for a moment (its own task list)
    f = judged(soak, "fds flat")
    assert f["tree_fds_max"] <= 8 * f["tree_pids_max"]


def test_threads_flat(soak):
    judged(soak, "threads flat")


def test_rss_slope(soak):
    judged(soak, "rss slope")


def test_cpu_per_sample_flat(soak):
    # the tool's own CPU (schedstat / utime+stime) per sample, the last third after warm-up
    # against the first third: a generous bound, since the tree's size varies and others share
    # the machine
    judged(soak, "cpu per sample steady")


def test_every_scrape_answered(soak):
    judged(soak, "every scrape answered")


def test_receivers_got_every_sample(soak):
    # each sample is one system.memory.limit point at the OTLP receiver (its own timestamp), and
    # one CSV row in S3 or the finish's inline CSV at the Sentinel side, each once
    judged(soak, "otlp got every sample")
    judged(soak, "sentinel got every row")


def test_slope_is_least_squares():
    # the judge itself: a flat line with noise has no slope, 1 KiB a minute is 1
    slope = load_soak().slope_per_min
    assert slope([(t, 1000 + (t % 3)) for t in range(0, 600)]) == pytest.approx(0, abs=0.05)
    assert slope([(t, 1000 + t / 60) for t in range(0, 600, 10)]) == pytest.approx(1.0)
    assert slope([(0, 5)]) == 0.0


def test_floors_by_thirds():
    # the judge itself: the least of each third of the span, an empty third left out
    floors = load_soak().floors
    assert floors([(t, 100 + t) for t in range(0, 91)], 3) == [100, 130, 160]
    assert floors([(0, 5), (1, 3), (9, 7)], 3) == [3, 7]


def test_grid_check_judges_late_missed_and_doubled():
    # the judge itself, on made-up timestamps: late (< one interval) is not missed
    g = load_soak().grid_check
    base = 1795361596.044
    ts = [round(base + k * 0.1, 3) for k in range(50)]
    assert g(ts, 0.1)["missed"] == 0 and g(ts, 0.1)["got"] == 49
    late = list(ts)
    late[10] = round(late[10] + 0.09, 3)
    late[30] = round(late[30] + 0.05, 3)
    r = g(late, 0.1)
    assert (r["missed"], r["doubled"], r["max_late_ms"]) == (0, 0, 90)
    dropped = ts[:20] + ts[21:]
    r = g(dropped, 0.1)
    assert (r["missed"], r["got"], r["expected"], r["off_grid"]) == (1, 48, 49, [20])
    r = g(ts[:20] + [ts[19] + 0.05] + ts[20:], 0.1)
    assert r["doubled"] == 1


def test_miss_excused_only_while_starved():
    # a sample off the grid is the machine's when the tool waited for a CPU then, else the tool's
    bench = load_soak()
    s = bench.Soak("tracker", "churn", 10, 0.1, poll=1.0, workdir="/nonexistent")
    s.polls = [{"samples": 10 * k, "wait_ns": 0} for k in range(10)]
    assert not s.starved(45)
    s.polls[5]["wait_ns"] = 60_000_000  # 60 ms runnable but not run, between looks 4 and 5
    s.polls[6:] = [dict(q, wait_ns=60_000_000) for q in s.polls[6:]]
    assert s.starved(45) and s.starved(35)
    assert not s.starved(85) and not s.starved(15)


def test_checks_fail_on_each_fault():
    # the verdicts themselves, on made-up figures: a clean run passes all; each fault fails its own
    checks = load_soak().checks
    clean = {"rc": 7, "want_rc": 7, "stderr": "", "churn": {"bad": "0", "errors": "0"}, "rss_slope": 2.0,
             "anon_slope": 2.0, "rss_floors": [15140, 15144, 15144], "fds_warm": 70, "fds_end": 70, "fds_max": 72, "held_gone": 0, "threads_warm": 4,
             "threads_end": 4, "threads_min": 4, "threads_max": 4, "off_grid": [], "off_grid_starved": 0, "missed": 0,
             "doubled": 0, "max_late_ms": 3, "cpu_early_us": 100.0, "cpu_late_us": 110.0, "scrapes_tried": 10,
             "scrapes_answered": 10, "scrape_failures": [], "otlp_same": True, "otlp_refused": 0, "otlp_points": 50,
             "sampled": 50, "sentinel_runs": 1, "sentinel_rows": 50, "sentinel_dups": 0, "sentinel_source": "s3",
             "s3rver": True}
    assert all(ok for _, ok, _ in checks(clean, RSS_SLOPE_KIB_MIN))
    faults = {"exit status": [{"rc": 0}, {"stderr": "warning"}, {"churn": {"bad": "1", "errors": "0"}}],
              # the leak of 16 bytes a sample measured +52.3 with its floor 15140 -> 15300 (first and
              # last 30 s after warm-up): it rises in every third
              "rss slope": [{"rss_slope": RSS_SLOPE_KIB_MIN + 0.1, "rss_floors": [15140, 15149, 15158]},
                            {"rss_slope": 52.3, "rss_floors": [15140, 15220, 15300]}],
              "fds flat": [{"fds_end": 71}, {"fds_max": 79}, {"held_gone": 1}],
              "threads flat": [{"threads_end": 5}, {"threads_max": 9}],
              "no sample missed": [{"off_grid": [7], "off_grid_starved": 0}],
              "cpu per sample steady": [{"cpu_late_us": 151.0}, {"cpu_early_us": None}],
              "every scrape answered": [{"scrapes_answered": 9}, {"scrapes_tried": 0, "scrapes_answered": 0}],
              "otlp got every sample": [{"otlp_same": False}, {"otlp_refused": 1}],
              "sentinel got every row": [{"sentinel_rows": 49}, {"sentinel_dups": 1}, {"sentinel_runs": 2}]}
    for name, cases in faults.items():
        for case in cases:
            failed = [n for n, ok, _ in checks(dict(clean, **case), RSS_SLOPE_KIB_MIN) if not ok]
            assert failed == [name], (case, failed)
    # a swing that came back: CI measured +24.4 with RSS 4 KiB lower at the end than after warm-up
    assert all(ok for _, ok, _ in checks(dict(clean, rss_slope=24.4, rss_floors=[15140, 15150, 15136]), RSS_SLOPE_KIB_MIN))
    # a step that stays: an upload slowed by a loaded machine left the sawtooth's floor 60 KiB
    # higher, flat after (measured +46.94 with stress-ng beside; CI +58.75, its floor +88)
    for step in ([4496, 4556, 4556], [4496, 4500, 4556]):
        assert all(ok for _, ok, _ in checks(dict(clean, rss_slope=46.94, rss_floors=step), RSS_SLOPE_KIB_MIN))
    starved = dict(clean, off_grid=[7, 9], off_grid_starved=2, missed=2)  # the machine's misses, not the tool's
    assert all(ok for _, ok, _ in checks(starved, RSS_SLOPE_KIB_MIN))
