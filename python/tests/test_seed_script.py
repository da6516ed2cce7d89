"""A script written for the Python resource-tracker 0.5 (in the spirit of its README and
examples/standalone.py: start, work, look at the frames, stop, statistics, recommendations,
report, snapshot round trip, the CSV trackers, the discovery helpers) runs unchanged on this
package, in a fresh interpreter, against the local Keeper stand-in of conftest.py."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import json
    import os
    import sys
    from time import sleep

    from resource_tracker import (ResourceTracker, SystemTracker, ProcessTracker,
                                  get_cloud_info, get_server_info)
    from resource_tracker.tiny_data_frame import TinyDataFrame

    out = sys.argv[1]
    tracker = ResourceTracker(autostart=True, interval=0.2)
    print(tracker.process_metrics)
    while tracker.n_samples == 0:
        sleep(0.05)
    blob = bytearray(64 * 1024 * 1024)
    acc = 0
    for i in range(300000):
        acc += i ** 2
    print(repr(tracker.process_metrics.tail(1)))
    print(tracker.system_metrics.head(2))
    tracker.wait_for_samples(n=tracker.n_samples + 1, timeout=5)
    del blob
    tracker.stop()
    assert not tracker.running

    pm, sm = tracker.process_metrics, tracker.system_metrics
    combined = tracker.get_combined_metrics()
    assert isinstance(combined, TinyDataFrame) and len(combined) == tracker.n_samples
    avg_cpu = sum(pm["utime"]) / len(pm["utime"])
    peak_mib = max(pm["memory_mib"])
    assert peak_mib > 64, peak_mib
    stats = tracker.stats()
    print(stats["process_cpu_usage"]["mean"], stats["process_memory_mib"]["max"],
          stats["timestamp"]["duration"])
    rec = tracker.recommend_resources()
    assert rec["memory"] >= 128 and rec["cpu"] >= 1
    server = tracker.recommend_server()
    print(server["vendor_id"], server["api_reference"], server["min_price_ondemand"])
    report = tracker.report()
    report.save(os.path.join(out, "report.html"))
    pm.to_csv(os.path.join(out, "process.csv"))
    combined = tracker.get_combined_metrics(bytes=True, human_names=True)
    print(combined.columns[:3])

    tracker.dump(os.path.join(out, "run.json.gz"))
    again = ResourceTracker.load(os.path.join(out, "run.json.gz"))
    assert again.process_metrics.to_dict() == pm.to_dict()
    snap = tracker.snapshot()
    assert snap["metadata"]["version"] == 1
    copy = ResourceTracker.from_snapshot(json.loads(json.dumps(snap)))
    assert copy.stats()["process_memory_mib"] == stats["process_memory_mib"]
    assert copy.recommend_resources() == rec

    with ResourceTracker(interval=0.2) as t:
        t.wait_for_samples(2)
    print("context", t.n_samples, t.server_info["allocation"] in ("dedicated", "shared"))

    print(get_server_info()["memory_mib"], get_cloud_info()["vendor"])
    # the CSV trackers loop until killed: run them as the Python tracker's users do
    from multiprocessing import Process
    loops = [Process(target=SystemTracker, daemon=True,
                     kwargs={"interval": 0.2, "output_file": os.path.join(out, "system.csv")}),
             Process(target=ProcessTracker, daemon=True,
                     kwargs={"interval": 0.2, "output_file": os.path.join(out, "proc.csv")})]
    for p in loops:
        p.start()
    sleep(1.0)
    for p in loops:
        p.terminate()
        p.join()
    print("done")
''')


def test_a_script_written_for_0_5_runs_unchanged(tmp_path):
    script = tmp_path / "standalone.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, BROWSER="true")
    r = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("done")
    assert "context" in r.stdout
    html = (tmp_path / "report.html").read_text()
    assert "<html" in html.lower()
    for name in ("system.csv", "proc.csv", "process.csv"):
        lines = (tmp_path / name).read_text().splitlines()
        assert lines[0].startswith('"timestamp"') and len(lines) >= 2, name
