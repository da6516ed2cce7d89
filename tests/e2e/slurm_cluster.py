"""A real multi-node SLURM cluster on this one machine for end-to-end tests: Debian 12's
slurm-wlm 22.05 and munge (and, for `sacct`, slurmdbd over MariaDB), started by the test and
gone without a trace when it stops.

Layout. Each SLURM daemon runs in a network namespace and a UTS namespace of its own
(`unshare --net --uts`), so that each is a distinct host as SLURM sees it, with its own hostname
and IP address: slurmctld is `rtctl` (.2), slurmdbd `rtdbd` (.3), the slurmds `rtnode1`,
`rtnode2`, ... (.11, .12, ...). Each namespace holds one end of a veth pair whose other end is a
port of a Linux bridge that the harness makes in the root namespace; the bridge carries .1
(`host_ip`), so the test's client commands (sbatch, squeue, scontrol, srun, sacct) reach the
daemons, and a job can reach a server the test runs in the root namespace at that address. The
subnet is a 10.x.y.0/24 that no address, route or resolver of the machine uses, chosen under a
lock so that two clusters starting at once never take the same one; the bridge and veths are
named after a random token (`rtbr-TOKEN`, `rtv-TOKEN-N`).
Only net and UTS are unshared: the filesystem, the users and the PIDs are the machine's, so a
job runs the repo's build and writes where the test says. slurmstepd and the job's processes
are slurmd's children, in their node's namespaces: `hostname` in a step on node N prints
rtnodeN, and SLURM sets SLURM_JOB_ID, SLURMD_NODENAME, SLURM_NODEID, SLURM_PROCID, ... as on any
cluster.
slurmctld (and slurmdbd) have namespaces of their own rather than the root one: their ports
(6817, 6819) and the slurmds' (6818) then cannot collide with anything on the machine or with
another cluster, where a port picked free in the root namespace could be taken between the pick
and the daemon's bind. Nothing of the cluster listens on a TCP port in the root namespace.
The namespaces are unnamed (no `ip netns add`): each lives as long as a process in it (or a
socket of one while it closes), and a veth goes with its namespace. stop() kills every process
in them and deletes the veths and the bridge itself. When a test run is killed before stop(),
its daemons get SIGTERM (PR_SET_PDEATHSIG) and their namespaces go; the bridge, a veth whose
namespace lingers and the run directory stay until the next cluster starts: the bridge's alias
names the owner's PID and the run directory, and a cluster removes those of owners now gone.
munged (and MariaDB) run in the root namespace, reached by path-bound Unix sockets, which work
from every network namespace. Nothing of /etc/munge, /etc/slurm or /etc/mysql is read:
slurm.conf, slurmdbd.conf, the munge key, the logs (log/), the jobcomp records and the job
scripts (jobs/) are under `workdir`; the sockets (munge's, MariaDB's, slurmstepd's in
SlurmdSpoolDir), slurmctld's state and MariaDB's data under a short directory of /tmp (a Unix
socket's path is limited to 107 bytes and the test's workdir may be long), which stop() removes.
SLURM's cgroup plugins are not used (this machine mixes cgroup v1 and v2): ProctrackType=
proctrack/linuxproc (a step's processes are found by parentage) and TaskPlugin=task/none.
SlurmdParameters=config_overrides lets each node claim `cpus_per_node` CPUs and
`mem_mib_per_node` MiB whatever the machine has; select/cons_tres with CR_CPU shares the nodes'
CPUs between jobs (memory is no consumable: a job without --mem does not take a whole node).

Timing (2 cores, while other work ran). start() takes about 1.5 s (slurmctld needs about 1 s
before it listens), 3 to 5 s with accounting (MariaDB's first start, then slurmdbd's tables,
then slurmctld, one after the other: slurmctld will not start without slurmdbd's answer);
stop() about 0.2 s, 0.6 to 1 s with accounting (slurmctld then takes 1 s to end on SIGTERM: it
gets SIGKILL after half a second). slurmctld schedules no job in its first 3 s or so, then once
a second: a first job starts about 2 s after start(), later ones within a second of their sbatch.

Accounting. SLURM 22.05 keeps per-step figures for `sacct` only in slurmdbd (Debian's plugins
hold accounting_storage/none and /slurmdbd, no flat-file storage), and slurmdbd needs MySQL or
MariaDB. With accounting=True the cluster runs both: mariadbd on an empty data directory
(--skip-grant-tables: no mariadb-install-db, which takes 4 s), with --skip-networking and a Unix
socket, and slurmdbd in namespaces of its own (`rtdbd`). `sacct` then has each step's rows a
moment after it ends (sacct() waits for them): NodeList, NTasks, State, ExitCode, and TotalCPU,
UserCPU and SystemCPU as the kernel counted them for the step's tasks. MaxRSS, AveCPU, MinCPU,
... come from jobacct_gather/linux's polls, every 30 s (SLURM's default): a shorter step has
none or zeros unless the job asks for --acctg-freq=1. Without accounting (the default, 2 to 3 s
faster to start) `sacct` answers "Slurm accounting storage is disabled"; `sstat` still reads a
RUNNING step's figures from its slurmstepds, and `sacct --completion` (`-c`) lists finished
jobs from the jobcomp/filetxt file, one record a job (state, exit code, nodes, times; no steps,
no CPU time).

Usage:
    with SlurmCluster(tmp_path / "slurm") as cluster:
        job = cluster.sbatch("#!/bin/sh\\nsrun hostname\\n", "--nodes=3", f"--output={out}/%j.out")
        result = cluster.wait(job, timeout=60)   # JobResult(state="COMPLETED", exit_code=0, ...)

Needs root (namespaces, a bridge) and the packages that scripts/install-deps --test installs;
unavailable_reason() says why a cluster cannot start here (for pytest.skip)."""
import collections
import ctypes
import fcntl
import ipaddress
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

