"""Replays a captured fixture tree through build/fixture-sample: baseline on the first reading,
then the t1 counters copied over in place (the sampler keeps its files open) and a second
reading at the captured clock. Returns the sample as parsed JSON and the CSV row (views=True:
every view of it as one text, as fixture-sample writes them with FIXTURE_VIEWS=1)."""
import json
import os
import shutil
import subprocess

from conftest import BUILD_DIR

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def replay(case, tmp_path, views=False):
    src = os.path.join(FIXTURES, case)
    work = os.path.join(str(tmp_path), case)
    shutil.copytree(src, work, symlinks=True)
    with open(os.path.join(work, "clock")) as f:
        mono0, real0, mono1, real1 = f.read().split()
    env = dict(os.environ)
    env.pop("FIXTURE_PID", None)
    env["FIXTURE_VIEWS"] = "1" if views else "0"
    if os.path.exists(os.path.join(work, "pid")):
        with open(os.path.join(work, "pid")) as f:
            env["FIXTURE_PID"] = f.read().strip()
    p = subprocess.Popen(
        [os.path.join(BUILD_DIR, "fixture-sample"), os.path.join(work, "proc"), os.path.join(work, "sys"),
         os.path.join(work, "statvfs")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    p.stdin.write(f"{mono0} {real0}\n")
    p.stdin.flush()
    assert p.stdout.readline().strip() == "ok"
    t1 = os.path.join(work, "t1", "proc")
    for root, _dirs, files in os.walk(t1):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), t1)
            shutil.copyfile(os.path.join(root, name), os.path.join(work, "proc", rel))  # same inode, truncated
    p.stdin.write(f"{mono1} {real1}\n")
    p.stdin.flush()
    if views:
        text = []
        while not text or text[-1] not in ("== end\n", ""):
            text.append(p.stdout.readline())
        line, row = None, "".join(text)
    else:
        line = p.stdout.readline()
        row = p.stdout.readline()
    p.stdin.close()
    err = p.stderr.read()
    assert p.wait(timeout=10) == 0, err
    return (json.loads(line) if line is not None else None), row, err
