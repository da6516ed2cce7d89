"""The settings table (src/cli/settings.c) and the documents: --help is made from the table
(test_settings.c holds every flag of the table to it), and here the man page's OPTIONS and the
flag table of docs/usage.md name exactly the flags --help names (the README's table of the main
flags names only flags --help names), the config file's keys (as the tool lists them in its
"unknown key" warning) are in the man page's and docs/output.md's config examples, and a
number out of its range is refused with exit 2 and the same words, by flag, environment and TOML."""
import os
import re

import pytest

from conftest import REPO, run, tracker_env

FLAG = re.compile(r"--[a-z][a-z-]*")


def help_flags():
    p = run(["--help"])
    assert p.returncode == 0
    opts = p.stdout.split("\nOptions:\n", 1)[1].split("\n\n\n", 1)[0]
    return set(FLAG.findall(opts)), opts


def man_section(name):
    with open(os.path.join(REPO, "docs", "resource-tracker.1")) as f:
        text = f.read()
    part = text.split(f"\n.SH {name}\n", 1)[1].split("\n.SH ", 1)[0]
    return part.replace("\\-", "-")


def doc(name):
    with open(os.path.join(REPO, name)) as f:
        return f.read()


def flag_table(name="docs/usage.md"):
    rows = [l for l in doc(name).splitlines() if l.startswith("| `-")]
    return rows


def test_man_page_options_name_the_flags_of_help():
    flags, _ = help_flags()
    man = set(FLAG.findall(man_section("OPTIONS")))
    assert len(flags) >= 30
    assert man == flags, f"only in --help: {sorted(flags - man)}; only in the man page: {sorted(man - flags)}"


def test_usage_flag_table_names_the_flags_of_help():
    flags, _ = help_flags()
    named = set()
    for row in flag_table():
        named |= set(FLAG.findall(row.split("|")[1]))
    assert named == flags, f"only in --help: {sorted(flags - named)}; only in docs/usage.md: {sorted(named - flags)}"


def test_readme_main_flags_are_flags_of_help():
    flags, _ = help_flags()
    named = set()
    for row in flag_table("README.md"):
        named |= set(FLAG.findall(row.split("|")[1]))
    assert len(named) >= 10
    assert named <= flags, f"in the README's main flags but not in --help: {sorted(named - flags)}"


def test_short_flags_agree():
    _, opts = help_flags()
    pairs = set(re.findall(r"^  (-[a-zA-Z]), (--[a-z-]+)", opts, re.M))
    assert len(pairs) >= 8
    man = man_section("OPTIONS")
    for short, long in pairs:
        assert re.search(rf'\.BR {re.escape(short)} ", " {re.escape(long)}\b', man), (short, long)