# what a cluster runs (slurmd starts slurmstepd); with accounting also ACCOUNTING_PROGRAMS
PROGRAMS = ("munged", "slurmctld", "slurmd", "slurmstepd", "sbatch", "srun", "scontrol", "squeue", "sinfo",
            "ip", "unshare", "hostname")
ACCOUNTING_PROGRAMS = ("slurmdbd", "mariadbd", "sacct")
# each daemon listens in a network namespace of its own: SLURM's default ports collide with nothing
CTLD_PORT = 6817
SLURMD_PORT = 6818
DBD_PORT = 6819
# bridges named so are this harness's; their alias names the owner's PID and the run directory
BRIDGE_PREFIX = "rtbr-"
ALIAS_PREFIX = "resource-tracker slurm harness pid "
# taken while a cluster picks its subnet and makes its bridge (and removes stale bridges)
NET_LOCK = "/tmp/resource-tracker-slurm-net.lock"
# a job in one of these states is over
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED"}

JobResult = collections.namedtuple("JobResult", "state exit_code signal fields")
JobResult.__doc__ = """A finished job: its JobState, the exit status and signal of its batch script
(ExitCode=STATUS:SIGNAL), and every KEY=VALUE of scontrol's answer (or of the jobcomp record)."""


class ClusterError(RuntimeError):
    """The cluster could not start, or a command against it failed."""


_unavailable = {}


def unavailable_reason(accounting=False):
    """None when a cluster (with accounting: with slurmdbd and MariaDB) can start here, else why
    not, in a sentence for pytest.skip. Asked once a process: it tries network and UTS
    namespaces, a bridge and a veth pair (a few milliseconds)."""
    if accounting not in _unavailable:
        _unavailable[accounting] = _probe(accounting)
    return _unavailable[accounting]


