"""_energy.py - the run's energy and carbon (C library 0.15) for the package's views: the grid a
tracker's carbon is computed with (grid_zone= / grid_intensity=, else TRACKER_GRID_ZONE /
TRACKER_GRID_INTENSITY, as the tool reads them) handed to the library, and an rt_summary's
energy figures as a dict (ResourceTracker.stats(energy=True), gpu_tracker's
ResourceUsage.energy). A library older than 0.15 has no energy: the dict is None and no grid is
set (the symbols are looked up, never assumed)."""

from __future__ import annotations

import os
from ctypes import POINTER, byref, cast
from logging import getLogger

from ._native import text
from ._native_more import EnergyPart, Grid, has, lib, new

ENERGY_VERSION_NUM = 0x000F00  # 0.15.0: rt_summary's energy, rt_grid, rt_tracker_set_grid
METHODS = ("measured", "sampled", "estimated")
G_PER_KWH_MAX = 10000.0  # the tool's bound on --grid-intensity


def available() -> bool:
    """Whether the loaded library reports energy (0.15 or newer)."""
    return lib.rt_version_num() >= ENERGY_VERSION_NUM


def choose_grid(zone: str | None, intensity: float | str | None, where: str = "") -> Grid | None:
    """The grid as the tool chooses it: an intensity (g CO2e per kWh, above 0 and at most
    10000; source "given") wins over a zone, a zone is looked up in the library's table (a
    country code "FR", a zone "US-CA", or "vendor:region"); None when neither is given.
    Raises ValueError for an intensity that is not such a number or a zone not in the table
    (where, e.g. "TRACKER_GRID_ZONE", names the setting), RuntimeError when the library has
    no grids (older than 0.15)."""
    if intensity is not None and intensity != "":
        try:
            g = float(intensity)
        except (TypeError, ValueError):
            g = float("nan")
        if not 0 < g <= G_PER_KWH_MAX:
            raise ValueError(f"{where or 'grid_intensity'}: not a carbon intensity in g CO2e per kWh "
                             f"(above 0, at most {G_PER_KWH_MAX:g}): {intensity!r}")
        if not has("rt_tracker_set_grid"):
            raise RuntimeError("a grid needs libresource-tracker 0.15.0 or newer")
        grid = new(Grid, g_per_kwh=g, zone=zone.encode() if zone else None, source=b"given")
        return grid
    if zone:
        if not has("rt_grid_lookup"):
            raise RuntimeError("a grid needs libresource-tracker 0.15.0 or newer")
        grid = new(Grid)
        if lib.rt_grid_lookup(str(zone).encode(), byref(grid)) != 0:
            raise ValueError(f"{where or 'grid_zone'}: {zone!r} is not a zone of the grid intensity table "
                             "(a country code such as FR, or vendor:region such as aws:eu-west-3: the "
                             "first column of the library's data/grid-intensity.csv)")
        return grid
    return None


def grid_of(zone: str | None, intensity: float | None) -> Grid | None:
    """The grid of a tracker: the keywords (errors raised), else the environment's
    TRACKER_GRID_INTENSITY / TRACKER_GRID_ZONE (an unusable value is a warning on the logger
    resource_tracker and no grid), else None (the carbon unknown)."""
    if zone is not None or intensity is not None:
        return choose_grid(zone, intensity)
    env_zone, env_g = os.environ.get("TRACKER_GRID_ZONE") or None, os.environ.get("TRACKER_GRID_INTENSITY") or None
    if env_zone is None and env_g is None:
        return None
    try:
        return choose_grid(env_zone, env_g, "TRACKER_GRID_INTENSITY" if env_g else "TRACKER_GRID_ZONE")
    except (ValueError, RuntimeError) as e:
        getLogger("resource_tracker").warning(f"{e}: the carbon stays unknown")
        return None


def set_grid(handle, grid: Grid | None) -> None:
    """Hands grid to the tracker's statistics (rt_tracker_set_grid; the library copies it).
    Nothing with no grid, no tracker or a library without it."""
    if grid is not None and handle and has("rt_tracker_set_grid"):
        lib.rt_tracker_set_grid(handle, byref(grid))


