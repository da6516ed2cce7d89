"""Shared settings for the end-to-end tests: where the build is, and environment that keeps
every test on loopback (no cloud metadata, no real Sentinel)."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.environ.get("RT_BUILD_DIR", os.path.join(REPO, "build"))
TRACKER = os.path.join(BUILD_DIR, "resource-tracker")

# Nothing in the suite may reach a metadata service or the internet.
os.environ["TRACKER_CLOUD_DISCOVERY"] = "0"
os.environ.pop("SENTINEL_API_TOKEN", None)
