"""Settings for the doctests of python/resource_tracker when pytest runs them alone
(`pytest --doctest-modules python/resource_tracker`): no cloud metadata lookup, a Keeper URL
that refuses at once (http://127.0.0.1:9), the C library of the build when none is named.
python/tests/conftest.py replaces the Keeper URL with its local stand-in."""
import os

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

os.environ["TRACKER_CLOUD_DISCOVERY"] = "0"
os.environ.pop("TRACKER_CLOUD_METADATA_URL", None)
os.environ.pop("SENTINEL_API_TOKEN", None)
for _k in [k for k in os.environ if k.startswith("OTEL_")]:  # nothing is pushed anywhere
    del os.environ[_k]
os.environ.setdefault("TRACKER_KEEPER_URL", "http://127.0.0.1:9")
if "RESOURCE_TRACKER_LIBRARY" not in os.environ:
    _built = os.path.join(_REPO, "build", "libresource-tracker.so")
    if os.path.exists(_built):
        os.environ["RESOURCE_TRACKER_LIBRARY"] = _built
