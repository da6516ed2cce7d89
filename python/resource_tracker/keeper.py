"""keeper.py - the Spare Cores Keeper API through the C library (docs/contracts.md §6): the
cheapest on-demand server that fits a recommendation, and the price of an instance type; and
keeper_request, the Python tracker 0.5's GET of any Keeper path (urllib: the C library asks
only those two questions). The API's address comes from TRACKER_KEEPER_URL (default
https://keeper.sparecores.net; "off": no request at all)."""

from __future__ import annotations

import os
from ctypes import addressof, byref, c_double, create_string_buffer

from ._native import RT_ERR_DISABLED, encode, lib, new, text
from ._native_more import KeeperOptions, LogCollector, Recommendation, Server, new_recommendation

# how a failed lookup's one line ends (prices_line): the package's way to stop it
STOP_HINT = "TRACKER_KEEPER_URL=off stops the lookup"


def _options(log: LogCollector, offline=None) -> KeeperOptions:
    o = new(KeeperOptions, url=encode(os.environ.get("TRACKER_KEEPER_URL") or None), log=log.fn)
    if offline is not None:  # a create_string_buffer: why Keeper was not reached (0.18)
        o.offline_why, o.offline_why_cap = addressof(offline), len(offline)
    return o


def prices_line(why: str | None, offline: str | None, what: str = "prices") -> str | None:
    """The one quiet line a failed lookup leaves in a report (the tool's words, cli_prices_line):
    "prices: offline (Keeper not reached: REASON; ...)" when no reply came from Keeper (no
    network, Keeper down or silent), "prices: unavailable (WHY; ...)" when it replied wrongly;
    None when nothing failed."""
    if offline:
        return f"{what}: offline (Keeper not reached: {offline}; {STOP_HINT})"
    if why:
        return f"{what}: unavailable ({why}; {STOP_HINT})"
    return None


DEFAULT_KEEPER_URL = "https://keeper.sparecores.net"


def keeper_request(path: str, timeout: float = 2, endpoint: str = DEFAULT_KEEPER_URL):
    """GET endpoint + path from the Keeper API (headers X-Application-ID: resource-tracker and
    Accept: application/json) and its JSON reply (a dict or a list), or None when the request
    or the decoding fails. endpoint left at its default: TRACKER_KEEPER_URL when set. With
    TRACKER_KEEPER_URL=off (any case) nothing is asked: None."""
    env = (os.environ.get("TRACKER_KEEPER_URL") or "").strip()
    if env.lower() == "off":
        return None
    if endpoint == DEFAULT_KEEPER_URL and env:
        endpoint = env
    from json import loads
    from urllib.request import Request, urlopen

    url = endpoint.rstrip("/") + "/" + path.lstrip("/")
    request = Request(url, headers={"X-Application-ID": "resource-tracker", "Accept": "application/json"})
    try:
        with urlopen(request, timeout=timeout) as response:
            return loads(response.read().decode("utf-8"))
    except Exception:  # down, slow, an HTTP error, not JSON: no answer
        return None


def recommendation_struct(rec: dict) -> Recommendation:
    """A recommend_resources dict ({cpu, memory, gpu, vram}, MiB) as an rt_recommendation; with
    its "gpu_ask" (0.19) the memory asked of each GPU, which the Keeper query asks for."""
    ask = rec.get("gpu_ask") or {}
    return new_recommendation(cpu=int(rec.get("cpu") or 1), memory_mib=int(rec.get("memory") or 0),
                              gpu=int(rec.get("gpu") or 0), vram_mib=int(rec.get("vram") or 0), runs=1,
                              vram_per_gpu_mib=int(ask.get("vram_per_gpu_mib") or 0),
                              gpu_held=int(ask.get("held") or rec.get("gpu") or 0))


def server_to_dict(s: Server) -> dict:
    """An rt_server as the Keeper's server fields."""
    price = s.price_usd_per_hour
    ref = text(s.api_reference)
    return {
        "vendor_id": text(s.vendor_id),
        "server_id": ref,
        "api_reference": ref,
        "display_name": text(s.display_name),
        "vcpus": int(s.vcpus),
        "memory_amount": s.memory_mib,
        "gpu_count": int(s.gpu_count) if s.gpu_count >= 0 else 0,
        "min_price_ondemand": price if price == price else None,
    }


def lookup_cheapest(rec: dict) -> tuple[Server | None, str | None, str | None]:
    """(the cheapest server as an rt_server, None, None), or (None, why the lookup failed, why
    Keeper was not reached at all, or None when it replied)."""
    log = LogCollector()
    out = new(Server)
    offline = create_string_buffer(300)
    err = lib.rt_keeper_cheapest(byref(_options(log, offline)), byref(recommendation_struct(rec)), byref(out))
    if err == RT_ERR_DISABLED:  # TRACKER_KEEPER_URL=off: nothing asked, nothing to note
        return None, None, None
    if err:
        return None, log.last() or text(lib.rt_strerror(err)), offline.value.decode("utf-8", "replace") or None
    return out, None, None


def cheapest(rec: dict) -> tuple[Server | None, str | None]:
    """(the cheapest server as an rt_server, None) or (None, why the lookup failed)."""
    server, why, _ = lookup_cheapest(rec)
    return server, why


def get_recommended_cloud_servers(cpu: int, memory: int, gpu: int | None = None,
                                  vram: int | None = None, n: int = 10) -> list[dict]:
    """The cheapest cloud server with at least cpu vCPUs, memory MiB, gpu GPUs and vram MiB
    of VRAM, as a list of one Keeper server dict (empty when the lookup fails or none fits).
    The C library looks up the cheapest only: n is accepted for compatibility."""
    server, _ = cheapest({"cpu": cpu, "memory": memory, "gpu": gpu, "vram": vram})
    return [server_to_dict(server)] if server is not None else []


def get_instance_price(vendor_id: str, region_id: str | None, instance_type: str) -> float | None:
    """The on-demand Linux price of an instance type in USD per hour (in region_id, else the
    lowest over regions), or None when unknown."""
    regions = [None]
    if region_id and region_id != "unknown":
        regions.insert(0, region_id)  # then any region, as the Python tracker falls back
    for region in regions:
        price = c_double()
        err = lib.rt_keeper_price(byref(_options(LogCollector())), encode(vendor_id),
                                  encode(instance_type), encode(region), byref(price))
        if not err:
            return price.value
    return None


def recommend_server(t, **kwargs) -> dict:
    """ResourceTracker.recommend_server: historical_stats is used, the other keyword arguments
    (the Python tracker's Keeper filters: vendor_id, compliance_framework_id, ...) are
    accepted and ignored, as rt_keeper_cheapest takes no filters."""
    rec = t.recommend_resources(historical_stats=kwargs.pop("historical_stats", []))
    server, note = cheapest(rec)
    if server is None:
        why = note or "the Keeper lookups are off (TRACKER_KEEPER_URL=off)"
        raise RuntimeError(f"No server recommendation from the Keeper API: {why}")
    return server_to_dict(server)