def _probe(accounting):
    if not os.path.isdir("/proc/self/ns"):
        return "no Linux namespaces here"
    if os.geteuid() != 0:
        return "the SLURM cluster needs root (network namespaces, a bridge, veth pairs)"
    wanted = PROGRAMS + (ACCOUNTING_PROGRAMS if accounting else ())
    missing = [p for p in wanted if not shutil.which(p, path=_path())]
    if missing:
        return f"not installed: {' '.join(missing)} (scripts/install-deps --test installs SLURM, munge and MariaDB)"
    r = subprocess.run([_tool("unshare"), "--net", "--uts", "true"], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        return f"the kernel refuses network or UTS namespaces: {r.stderr.strip()}"
    tok = secrets.token_hex(3)
    for kind, args in (("bridge", ["type", "bridge"]),
                       ("veth pair", ["type", "veth", "peer", "name", f"rtprobp-{tok}"])):
        r = _ip("link", "add", f"rtprobe-{tok}", *args, check=False)
        if r.returncode != 0:
            return f"cannot make a {kind}: {r.stderr.strip()}"
        _ip("link", "del", f"rtprobe-{tok}", check=False)
    return None


def _path():
    """PATH with the sbin directories, where the daemons and ip are."""
    path = os.environ.get("PATH", "/usr/bin:/bin").split(":")
    return ":".join(path + [d for d in ("/usr/sbin", "/sbin") if d not in path])


def _tool(name):
    """A program's path, looked for in the sbin directories too."""
    return shutil.which(name, path=_path()) or name


def ns_id(pid, kind="net"):
    """The namespace of a process as (device, inode), or None when the process is gone."""
    try:
        st = os.stat(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def alive(pid):
    """Whether PID is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({e})\n"


def _ip(*args, check=True, stdin=None):
    r = subprocess.run([_tool("ip"), *args], input=stdin, capture_output=True, text=True, timeout=10)
    if check and r.returncode != 0:
        raise ClusterError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def _die_with_parent():
    """In a daemon before its exec: SIGTERM when the thread that started it ends (the test's
    process, however it ends), so that a killed test run leaves no cluster running."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


def _sweep_stale_bridges():
    """Removes what a cluster whose owner is gone left (a test run killed before its stop()):
    its bridge, the veths still on it (a namespace outlives its processes while a socket of
    theirs is closing) and its run directory, both named in the bridge's alias. Called under
    NET_LOCK."""
    for link in json.loads(_ip("-j", "link", "show", "type", "bridge").stdout or "[]"):
        name, alias = link.get("ifname", ""), link.get("ifalias", "")
        if not (name.startswith(BRIDGE_PREFIX) and alias.startswith(ALIAS_PREFIX)):
            continue
        owner, _, rundir = alias[len(ALIAS_PREFIX):].partition(" ")
        if not owner.isdigit() or alive(int(owner)):
            continue
        for port in json.loads(_ip("-j", "link", "show", "master", name, check=False).stdout or "[]"):
            _ip("link", "del", port["ifname"], check=False)
        _ip("link", "del", name, check=False)
        if os.path.basename(rundir).startswith("rts-") and os.path.isdir(rundir):
            shutil.rmtree(rundir, ignore_errors=True)


def _used_networks():
    """The IPv4 networks the machine uses already: its addresses, routes and resolvers."""
    used = []
    for a in json.loads(_ip("-4", "-j", "addr").stdout or "[]"):
        for info in a.get("addr_info", []):
            used.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", strict=False))
    for r in json.loads(_ip("-4", "-j", "route", "show", "table", "all").stdout or "[]"):
        try:
            used.append(ipaddress.ip_network(r.get("dst", ""), strict=False))
        except ValueError:
            pass  # "default", a broadcast route's name
    try:
        with open("/etc/resolv.conf") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "nameserver" and ":" not in parts[1]:
                    used.append(ipaddress.ip_network(parts[1]))
    except (OSError, ValueError):
        pass
    return used


def _free_subnet():
    """A 10.x.y.0/24 that overlaps nothing the machine uses, at random (a network the machine
    does not show, beyond its router, seldom has the same). Not 10.251 (test_machine.py's veth
    pairs), nor 10.255 (where resolvers often are)."""
    used = _used_networks()
    for _ in range(1000):
        net = ipaddress.ip_network(f"10.{random.randint(64, 250)}.{random.randint(0, 255)}.0/24")
        if not any(net.overlaps(u) for u in used):
            return net
    raise ClusterError("no free 10.x.y.0/24 subnet found")


class SlurmCluster:
    """A SLURM cluster of `nodes` nodes (rtnode1..N), each slurmd in network and UTS namespaces
    of its own on a private bridge; start() (or `with`) starts it, stop() removes every trace.
    `workdir` (made if missing) receives slurm.conf, the munge key, the logs (log/), the
    jobcomp records and the job scripts (jobs/). accounting: also slurmdbd and MariaDB, for
    sacct."""

    def __init__(self, workdir, nodes=3, cpus_per_node=2, mem_mib_per_node=2048, accounting=False,
                 start_timeout=30):
        self.workdir = os.path.abspath(str(workdir))
        self.nodes = nodes
        self.cpus_per_node = cpus_per_node
        self.mem_mib_per_node = mem_mib_per_node
        self.accounting = accounting
        self.start_timeout = start_timeout
        self.node_names = [f"rtnode{i + 1}" for i in range(nodes)]
        self.ctld_name = "rtctl"
        self.dbd_name = "rtdbd"
        self.conf = os.path.join(self.workdir, "slurm.conf")
        self.logdir = os.path.join(self.workdir, "log")
        self.jobdir = os.path.join(self.workdir, "jobs")
        # set by start()
        self.token = None
        self.bridge = None
        self.subnet = None
        self.host_ip = None  # the bridge's address, in the root namespace
        self.ips = {}  # daemon host name -> its address
        self.rundir = None  # short: the sockets, slurmd's spool, MariaDB's data
        self.start_seconds = None
        self.stop_seconds = None
        # name -> Popen of each daemon (munged, mariadbd, rtctl, rtdbd, rtnode1, ...)
        self._procs = {}
        self._logs = {}  # name -> the files that say why it failed
        self._netns = {}  # name -> (device, inode) of its network namespace
        # a descriptor of each namespace, held until stop() is done with them: the kernel gives
        # no later namespace the inode of one still open, so stop() kills only what is ours
        self._ns_fds = []
        self._veths = []
        self._jobs = 0
        self._started = False

    @property
    def hosts(self):
        """The daemons in namespaces of their own: slurmctld, slurmdbd (with accounting), the nodes."""
        return [self.ctld_name] + ([self.dbd_name] if self.accounting else []) + self.node_names

    @property
    def env(self):
        """The environment of a client command against this cluster: the test's own, without
        the SLURM_* variables of an enclosing job, with SLURM_CONF (and the sbin directories in
        PATH)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SLURMD_"))}
        env.update(SLURM_CONF=self.conf, PATH=_path())
        return env

    # -- starting

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """Starts the daemons and returns once every node is idle; raises ClusterError (with the
        tail of the daemon's log) when one does not start within start_timeout seconds. What
        was started is removed again on failure."""
        if self._started:
            return
        self._started = True
        t0 = time.monotonic()
        try:
            self._start(t0 + self.start_timeout)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - t0

    def _start(self, deadline):
        self._logs = {}
        # a workdir used before: the logs and job records of this cluster only
        shutil.rmtree(self.logdir, ignore_errors=True)
        for d in (self.workdir, self.logdir, self.jobdir):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(self.workdir, "jobcomp.txt"), "w"):
            pass
        self.rundir = tempfile.mkdtemp(prefix="rts-", dir="/tmp" if os.path.isdir("/tmp") else None)
        os.chmod(self.rundir, 0o755)  # munged wants its socket's directory open to all
        for d in ["state"] + [f"spool/{n}" for n in self.node_names]:
            os.makedirs(os.path.join(self.rundir, d))
        if self.accounting:
            self._start_mariadbd()  # the slowest to start: first
        self._make_network()
        self._write_conf()
        self._start_munged(deadline)
        # each daemon in its namespaces waits for a line on stdin before its exec: its veth
        # must be there first
        for name in self.hosts:
            self._spawn_in_namespaces(name)
        self._plug_veths(deadline)
        # a slurmd keeps trying to register until slurmctld answers: the nodes start at once
        for name in self.node_names:
            self._go(name)
        if self.accounting:
            # slurmdbd once MariaDB takes connections; slurmctld once slurmdbd does (it
            # registers the cluster there when it starts)
            self._wait_for("mariadbd", deadline, lambda: os.path.exists(self._mysql_socket))
            self._go(self.dbd_name)
            self._wait_port(self.dbd_name, DBD_PORT, deadline)
        self._go(self.ctld_name)
        self._wait_port(self.ctld_name, CTLD_PORT, deadline)
        self._wait_nodes_idle(deadline)

    def _make_network(self):
        """The bridge with .1 on a free subnet: picked and made under NET_LOCK, since two
        clusters starting at once would otherwise see the same subnet free."""
        with open(NET_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _sweep_stale_bridges()
            for _ in range(10):
                tok = secrets.token_hex(3)
                if _ip("link", "add", f"{BRIDGE_PREFIX}{tok}", "type", "bridge", check=False).returncode == 0:
                    break
            else:
                raise ClusterError("could not make a bridge")
            self.token, self.bridge = tok, f"{BRIDGE_PREFIX}{tok}"
            self.subnet = _free_subnet()
            hosts = list(self.subnet.hosts())
            self.host_ip = str(hosts[0])
            self.ips = {self.ctld_name: str(hosts[1]), self.dbd_name: str(hosts[2])}
            self.ips.update({n: str(hosts[10 + i]) for i, n in enumerate(self.node_names)})
            _ip("link", "set", self.bridge, "alias", f"{ALIAS_PREFIX}{os.getpid()} {self.rundir}")
            _ip("addr", "add", f"{self.host_ip}/{self.subnet.prefixlen}", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")

    @property
    def _munge_socket(self):
        return os.path.join(self.rundir, "munge.socket")

    @property
    def _mysql_socket(self):
        return os.path.join(self.rundir, "mysql.socket")

    def _write_conf(self):
        with open(os.path.join(self.workdir, "plugstack.conf"), "w"):
            pass  # no SPANK plugins (not /etc/slurm/plugstack.conf)
        if self.accounting:
            # connections to slurmdbd take their munge socket from AccountingStoragePass
            storage = (f"AccountingStorageType=accounting_storage/slurmdbd\n"
                       f"AccountingStorageHost={self.ips[self.dbd_name]}\nAccountingStoragePort={DBD_PORT}\n"
                       f"AccountingStoragePass={self._munge_socket}\n")
        else:
            storage = "AccountingStorageType=accounting_storage/none\n"
        conf = f"""# written by tests/e2e/slurm_cluster.py
ClusterName=rt{self.token}
SlurmctldHost={self.ctld_name}({self.ips[self.ctld_name]})
SlurmctldPort={CTLD_PORT}
SlurmdPort={SLURMD_PORT}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self._munge_socket}
StateSaveLocation={self.rundir}/state
SlurmdSpoolDir={self.rundir}/spool/%n
SlurmctldPidFile={self.rundir}/slurmctld.pid
SlurmdPidFile={self.rundir}/slurmd-%n.pid
SlurmctldLogFile={self.logdir}/slurmctld.log
SlurmdLogFile={self.logdir}/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={self.workdir}/plugstack.conf
MailProg=/bin/true
# no cgroup plugin: this machine mixes cgroup v1 and v2
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# each node claims the CPUs and memory below, whatever the machine has
SlurmdParameters=config_overrides
ReturnToService=2
# the figures of sstat (a running step) and of sacct (with accounting); jobcomp: sacct -c
JobAcctGatherType=jobacct_gather/linux
{storage}JobCompType=jobcomp/filetxt
JobCompLoc={self.workdir}/jobcomp.txt
# a finished job stays in scontrol's answers for 10 minutes; a killed job's steps get 2 s
MinJobAge=600
KillWait=2
InactiveLimit=0
SchedulerType=sched/builtin
# a batch job is scheduled at the next pass (once a second), not up to 3 s later
SchedulerParameters=batch_sched_delay=0
NodeName=DEFAULT CPUs={self.cpus_per_node} RealMemory={self.mem_mib_per_node} State=UNKNOWN
"""
        for n in self.node_names:
            conf += f"NodeName={n} NodeHostname={n} NodeAddr={self.ips[n]}\n"
        conf += f"PartitionName=rt Nodes={','.join(self.node_names)} Default=YES MaxTime=INFINITE State=UP\n"
        with open(self.conf, "w") as f:
            f.write(conf)
        if self.accounting:
            # slurmdbd reads slurmdbd.conf beside SLURM_CONF; it must be private to SlurmUser
            dbd = os.path.join(self.workdir, "slurmdbd.conf")
            with open(os.open(dbd, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write(f"""# written by tests/e2e/slurm_cluster.py
AuthType=auth/munge
AuthInfo=socket={self._munge_socket}
DbdHost={self.dbd_name}
DbdAddr={self.ips[self.dbd_name]}
DbdPort={DBD_PORT}
SlurmUser=root
PidFile={self.rundir}/slurmdbd.pid
LogFile={self.logdir}/slurmdbd.log
DebugLevel=info
# MariaDB's socket: MYSQL_UNIX_PORT in slurmdbd's environment
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
""")

    def _start_munged(self, deadline):
        key = os.path.join(self.workdir, "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o400), "wb") as f:
            f.write(os.urandom(1024))
        # -F: in the foreground, so that the PID we hold is munged's; --force: the test's
        # directories need not pass munged's checks of who may write to them
        self._popen("munged", ["munged", "-F", "--force", "-S", self._munge_socket, "--key-file", key,
                               "--pid-file", os.path.join(self.rundir, "munged.pid"),
                               "--seed-file", os.path.join(self.rundir, "munged.seed")])
        self._wait_for("munged", deadline, lambda: os.path.exists(self._munge_socket))

    def _start_mariadbd(self):
        """MariaDB for slurmdbd, on an empty data directory: with --skip-grant-tables it needs
        no mariadb-install-db (about 4 s more), and with --skip-networking no port."""
        data = os.path.join(self.rundir, "mysql")
        os.makedirs(data)
        self._popen("mariadbd", ["mariadbd", "--no-defaults", f"--datadir={data}", "--user=root",
                                 f"--socket={self._mysql_socket}", "--skip-networking", "--skip-grant-tables",
                                 f"--pid-file={self.rundir}/mariadbd.pid", "--innodb-buffer-pool-size=32M",
                                 "--innodb-log-file-size=8M", "--innodb-lock-wait-timeout=900",
                                 "--innodb-flush-log-at-trx-commit=0"])

    def _popen(self, name, args, stdin=subprocess.DEVNULL, env=None):
        """Starts a daemon (its own session; SIGTERM when we end), stdout and stderr to
        log/NAME.out."""
        out = os.path.join(self.logdir, f"{name}.out")
        self._logs.setdefault(name, []).insert(0, out)
        with open(out, "ab") as f:
            self._procs[name] = subprocess.Popen(args, stdin=stdin, stdout=f, stderr=subprocess.STDOUT,
                                                 cwd=self.workdir, env=env or self.env,
                                                 preexec_fn=_die_with_parent,
                                                 start_new_session=True)

    def _spawn_in_namespaces(self, name):
        """The daemon of host NAME in new network and UTS namespaces (unshare execs in the same
        PID, then sh execs the daemon): once told (a line on stdin) it brings up its veth's end
        with its address, sets its hostname and becomes slurmctld, slurmdbd or slurmd."""
        env = None
        if name == self.ctld_name:
            daemon = ["slurmctld", "-D", "-f", self.conf]
            self._logs[name] = [os.path.join(self.logdir, "slurmctld.log")]
        elif name == self.dbd_name:
            daemon = ["slurmdbd", "-D"]
            env = dict(self.env, MYSQL_UNIX_PORT=self._mysql_socket)
            self._logs[name] = [os.path.join(self.logdir, "slurmdbd.log")]
        else:
            daemon = ["slurmd", "-D", "-N", name, "-f", self.conf]
            self._logs[name] = [os.path.join(self.logdir, f"slurmd-{name}.log")]
        script = ('read go || exit 1; set -e; ip link set lo up; '
                  f'ip addr add {self.ips[name]}/{self.subnet.prefixlen} dev eth0; ip link set eth0 up; '
                  f'hostname {name}; exec "$@" </dev/null')
        self._popen(name, [_tool("unshare"), "--net", "--uts", "sh", "-c", script, "sh", *daemon],
                    stdin=subprocess.PIPE, env=env)

    def _plug_veths(self, deadline):
        """A veth pair for each daemon's namespace: eth0 inside, rtv-TOKEN-N on the bridge."""
        root = ns_id("self")
        batch = []
        for i, name in enumerate(self.hosts):
            pid = self._procs[name].pid
            # Popen returns before unshare has necessarily unshared: a veth sent to the PID
            # before that would land in the root namespace
            self._wait_for(name, deadline, lambda: ns_id(pid) not in (root, None))
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            self._ns_fds.append(fd)
            st = os.fstat(fd)
            self._netns[name] = (st.st_dev, st.st_ino)
            veth = f"rtv-{self.token}-{i}"
            self._veths.append(veth)
            batch += [f"link add {veth} type veth peer name eth0 netns {pid}",
                      f"link set {veth} master {self.bridge} up"]
        _ip("-batch", "-", stdin="\n".join(batch) + "\n")

    def _go(self, name):
        p = self._procs[name]
        p.stdin.write(b"go\n")
        p.stdin.close()

    def _failed(self, name, why):
        return ClusterError(f"{name} {why}:\n" + "".join(f"--- {path}\n{_tail(path)}" for path in self._logs[name]))

    def _wait_for(self, name, deadline, ready, what="start"):
        """Until ready() is true; raises ClusterError when the daemon NAME exits first or the
        deadline passes."""
        while not ready():
            p = self._procs[name]
            if p.poll() is not None:
                raise self._failed(name, f"exited with status {p.returncode}")
            if time.monotonic() > deadline:
                raise self._failed(name, f"did not {what} within {self.start_timeout} s")
            time.sleep(0.01)

    def _wait_port(self, name, port, deadline):
        """Until the daemon of host NAME takes connections on PORT, reached from the root
        namespace as the clients do (each try that connects leaves an error "Zero Bytes were
        transmitted or received" in its log)."""
        def listening():
            try:
                with socket.create_connection((self.ips[name], port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.02)
                return False
        self._wait_for(name, deadline, listening, "listen")

    def _wait_nodes_idle(self, deadline):
        """Until every node has registered and is idle."""
        states = {}

        def idle():
            r = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False, timeout=10)
            states.update(line.split(None, 1) for line in r.stdout.splitlines() if " " in line)
            for n in self.node_names:
                p = self._procs[n]
                if p.poll() is not None:
                    raise self._failed(n, f"exited with status {p.returncode}")
            if all(states.get(n, "").rstrip("*") == "idle" for n in self.node_names):
                return True
            time.sleep(0.03)
            return False
        try:
            self._wait_for(self.ctld_name, deadline, idle, "see every node idle")
        except ClusterError as e:
            raise ClusterError(f"nodes not idle: {states}\n{e}" + "".join(
                f"--- {path}\n{_tail(path, 10)}" for n in self.node_names for path in self._logs[n])) from None

    # -- using

    def run(self, *cmd, check=True, timeout=30, env=None, **kw):
        """Runs a SLURM client command (sbatch, srun, squeue, scontrol, sinfo, sstat, sacct, ...)
        against this cluster from the root namespace; returns CompletedProcess with text output.
        env: added to self.env; check: raise ClusterError when it fails."""
        e = self.env
        e.update(env or {})
        r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=e, **kw)
        if check and r.returncode != 0:
            raise ClusterError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
        return r

    def sbatch(self, script_text, *args, env=None, cwd=None):
        """Submits a batch job: script_text is written to jobs/job-N.sh, sbatch runs with args
        (e.g. "--nodes=3", "--output=..."), env (added to the test's environment, which the job
        inherits) and cwd (the job's working directory: jobs/ unless given). Returns the job id."""
        self._jobs += 1
        path = os.path.join(self.jobdir, f"job-{self._jobs}.sh")
        with open(path, "w") as f:
            f.write(script_text)
        os.chmod(path, 0o755)
        r = self.run("sbatch", "--parsable", *args, path, env=env, cwd=cwd or self.jobdir)
        return int(r.stdout.strip().split(";")[0])

    def job_fields(self, job_id):
        """scontrol's KEY=VALUE fields of the job, or None when slurmctld knows no such job."""
        r = self.run("scontrol", "show", "job", "-o", str(job_id), check=False, timeout=10)
        if r.returncode != 0 or "JobState=" not in r.stdout:
            return None
        return dict(re.findall(r"(\S+?)=(\S*)", r.stdout))

    def wait(self, job_id, timeout=60):
        """Waits for the job to end, polling scontrol (the jobcomp record once scontrol has
        forgotten the job); returns a JobResult. Raises ClusterError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            fields = self.job_fields(job_id) or self._jobcomp(job_id)
            if fields and fields.get("JobState") in FINAL_STATES:
                status, _, sig = fields.get("ExitCode", "0:0").partition(":")
                return JobResult(fields["JobState"], int(status or 0), int(sig or 0), fields)
            if time.monotonic() > deadline:
                raise ClusterError(f"job {job_id} not over after {timeout} s: {fields}")
            time.sleep(0.1)

    def _jobcomp(self, job_id):
        try:
            with open(os.path.join(self.workdir, "jobcomp.txt")) as f:
                for line in f:
                    if line.startswith(f"JobId={job_id} "):
                        return dict(re.findall(r"(\S+?)=(\S*)", line))
        except OSError:
            pass
        return None

    def sacct(self, job_id, fields=("JobID", "JobName", "State", "ExitCode", "NodeList", "TotalCPU"),
              steps=0, timeout=30):
        """The job's rows in sacct (accounting=True), one dict a row (the job, its batch step,
        its steps) of `fields` and JobID, State and NodeList, once they are complete: the job and
        at least `steps` numbered steps there and over, and the job's row with the nodes
        slurmctld gave it. slurmctld sends the records a moment after the job ends, and the
        job's row can show only the batch host for that moment (slurmdbd made it from the batch
        step's record). Raises ClusterError on timeout."""
        fmt = ",".join(dict.fromkeys(("JobID", "State", "NodeList") + tuple(fields)))
        deadline = time.monotonic() + timeout
        nodes = (self.job_fields(job_id) or {}).get("NodeList")
        while True:
            r = self.run("sacct", "-j", str(job_id), "-P", "-n", "--format", fmt, check=False, timeout=10)
            rows = [dict(zip(fmt.split(","), line.split("|"))) for line in r.stdout.splitlines() if line]
            job = [x for x in rows if x["JobID"] == str(job_id)]
            numbered = [x for x in rows if re.fullmatch(rf"{job_id}\.\d+", x["JobID"])]
            if (job and job[0]["NodeList"] == (nodes or job[0]["NodeList"]) and len(numbered) >= steps
                    and all(x["State"].split()[0] in FINAL_STATES for x in rows)):
                return rows
            if time.monotonic() > deadline:
                raise ClusterError(f"sacct -j {job_id}: not complete after {timeout} s (nodes {nodes},"
                                   f" {steps} steps): {rows} {r.stderr.strip()}")
            time.sleep(0.2)

    def pids(self):
        """The PIDs of the cluster's daemons, by name (munged, rtctl, rtnode1, ...)."""
        return {name: p.pid for name, p in self._procs.items()}

    def namespaces(self):
        """The network namespace of each host (slurmctld, slurmdbd, the nodes) as (device,
        inode), by name, until stop(); the kernel may give a later namespace the same."""
        return dict(self._netns)

    def processes_in_namespaces(self):
        """PIDs of the processes in the cluster's network namespaces: the daemons, slurmstepd,
        the jobs' processes (nothing else can be there)."""
        ours = set(self._netns.values())
        return [int(e) for e in os.listdir("/proc") if e.isdigit() and ours and ns_id(e) in ours]

    # -- stopping

    def stop(self, grace=0.5, timeout=10):
        """Stops everything by its PID: each daemon gets SIGTERM, and SIGKILL when it is still
        there `grace` seconds later (the cluster's state is thrown away: nothing needs a clean
        shutdown, and slurmctld with accounting takes 1 s for one); whatever still runs in the
        namespaces (slurmstepd, the jobs' processes) gets SIGKILL; then the veths, the bridge and
        the run directory go. Bounded by `timeout` seconds; safe to call twice; leaves workdir
        (the logs) in place."""
        t0 = time.monotonic()
        deadline = t0 + timeout
        # MariaDB's data goes with the run directory: SIGKILL at once
        self._signal("mariadbd", signal.SIGKILL)
        for name in self._procs:
            self._signal(name, signal.SIGTERM)
        self._reap(list(self._procs), min(t0 + grace, deadline))
        # what they leave behind (slurmd does not end running steps when it stops)
        while True:
            left = self.processes_in_namespaces()
            if not left or time.monotonic() > deadline:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)
        for p in self._procs.values():
            if p.stdin and not p.stdin.closed:
                p.stdin.close()
        # deleting the root end of a veth deletes both (the kernel would, but later, once the
        # namespace is gone); -force: on past one that is gone already
        links = self._veths + ([self.bridge] if self.bridge else [])
        if links:
            _ip("-force", "-batch", "-", stdin="".join(f"link del {l}\n" for l in links), check=False)
        self._veths, self.bridge = [], None
        # the namespaces go with their last process and this descriptor
        for fd in self._ns_fds:
            os.close(fd)
        self._ns_fds, self._netns = [], {}
        if self.rundir:
            shutil.rmtree(self.rundir, ignore_errors=True)
            self.rundir = None
        self._procs = {}
        self._started = False
        self.stop_seconds = time.monotonic() - t0

    def _signal(self, name, sig):
        p = self._procs.get(name)
        if p is not None and p.poll() is None:
            try:
                p.send_signal(sig)
            except ProcessLookupError:
                pass

    def _reap(self, names, deadline):
        """Waits for the daemons NAMES to exit; SIGKILL for those still there at the deadline."""
        for name in names:
            p = self._procs[name]
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One cluster with accounting for a test module (import it into the module: each module
    gets its own), stopped after the module's last test; skips saying why where none can start."""
    reason = unavailable_reason(accounting=True)
    if reason:
        pytest.skip(reason)
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"), accounting=True)
    c.start()
    print(f"cluster {c.bridge} {c.subnet}: started in {c.start_seconds:.2f} s")
    yield c
    c.stop()
