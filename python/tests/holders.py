"""holders.py - a child process holding a given number of bytes of its own, touched memory
until told to end: what the gpu_tracker tests measure the tracker against."""
import subprocess
import sys
import textwrap

HOLD = textwrap.dedent("""
    import sys, time
    mine = bytearray(int(sys.argv[1]))
    mine[::4096] = b"\\x01" * (len(mine) // 4096)
    print("ready", flush=True)
    sys.stdin.readline()
""")


def holder(nbytes):
    """A child process holding nbytes of its own memory, once it says "ready"; ends on a line."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(nbytes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def release(p):
    p.stdin.write("\n")
    p.stdin.close()
    p.wait(10)
    p.stdout.close()
