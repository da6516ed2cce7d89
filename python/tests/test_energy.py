"""test_energy.py - the run's energy and carbon through the package (C library 0.15):
ResourceTracker.stats(energy=True) carries the library's energy with its methods (this VM has
no counter: the CPU estimate), the carbon from grid_intensity= or grid_zone= (or
TRACKER_GRID_INTENSITY / TRACKER_GRID_ZONE) exactly as the library computes it, None without a
grid; the energy by part (0.19); stats() without energy keeps the Python tracker's shape; bad
grids raise (keywords) or warn (environment); gpu_tracker's ResourceUsage.energy is an extra
that leaves to_json() as it was; a library older than 0.15 gives None."""

import dataclasses
import time

import pytest

from resource_tracker import ResourceTracker
from resource_tracker import _energy
from resource_tracker._native import lib

pytestmark = pytest.mark.skipif(not _energy.available(), reason="the library has no energy (older than 0.15)")

METHODS = {"measured", "sampled", "estimated"}


def _burn(secs):
    end = time.process_time() + secs
    while time.process_time() < end:
        pass


def _run(**kw):
    t = ResourceTracker(interval=0.05, **kw)
    with t:
        _burn(0.3)
        t.wait_for_samples(3)
    return t


def test_stats_energy_with_a_given_intensity():
    t = _run(grid_intensity=400)
    stats = t.stats(energy=True)
    e = stats["energy"]
    assert e["method"] in METHODS and e["process_method"] in METHODS
    assert e["process_joules"] > 0 and e["joules"] >= e["process_joules"]
    assert e["power_watts"]["peak"] >= e["power_watts"]["mean"] > 0
    assert e["idle_power_watts"] > 0
    if e["process_method"] == "estimated":
        assert e["model"]  # an estimate names its model
    c = e["carbon"]
    assert c["g_per_kwh"] == 400 and c["source"] == "given" and c["zone"] is None
    assert c["process_co2e_grams"] == pytest.approx(e["process_joules"] / 3.6e6 * 400, rel=1e-12)
    assert c["co2e_grams"] == pytest.approx(e["joules"] / 3.6e6 * 400, rel=1e-12)
    # without energy=True: the Python tracker's shape, unchanged
    plain = t.stats()
    assert "energy" not in plain and set(plain) == set(stats) - {"energy"}


def test_grid_zone_from_the_table_and_from_the_environment(monkeypatch):
    e = _run(grid_zone="fr").stats(energy=True)["energy"]
    assert e["carbon"]["zone"] == "FR" and e["carbon"]["name"] == "France" and e["carbon"]["year"] > 2000
    g = e["carbon"]["g_per_kwh"]
    assert e["carbon"]["process_co2e_grams"] == pytest.approx(e["process_joules"] / 3.6e6 * g, rel=1e-12)
    monkeypatch.setenv("TRACKER_GRID_ZONE", "DE")
    e = _run().stats(energy=True)["energy"]
    assert e["carbon"]["zone"] == "DE"
    monkeypatch.setenv("TRACKER_GRID_INTENSITY", "123.5")  # wins over the zone, as the tool's
    e = _run().stats(energy=True)["energy"]
    assert e["carbon"]["g_per_kwh"] == 123.5 and e["carbon"]["source"] == "given"


def test_unknown_grid_is_none_never_an_average(monkeypatch, caplog):
    monkeypatch.delenv("TRACKER_GRID_ZONE", raising=False)
    monkeypatch.delenv("TRACKER_GRID_INTENSITY", raising=False)
    e = _run().stats(energy=True)["energy"]
    assert e["carbon"] is None and e["process_joules"] > 0
    with pytest.raises(ValueError, match="'XX' is not a zone"):
        ResourceTracker(grid_zone="XX")
    for bad in (0, -5, 1e6, "lots"):
        with pytest.raises(ValueError, match="grid_intensity"):
            ResourceTracker(grid_intensity=bad)
    monkeypatch.setenv("TRACKER_GRID_ZONE", "XX")  # the environment's: a warning, carbon unknown
    t = _run()
    assert "TRACKER_GRID_ZONE" in caplog.text and "'XX'" in caplog.text
    assert t.stats(energy=True)["energy"]["carbon"] is None


