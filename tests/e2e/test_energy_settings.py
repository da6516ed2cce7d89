"""The energy and carbon settings (the settings table, src/cli/settings.c): --energy auto|off,
--cpu-tdp WATTS, --grid-zone ZONE, --grid-intensity G, each by flag, environment and TOML. A bad
value exits 2 with one line naming it (the config file's with FILE:LINE:COL), before anything
starts; a zone not in the shipped table says how to list the zones. Good values run. summary and
report of a recorded file take --grid-zone and --grid-intensity too."""
import pytest

from conftest import run, tracker_env

# (flag, variable, key, a bad value, a TOML bad value, words of the message)
BAD = [
    ("energy", "TRACKER_ENERGY", "energy", "maybe", '"maybe"', "auto"),
    ("cpu-tdp", "TRACKER_CPU_TDP", "cpu_tdp", "0", "-5", "a number of watts above 0, at most 10000"),
    ("cpu-tdp", "TRACKER_CPU_TDP", "cpu_tdp", "20000", "20000", "a number of watts above 0, at most 10000"),
    ("grid-zone", "TRACKER_GRID_ZONE", "grid_zone", "XX", '"XX"', "a zone of the grid intensity table"),
    ("grid-zone", "TRACKER_GRID_ZONE", "grid_zone", "aws:mars-1", '"aws:mars-1"', "to list them: grep -v"),
    ("grid-intensity", "TRACKER_GRID_INTENSITY", "grid_intensity", "0", "0",
     "a number of grams of CO2e per kWh above 0, at most 10000"),
    ("grid-intensity", "TRACKER_GRID_INTENSITY", "grid_intensity", "abc", '"abc"',
     "a number of grams of CO2e per kWh above 0"),
]


def usage_error(args, env=None):
    p = run(args + ["-q", "--", "true"], env=env or tracker_env())
    assert p.returncode == 2, (args, p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.mark.parametrize("flag,var,key,bad,tbad,words", BAD)
def test_bad_flag(flag, var, key, bad, tbad, words):
    line = usage_error([f"--{flag}", bad])
    assert f"--{flag}: '{bad}' is not" in line and words in line, line


@pytest.mark.parametrize("flag,var,key,bad,tbad,words", BAD)
def test_bad_environment(flag, var, key, bad, tbad, words):
    line = usage_error([], env=tracker_env(**{var: bad}))
    assert f"{var}: not " in line and f"'{bad}'" in line and words in line, line


@pytest.mark.parametrize("flag,var,key,bad,tbad,words", BAD)
def test_bad_config(tmp_path, flag, var, key, bad, tbad, words):
    (tmp_path / "c.toml").write_text(f"[job]\nname = \"j\"\n\n[tracker]\n{key} = {tbad}\n")
    line = usage_error(["-c", str(tmp_path / "c.toml")])
    assert f"c.toml:5:1: [tracker] {key}" in line and words in line, line
    if key == "grid_zone":  # which zone, of the hundreds
        assert f"'{tbad.strip(chr(34))}'" in line, line


def test_zone_message_names_the_table():
    line = usage_error(["--grid-zone", "nowhere"])
    assert "grid-intensity.csv | cut -d, -f1" in line and "aws:eu-west-3" in line, line


@pytest.mark.parametrize("args", [
    ["--energy", "off"], ["--energy", "auto"], ["--cpu-tdp", "205"], ["--cpu-tdp", "10000"],
    ["--grid-zone", "FR"], ["--grid-zone", "fr"], ["--grid-zone", "aws:eu-west-3"], ["--grid-zone", "GCP:europe-north1"],
    ["--grid-intensity", "56"], ["--grid-zone", "DE", "--grid-intensity", "0.5"],
])
def test_good_flags_run(args):
    p = run(args + ["-q", "--", "true"])
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


def test_good_environment_and_config(tmp_path):
    (tmp_path / "c.toml").write_text('[tracker]\nenergy = "off"\ncpu_tdp = 65\ngrid_zone = "hcloud:fsn1"\n'
                                     'grid_intensity = 381\n')
    p = run(["-c", str(tmp_path / "c.toml"), "-q", "--", "true"])
    assert p.returncode == 0, p.stderr
    env = tracker_env(TRACKER_ENERGY="off", TRACKER_CPU_TDP="65.5", TRACKER_GRID_ZONE="US",
                      TRACKER_GRID_INTENSITY="369")
    p = run(["-q", "--", "true"], env=env)
    assert p.returncode == 0, p.stderr


def test_the_command_line_wins_over_a_bad_file_value_never(tmp_path):
    """a bad value in the config file is refused even when the command line gives the setting:
    every layer is read whole (as every other setting)"""
    (tmp_path / "c.toml").write_text('[tracker]\ngrid_zone = "XX"\n')
    line = usage_error(["-c", str(tmp_path / "c.toml"), "--grid-zone", "FR"])
    assert "c.toml:2:1: [tracker] grid_zone: 'XX' is not" in line, line


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "run.jsonl"
    p = run(["-q", "-i", "0.05", "-o", str(out), "--", "sleep", "0.2"])
    assert p.returncode == 0, p.stderr
    return out


@pytest.mark.parametrize("sub", ["summary", "report"])
def test_subcommands_take_the_grid(recorded, tmp_path, sub):
    more = ["-o", str(tmp_path / "r.html"), "--no-price-lookup"] if sub == "report" else []

    def cmd(*grid):  # summary takes its options before the files
        return [sub] + list(grid) + [str(recorded)] + more

    p = run(cmd("--grid-zone", "XX"))
    assert p.returncode == 2, p.stderr
    assert f"{sub}: --grid-zone: 'XX' is not a zone of the grid intensity table" in p.stderr
    p = run(cmd("--grid-intensity", "-1"))
    assert p.returncode == 2, p.stderr
    assert f"{sub}: --grid-intensity: '-1' is not a number of grams of CO2e per kWh above 0" in p.stderr
    p = run(cmd("--grid-zone", "aws:eu-west-3", "--grid-intensity", "56"))
    assert p.returncode == 0, p.stderr
    p = run([sub, "--help"])
    assert "--grid-zone ZONE" in p.stdout and "--grid-intensity G" in p.stdout
