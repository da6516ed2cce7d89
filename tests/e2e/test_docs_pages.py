"""The documents a user reads: every relative link of README.md and docs/*.md leads to a file
that exists and, with a #anchor, to a heading there (GitHub's slugs); the README stays short;
each docs page says what it covers; each subcommand has a man page that groff reads without a
warning, with the sections a man page has, naming exactly the options its --help names; each
--help is whole and exits 0, and lists exactly the options its subcommand accepts (of all the
flags any --help names); and `info` prints its sections as text, and JSON with --json."""
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, run

SUBCOMMANDS = ("summary", "recommend", "report", "history", "info", "upload", "phase")
README_MAX_LINES = 300
README_MAX_BYTES = 15_000


def md_files():
    return [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))


def outside_fences(text):
    """The lines of a Markdown text that are not inside ``` fences."""
    inside = False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            yield line


def slug(heading):
    """GitHub's anchor for a heading: the text as rendered (code spans' text, links' text),
    lower case, anything but letters, digits, spaces, '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    with open(path) as f:
        for line in outside_fences(f.read()):
            m = re.match(r"#{1,6} (.*)", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
    return out


def links(path):
    with open(path) as f:
        for line in outside_fences(f.read()):
            line = re.sub(r"`[^`]*`", "", line)  # a code span is no link
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                yield target


def test_slugs_as_github_makes_them():
    assert slug("What to ask for: the memory need, and the rule") == "what-to-ask-for-the-memory-need-and-the-rule"
    assert slug("Python: `resource_tracker` on the library") == "python-resource_tracker-on-the-library"
    assert slug("The job's cgroup") == "the-jobs-cgroup"


@pytest.mark.parametrize("path", md_files(), ids=lambda p: os.path.relpath(p, REPO))
def test_every_relative_link_resolves(path):
    broken = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            broken.append(f"{target}: no file {os.path.relpath(dest, REPO)}")
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            broken.append(f"{target}: no heading #{frag} in {os.path.relpath(dest, REPO)}")
    assert not broken, f"{os.path.relpath(path, REPO)}: " + "; ".join(broken)


def test_links_are_found():  # the check above looks at something
    found = list(links(os.path.join(REPO, "README.md")))
    assert any(t.startswith("docs/") and "#" in t for t in found), found
    assert len(found) >= 20


def test_readme_is_short():
    with open(os.path.join(REPO, "README.md"), "rb") as f:
        data = f.read()
    assert data.count(b"\n") <= README_MAX_LINES, data.count(b"\n")
    assert len(data) <= README_MAX_BYTES, len(data)


def test_readme_keeps_its_two_commands_first():
    with open(os.path.join(REPO, "README.md")) as f:
        blocks = re.findall(r"```sh\n(.*?)```", f.read(), re.S)
    assert blocks[0].startswith("scripts/install-deps && cmake -S . -B build && cmake --build build")
    assert blocks[1].strip() == "scripts/test"


@pytest.mark.parametrize("path", [p for p in md_files()[1:] if not p.endswith("contracts.md")],
                         ids=lambda p: os.path.relpath(p, REPO))
def test_docs_page_says_what_it_covers(path):
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("# ") and lines[1] == "" and lines[2].startswith("This page covers"), lines[:3]


def help_text(sub):
    p = run([sub, "--help"])
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    return p.stdout


def help_flags(sub):
    """The flags --help's option lines name (those that start with '-' after the indent)."""
    text = help_text(sub)
    opts = text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    flags = set()
    for line in opts.splitlines():
        m = re.match(r"  (-[^ ].*?)(?:  |$)", line)
        if m:
            flags |= set(re.findall(r"--?[a-z][a-z-]*", m.group(1)))
    return flags


def man_page(sub):
    path = os.path.join(REPO, "docs", f"resource-tracker-{sub}.1")
    with open(path) as f:
        return path, f.read()


def man_flags(sub):
    """The flags of the OPTIONS section's items (the line after each .TP)."""
    _, text = man_page(sub)
    opts = text.split("\n.SH OPTIONS\n", 1)[1].split("\n.SH ", 1)[0]
    flags = set()
    lines = opts.splitlines()
    for i, line in enumerate(lines):
        if line == ".TP":
            flags |= set(re.findall(r"--?[a-z][a-z-]*", lines[i + 1].replace("\\-", "-")))
    return flags


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_help_is_whole(sub):
    text = help_text(sub)
    assert text.startswith(f"Usage: resource-tracker {sub}")
    assert len(text.splitlines()) >= 10
    assert "Exit status" in text
    assert "-h, --help" in text


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_man_page_names_the_flags_of_help(sub):
    flags, man = help_flags(sub), man_flags(sub)
    assert "--help" in flags
    assert man == flags, f"only in --help: {sorted(flags - man)}; only in the man page: {sorted(man - flags)}"