def _num(v: float, known: bool = True) -> float | None:
    return float(v) if known and v == v and v not in (float("inf"), float("-inf")) else None


def _method(b) -> str | None:
    m = text(b)
    return m if m in METHODS else None


def _dist(d, known: bool) -> dict | None:
    if not known:
        return None
    return {"mean": _num(d.mean), "peak": _num(d.peak), "p50": _num(d.p50), "p95": _num(d.p95)}


def parts_of(s) -> list | None:
    """The energy by part of an rt_summary (0.19), the largest first, as `summary --json`'s
    energy "parts": [{kind, source, method, joules, process_joules, devices}] (kind "cpu",
    "dram", "gpu", ...; source "nvml", "intel-rapl", "model", ...); None when the records carried
    no energy domains (a loaded snapshot) or the library is older than 0.19."""
    if not has("rt_summary_energy_words") or not s.energy_parts or not s.energy_part_count:
        return None
    items = cast(s.energy_parts, POINTER(POINTER(EnergyPart)))
    parts = []
    for i in range(s.energy_part_count):
        p = items[i].contents
        method = _method(p.method)
        parts.append({"kind": text(p.kind), "source": text(p.source), "method": method,
                      "joules": _num(p.energy_joules, method is not None),
                      "process_joules": _num(p.process_energy_joules, method is not None),
                      "devices": int(p.devices) if p.devices == p.devices and p.devices > 0 else None})
    return parts


def energy_of(summary) -> dict | None:
    """The energy of an rt_summary (a POINTER(Summary)) in the shape of `summary --json`'s
    "energy" member, figures unrounded: joules and method (the machine's), process_joules and
    process_method (the job's share), power_watts and process_power_watts ({mean, peak, p50,
    p95}), idle_power_watts, model (the estimate's, in words), missing (what could not be read
    and how to grant it), gpu_power_throttled_secs, gpu_thermal_throttled_secs, and carbon:
    None when the grid's intensity is unknown, else {co2e_grams, process_co2e_grams, g_per_kwh,
    zone, name, source, year}; parts (the energy by part, parts_of: None without the records'
    domains or from a library older than 0.19) and meter_source (a platform meter's source when
    one gave the machine's figure, else None). A figure whose method is missing is None, never a
    number without its method. None when the run had no energy figure, no note and no throttle
    time, or the library is older than 0.15."""
    if not summary or not available():
        return None
    s = summary.contents
    method, pmethod = _method(s.energy_method), _method(s.process_energy_method)
    model, missing = text(s.energy_model), text(s.energy_missing)
    power_t, thermal_t = _num(s.gpu_power_throttled_secs), _num(s.gpu_thermal_throttled_secs)
    if not (method or pmethod or model or missing or (power_t or 0) > 0 or (thermal_t or 0) > 0):
        return None
    carbon = None
    grid = cast(s.grid, POINTER(Grid)).contents if s.grid else None
    if grid is not None and grid.g_per_kwh > 0:
        carbon = {
            "co2e_grams": _num(s.co2e_grams, method is not None),
            "process_co2e_grams": _num(s.process_co2e_grams, pmethod is not None),
            "g_per_kwh": _num(grid.g_per_kwh), "zone": text(grid.zone), "name": text(grid.name),
            "source": text(grid.source), "year": grid.year if grid.year > 0 else None,
        }
    return {
        "joules": _num(s.energy_joules, method is not None), "method": method,
        "process_joules": _num(s.process_energy_joules, pmethod is not None), "process_method": pmethod,
        "power_watts": _dist(s.power_watts, method is not None),
        "process_power_watts": _dist(s.process_power_watts, pmethod is not None),
        "idle_power_watts": _num(s.idle_power_watts, method is not None),
        "model": model, "missing": missing,
        "gpu_power_throttled_secs": power_t, "gpu_thermal_throttled_secs": thermal_t,
        "carbon": carbon,
        "parts": parts_of(s),
        "meter_source": text(s.energy_meter_source) if has("rt_summary_energy_words") else None,
    }