def test_gpu_tracker_energy_is_an_extra(monkeypatch):
    from gpu_tracker import Tracker

    monkeypatch.setenv("TRACKER_GRID_INTENSITY", "400")
    with Tracker(sleep_time=0.1) as t:
        _burn(0.3)
    u = t.resource_usage
    assert [f.name for f in dataclasses.fields(u)] == ["max_ram", "max_gpu_ram", "cpu_utilization",
                                                       "gpu_utilization", "compute_time"]
    assert "energy" not in t.to_json() and "nergy" not in str(t)
    assert u.energy["process_method"] in METHODS and u.energy["process_joules"] > 0
    assert u.energy["carbon"]["process_co2e_grams"] == pytest.approx(u.energy["process_joules"] / 3.6e6 * 400,
                                                                     rel=1e-12)


def test_a_figure_without_its_method_is_none():
    from ctypes import pointer

    from resource_tracker._native_more import Dist, Summary

    s = Summary()
    s.energy_joules, s.energy_method = 5.0, None  # no method: not believed
    s.process_energy_joules, s.process_energy_method = 2.0, b"sampled"
    s.power_watts = s.process_power_watts = Dist(1, 2, 1, 2)
    s.idle_power_watts = s.co2e_grams = s.process_co2e_grams = float("nan")
    s.gpu_power_throttled_secs = s.gpu_thermal_throttled_secs = float("nan")
    e = _energy.energy_of(pointer(s))
    assert e["joules"] is None and e["method"] is None and e["power_watts"] is None
    assert e["process_joules"] == 2 and e["process_method"] == "sampled"
    assert e["carbon"] is None
    s.process_energy_method = None
    assert _energy.energy_of(pointer(s)) is None  # nothing with a method, no note: no energy


def test_energy_by_part():
    """0.19: the energy dict's parts, the largest first, each with its kind, source and method;
    on this VM (no counter) the CPU's estimate, the job's share all of the job's energy."""
    from ctypes import POINTER, c_void_p, cast, pointer

    from resource_tracker._native_more import Dist, EnergyPart, Summary

    if not _energy.has("rt_summary_energy_words"):
        pytest.skip("the library has no energy by part (older than 0.19)")
    e = _run().stats(energy=True)["energy"]
    parts = e["parts"]
    assert parts and all(p["method"] in METHODS for p in parts)
    assert sum(p["process_joules"] or 0 for p in parts) == pytest.approx(e["process_joules"], rel=1e-9)
    if all(p["source"] == "model" for p in parts):  # no counter here: the CPU's estimate
        assert [(p["kind"], p["method"], p["devices"]) for p in parts] == [("cpu", "estimated", 1)]
    assert e["meter_source"] is None or isinstance(e["meter_source"], str)

    # a summary made here: a measured GPU part and an estimated CPU part, as the library lists them
    gpu = EnergyPart(b"gpu", b"nvml", b"measured", 6800.0, 6800.0, 2.0)
    cpu = EnergyPart(b"cpu", b"model", b"estimated", 700.0, 400.0, 1.0)
    items = (POINTER(EnergyPart) * 2)(pointer(gpu), pointer(cpu))
    s = Summary()
    s.energy_joules, s.energy_method = 7500.0, b"estimated"
    s.process_energy_joules, s.process_energy_method = 7200.0, b"estimated"
    s.power_watts = s.process_power_watts = Dist(1, 2, 1, 2)
    s.idle_power_watts = s.co2e_grams = s.process_co2e_grams = float("nan")
    s.gpu_power_throttled_secs = s.gpu_thermal_throttled_secs = float("nan")
    s.energy_parts, s.energy_part_count, s.energy_meter_source = cast(items, c_void_p), 2, b"hwmon"
    e = _energy.energy_of(pointer(s))
    assert e["parts"] == [
        {"kind": "gpu", "source": "nvml", "method": "measured", "joules": 6800.0, "process_joules": 6800.0, "devices": 2},
        {"kind": "cpu", "source": "model", "method": "estimated", "joules": 700.0, "process_joules": 400.0,
         "devices": 1}]
    assert e["meter_source"] == "hwmon"
    s.energy_parts, s.energy_part_count, s.energy_meter_source = None, 0, None  # no domains: no parts
    assert _energy.energy_of(pointer(s))["parts"] is None


def test_an_older_library_has_none(monkeypatch):
    monkeypatch.setattr(lib, "rt_version_num", lambda: 0x000E00)
    t = _run()
    assert t.stats(energy=True)["energy"] is None
