"""The analysis methods against the Python resource-tracker's rules (0.4's API reference:
docs/contracts.md §15, with 0.5's names): server_info's allocation (None before a sample, then
the C library's rt_summary.allocation, "unknown" when it cannot tell), stats() with 0.5's
default specs and shape, recommend_resources over historical stats (0.5's stats or 0.4's, in
kB) by its aggregate_stats rule, recommend_server's Keeper filters accepted and ignored, and
report's integration, integration_version and status_failed. ("seed" in the names below
means that peer.)"""
import pytest

from resource_tracker import ResourceTracker
from resource_tracker import tracker as tracker_module
from resource_tracker._native import text
from resource_tracker._native_more import lib
from resource_tracker.tiny_data_frame import StatSpec

SEED_DEFAULT_STATS = [
    ("process_cpu_usage", "mean"), ("process_cpu_usage", "max"),
    ("process_memory_mib", "mean"), ("process_memory_mib", "max"),
    ("process_gpu_usage", "mean"), ("process_gpu_usage", "max"),
    ("process_gpu_vram_mib", "mean"), ("process_gpu_vram_mib", "max"),
    ("process_gpu_utilized", "mean"), ("process_gpu_utilized", "max"),
    ("system_disk_space_used_gb", "max"), ("system_net_recv_bytes", "sum"),
    ("system_net_sent_bytes", "sum"), ("timestamp", "duration"),
]


def test_allocation_comes_from_the_library(tracker):
    assert ResourceTracker(autostart=False).server_info["allocation"] is None
    expected = text(lib.rt_tracker_summary(tracker._native.tracker).contents.allocation)
    assert expected in ("dedicated", "shared")
    assert tracker.server_info["allocation"] == expected
    assert ResourceTracker.loads(tracker.dumps()).server_info["allocation"] == expected
    system_only = ResourceTracker(autostart=True, interval=0.1, track_processes=False)
    system_only.wait_for_samples(1)
    system_only.stop()
    assert system_only.server_info["allocation"] == "unknown"  # the Python tracker: a failing check


def test_stats_default_specs_and_shape(tracker):
    specs = tracker_module.DEFAULT_STAT_SPECS
    assert [(s.column, s.agg_name or s.agg.__name__) for s in specs] == SEED_DEFAULT_STATS
    stats = tracker.stats()
    pairs = [(col, agg) for col, aggs in stats.items() for agg in aggs]
    assert sorted(pairs) == sorted(SEED_DEFAULT_STATS)
    assert all(isinstance(v, (int, float)) for aggs in stats.values() for v in aggs.values())
    ts = tracker.get_combined_metrics()["timestamp"]
    assert stats["timestamp"]["duration"] == pytest.approx(max(ts) - min(ts) + tracker.interval)
    only = tracker.stats([StatSpec("process_cpu_usage", max, agg_name="peak")])
    assert list(only) == ["process_cpu_usage"] and list(only["process_cpu_usage"]) == ["peak"]
    with pytest.raises(RuntimeError, match="No metrics collected"):
        ResourceTracker(autostart=False).stats()


KEYS_05 = ("cpu", "memory", "gpu", "vram")


def of_05(rec):
    """The 0.5 keys of a recommend_resources() dict (0.18 adds "cpu_time")."""
    return {k: rec[k] for k in KEYS_05}


def test_recommend_resources_with_history_follows_the_seed_rule(tracker):
    own = tracker.stats()
    alone, with_own = tracker.recommend_resources(), tracker.recommend_resources(historical_stats=[own])
    assert of_05(with_own) == of_05(alone)
    # alone: the cores from the run's predicted durations; with stats() dicts, which have no
    # table, the seed's mean rule (and no predicted time)
    assert alone["cpu_time"]["basis"] == "duration" and alone["cpu_time"]["table"]
    assert alone["cpu_time"]["duration_secs"] > 0 and alone["cpu_time"]["words"].startswith(f"{alone['cpu']} core")
    assert with_own["cpu_time"]["basis"] == "mean" and with_own["cpu_time"]["duration_secs"] is None
    past = {
        "process_cpu_usage": {"mean": 3.4, "max": 4.0},
        "process_memory": {"mean": 1_000_000, "max": 4_000_000},  # kB
        "process_gpu_usage": {"mean": 0.5, "max": 1.6},
        "process_gpu_vram": {"mean": 100.0, "max": 3000.0},  # MiB
        "timestamp": {"duration": 60.0},
    }
    rec = tracker.recommend_resources(historical_stats=[past])
    # cpu: round(mean of the means), memory: the largest max x 1.2 in MiB rounded up,
    # gpu: the largest max rounded (the mean is > 0), vram: the largest max x 1.2 rounded up
    assert of_05(rec) == {"cpu": max(1, round((own["process_cpu_usage"]["mean"] + 3.4) / 2)),
                          "memory": 5120, "gpu": 2, "vram": 4096}
    # the same run's stats as 0.5 names them (MiB)
    past05 = {
        "process_cpu_usage": past["process_cpu_usage"],
        "process_memory_mib": {"mean": 1_000_000 / 1024, "max": 4_000_000 / 1024},
        "process_gpu_usage": past["process_gpu_usage"],
        "process_gpu_vram_mib": past["process_gpu_vram"],
        "timestamp": past["timestamp"],
    }
    assert tracker.recommend_resources(historical_stats=[past05]) == rec


def test_recommend_server_ignores_the_keeper_filters(tracker):
    plain = tracker.recommend_server()
    filtered = tracker.recommend_server(vendor_id="aws", compliance_framework_id="iso27001")
    assert filtered == plain


def test_report_integration_and_status(tracker):
    standalone = tracker.report()
    assert "orchestrator" not in standalone and "exit status" not in standalone
    metaflow = tracker.report(integration="metaflow", status_failed=True)
    assert "orchestrator" in metaflow and "metaflow" in metaflow
    assert "<th>exit status</th><td>1</td>" in metaflow  # the summary's words: "1", no "(failure)"
    versioned = tracker.report(integration="Metaflow", integration_version="2.19.38")
    assert "Metaflow 2.19.38" in versioned
