"""peer_junit.py - reads a peer's test suite's outcomes from the JUnit XML its child pytest
wrote: {"test_x.py::test_name": (outcome, message)}, outcome one of passed, failed, error and
skipped; a file that could not be collected is "test_x.py" (no "::"). Shared by the harnesses
that run the Python resource-tracker's and gpu_tracker's own suites against this package."""
import xml.etree.ElementTree as ET

_OUTCOME = {"failure": "failed", "error": "error", "skipped": "skipped"}


def outcomes(junit_path):
    results = {}
    for case in ET.parse(junit_path).getroot().iter("testcase"):
        if not case.get("classname"):  # a file that could not be collected
            name = case.get("name").split(".")[-1] + ".py"
        else:
            name = f"{case.get('classname').split('.')[-1]}.py::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in _OUTCOME:
                outcome, message = _OUTCOME[child.tag], (child.get("message") or "")[:300]
                break
        results[name] = (outcome, message)
    return results