def known(doc, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(doc)
    p = run(["-c", str(path), "-q", "--", "true"])
    assert p.returncode == 0 and "warning:" in p.stderr, p.stderr  # a warning, not an error
    return p.stderr


def test_config_keys_are_documented(tmp_path):
    tables = re.search(r"known tables: (.*)\)", known("zz_unknown = 1\n", tmp_path)).group(1)
    sections = re.findall(r"\[([a-z]+)\]", tables)
    assert sections == ["job", "tracker", "history", "export"]
    man = man_section("CONFIG FILE")
    text = doc("docs/output.md")
    cfg = text.split("## Config file", 1)[1].split("```toml", 1)[1].split("```", 1)[0]
    for sec in sections:
        keys = re.search(r"known keys: (.*)\)", known(f"[{sec}]\nzz_unknown = 1\n", tmp_path)).group(1).split(", ")
        assert keys
        for key in keys:
            assert re.search(rf"\b{key}\b", man), f"[{sec}] {key} not in the man page's CONFIG FILE"
            assert re.search(rf"\b{key}\b", cfg), f"[{sec}] {key} not in docs/output.md's config file"


def test_interval_range_documented_as_help_says():
    _, opts = help_flags()
    rng = re.search(r"--interval SECS +seconds between samples, (\S+ to \S+) ", opts).group(1)
    assert rng == "0.01 to 86400"
    man = man_section("OPTIONS")
    for flag in ("--interval", "--otlp-interval"):  # both take the table's one range
        entry = man.split(f" {flag} ", 1)[1].split(".TP", 1)[0]
        assert rng in entry, flag
    iv = [r for r in flag_table() if r.startswith("| `--interval")]
    assert len(iv) == 1 and rng in iv[0]


RANGE = "a number of seconds from 0.01 to 86400"


@pytest.mark.parametrize("how", ["flag", "toml", "env"])
@pytest.mark.parametrize("value", ["0", "0.001", "86401", "1e9"])
def test_interval_range_refused_alike(tmp_path, how, value):
    env = tracker_env()
    if how == "flag":
        args, want = ["-i", value], f"--interval: '{value}' is not {RANGE}"
    elif how == "toml":
        (tmp_path / "c.toml").write_text(f"[tracker]\ninterval_secs = {value}\n")
        args, want = ["-c", str(tmp_path / "c.toml")], f"c.toml:2:1: [tracker] interval_secs must be {RANGE}"
    else:  # the interval the environment sets: the uploads' (read with a token only)
        env.update(SENTINEL_API_TOKEN="t", SENTINEL_API_URL="http://127.0.0.1:9", TRACKER_UPLOAD_INTERVAL=value,
                   HOME=str(tmp_path))
        args, want = [], f"TRACKER_UPLOAD_INTERVAL: not {RANGE}: '{value}'"
    p = run(args + ["-q", "--", "true"], env=env)
    assert p.returncode == 2
    assert want in p.stderr
    assert p.stderr.count("\n") == 1


@pytest.mark.parametrize("how", ["flag", "toml", "env"])
def test_otlp_interval_range_refused_alike(tmp_path, how):
    env = tracker_env()
    args = ["--otlp", "http://127.0.0.1:9"]
    if how == "flag":
        args += ["--otlp-interval", "0"]
        want = f"--otlp-interval: '0' is not {RANGE}"
    elif how == "toml":
        (tmp_path / "c.toml").write_text("[export]\notlp_interval = 0\n")
        args += ["-c", str(tmp_path / "c.toml")]
        want = f"[export] otlp_interval must be {RANGE}"
    else:
        env.update(OTEL_METRIC_EXPORT_INTERVAL="0")
        want = "OTEL_METRIC_EXPORT_INTERVAL: not a number of milliseconds from 10 to 86400000: '0'"
    p = run(args + ["-q", "--", "true"], env=env)
    assert p.returncode == 2
    assert want in p.stderr


# variables the tool reads that are not settings: set by the tool for the job's command
# (TRACKER_PHASE_SOCKET), the tests' seam (TRACKER_TEST_MOUNTINFO)
NOT_SETTINGS = {"TRACKER_PHASE_SOCKET", "TRACKER_TEST_MOUNTINFO"}


def test_every_tracker_variable_read_is_a_row():
    """Each TRACKER_* and OTEL_* variable the tool's sources name is a row of the settings table
    (a flag's variable, or one read from the environment alone through its row: cli_env,
    cli_setting_by_env), documented in docs/contracts.md; none is read by a bare getenv."""
    table = doc("src/cli/settings_table.c")
    rows = set(re.findall(r'\.env = "([A-Z0-9_]+)"', table)) | set(re.findall(r"ENV_ONLY\(([A-Z0-9_]+),", table))
    rows |= set(re.findall(r'META\([A-Z_]+, "[a-z-]+", "([A-Z0-9_]+)"', table))
    rows |= set(re.findall(r'\.env_over = "([A-Z0-9_]+)"', table))
    assert len(rows) >= 40
    contracts = doc("docs/contracts.md")
    src = os.path.join(REPO, "src", "cli")
    for name in sorted(os.listdir(src)):
        if not name.endswith(".c") or name == "settings_table.c":
            continue
        text = doc(os.path.join("src", "cli", name))
        for var in re.findall(r'getenv\("((?:TRACKER|OTEL)_[A-Z0-9_]+)"\)', text):
            assert var in NOT_SETTINGS, f"{name}: getenv(\"{var}\"): read it through its row (cli_env)"
        for var in re.findall(r'(?:cli_env|cli_setting_by_env)\("([A-Z0-9_]+)"\)', text):
            assert var in rows, f"{name}: {var} is no row of src/cli/settings_table.c"
            assert f"`{var}`" in contracts, f"{var} is not in docs/contracts.md"