OPTION_LINE = re.compile(r"  (?:(-[a-zA-Z]), |    )?(--[a-z][a-z-]*)( \S+)?(?:  |$)")


def help_options(sub):
    """The options of the Options part of SUB's --help (None: the tracking command's), each as
    {flag: takes a value}, its short flag too ("-o")."""
    p = run(([sub] if sub else []) + ["--help"])
    assert p.returncode == 0, p.stderr
    opts = p.stdout.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    out = {}
    for line in opts.splitlines():
        m = OPTION_LINE.match(line)
        if m:
            for flag in filter(None, (m.group(1), m.group(2))):
                out[flag] = m.group(3) is not None
    return out


def man_options(page):
    """The options of the OPTIONS entries of docs/PAGE.1 (the tag line after each .TP), each as
    {flag: takes a value}."""
    with open(os.path.join(REPO, "docs", f"{page}.1")) as f:
        text = f.read()
    lines = text.split("\n.SH OPTIONS\n", 1)[1].split("\n.SH ", 1)[0].splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line == ".TP":
            tag = lines[i + 1].replace("\\-", "-")
            flags = list(re.finditer(r"--?[a-zA-Z][a-z-]*", tag))
            for m in flags:
                out[m.group(0)] = tag[flags[-1].end():].strip() != ""
    return out


def test_help_options_are_read():  # what the test below compares is there
    assert help_options("report") == {"-o": True, "--output": True, "--instance": True, "--no-price-lookup": False,
                                      "--grid-zone": True, "--grid-intensity": True, "-h": False, "--help": False}
    assert len(help_options(None)) >= 30
    assert man_options("resource-tracker-report") == help_options("report")


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_help_lists_exactly_the_options_sub_accepts(sub):
    """Every flag any --help or man page names (the tracking command's, every subcommand's): SUB
    takes it when its --help lists it, and refuses it as an unknown option when not; so an
    option added to SUB (the settings table's commands) is in its --help, and --help lists none
    it refuses."""
    listed = help_options(sub)
    every = help_options(None)
    every.update(man_options("resource-tracker"))
    for other in SUBCOMMANDS:
        every.update(help_options(other))
        every.update(man_options(f"resource-tracker-{other}"))
    wrong = []
    for flag, value in sorted(every.items()):
        value = listed.get(flag, value)
        arg = ([flag, "x"] if flag[1] != "-" else [f"{flag}=x"]) if value else [flag]
        p = run([sub] + arg + ["--help"])
        unknown = f"unknown option '{flag}" in p.stderr
        if flag in listed and (unknown or "needs a value" in p.stderr or "takes no value" in p.stderr):
            wrong.append(f"{flag}: listed but refused ({p.stderr.strip()})")
        elif flag not in listed and not (unknown and p.returncode == 2):
            wrong.append(f"{flag}: taken but not listed (exit {p.returncode}, {p.stderr.strip()!r})")
    assert not wrong, f"{sub}: " + "; ".join(wrong)


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_man_page_sections_and_version(sub):
    _, text = man_page(sub)
    heads = re.findall(r"^\.SH (.*)$", text, re.M)
    for want in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
        assert want in heads, (sub, want)
    version = run(["--version"]).stdout.split()[-1]
    assert re.search(rf'^\.TH RESOURCE-TRACKER-{sub.upper()} 1 "[^"]*" "resource-tracker {re.escape(version)}"',
                     text, re.M)


@pytest.mark.skipif(not shutil.which("groff"), reason="groff is not installed (Debian: groff-base)")
@pytest.mark.parametrize("page", ["resource-tracker"] + [f"resource-tracker-{s}" for s in SUBCOMMANDS])
def test_man_page_has_no_groff_warning(page):
    p = subprocess.run(["groff", "-man", "-ww", "-z", os.path.join(REPO, "docs", f"{page}.1")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_info_text_has_its_sections():
    p = run(["info"])
    assert p.returncode == 0, p.stderr
    heads = [l for l in p.stdout.splitlines() if l and not l.startswith(" ")]
    assert heads == ["Host", "CPU", "Memory", "GPUs", "Storage", "Cloud"]
    body = [l for l in p.stdout.splitlines() if l.startswith(" ")]
    assert all(re.match(r"  \S.{13} \S", l) for l in body), body  # aligned "key  value"
    assert re.search(r"^  vCPUs +\d+$", p.stdout, re.M)
    assert not p.stdout.lstrip().startswith("{")


def test_info_json_parses():
    p = run(["info", "--json"])
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert set(info) == {"host", "cloud"}
    assert info["host"]["vcpus"] >= 1
