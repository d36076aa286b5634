#!/usr/bin/env python3
"""CPU seconds per 100,000 lines of the whole cluster against one plain typingd, on the same input.

    cost.py [--lines 50000] [--runs 3] [--rates 0,5000,1000] [--baseline BINARY] [--keep]

Starts its own 3-node cluster (cluster.sh, ports from --port-base, default
20222, not the cluster's usual ones), and for each run and each rate (0:
unpaced), alternately:

  plain    one typingd --clock manual --no-drain with TYPINGD_OPTIONS (the
           shards' engine options) reading the input, paced by this script at
           the rate;
  cluster  a fresh stream (typingd-cluster ctl wipe), 4 shards (typingd-cluster
           shard --tick-ms 0 --snapshot-every 0) started and caught up, then
           typingd-cluster route started, and once it says it is reading, fed
           the input by this script at the rate (as the plain typingd is), until
           `typingd-cluster ctl idle` says every shard applied everything.
  baseline with --baseline BINARY, the same again with that typingd-cluster (a
           build of another commit), right after: its figures are in the same
           run, against the same plain typingd.

The plain typingd's CPU is its rusage. The cluster's is the router's rusage less
its CPU when it started reading (its start-up: connecting, the stream, its
checkpoint; printed apart), plus, read from /proc/<pid>/stat before the router
starts and once the shards are idle, utime+stime of every shard (typingd's
engine runs inside it) and of the 3 nats-servers: every process the cluster
runs, start-up of the shards and the router excluded (the same for 10 lines or
10 million), idle time while the router reads included (and `ctl idle`'s
looks, a second or so of stats requests). It prints each run (each role's
share) and the medians, and per rate the median of each cluster run's ratio to
the plain run just before it (on a noisy machine the two move together). The
last line is

    cluster cost: unpaced R1x, 5000/s R2x, 1000/s R3x

(the rates given, in order). The input is workload.py's (it carries its own
"at" and ticks, hence --tick-ms 0). The shards run from the repository's root
(TYPINGD_OPTIONS names `phrases`). Everything started is stopped by pid.
"""
import argparse
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import json

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.dirname(HERE)
ROOT = os.path.dirname(CLUSTER)
TICK = os.sysconf("SC_CLK_TCK")
PARTITIONS = 4


def log(text):
    print("cost.py: " + text, file=sys.stderr, flush=True)


def start_router(command, log_path, env):
    """Starts `typingd-cluster route` (command) reading a pipe, its stderr copied to
    log_path by a thread: (the process, that thread, an event set once the router
    says it is reading)."""
    err = open(log_path, "ab")
    router = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    reading = threading.Event()

    def relay():
        with err:
            for line in router.stderr:
                err.write(line)
                if b": reading at byte " in line:
                    reading.set()
    relayer = threading.Thread(target=relay)
    relayer.start()
    return router, relayer, reading


def cpu_of(pid):
    """utime+stime+cutime+cstime of a live process, in seconds (0 when gone)."""
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # fields[0] is the state (field 3): utime is field 14, so fields[11..14].
    return sum(int(x) for x in fields[11:15]) / TICK


def rusage_wait(proc):
    """Waits for a Popen child; its CPU seconds (user + system) from wait4."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def feed(pipe, data, rate):
    """Writes data's lines to pipe: all at once (rate 0) or `rate` lines a second, in 10 ms slices."""
    try:
        if not rate:
            pipe.write(data)
            return
        lines = data.split(b"\n")
        step = max(1, int(rate / 100))
        started = time.monotonic()
        for i in range(0, len(lines), step):
            chunk = b"\n".join(lines[i:i + step])
            pipe.write(chunk + (b"\n" if i + step < len(lines) else b""))
            pipe.flush()
            ahead = (i + step) / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
    except BrokenPipeError:
        pass
    finally:
        try:
            pipe.close()
        except BrokenPipeError:
            pass


def typingd_options():
    """TYPINGD_OPTIONS: the environment's, else cluster.conf's (as the shell reads it)."""
    text = os.environ.get("TYPINGD_OPTIONS")
    if not text:
        text = subprocess.check_output(["sh", "-c", '. "$1" && printf %s "$TYPINGD_OPTIONS"', "sh",
                                        os.path.join(CLUSTER, "cluster.conf")]).decode()
    return shlex.split(text)


class Cost:
    def __init__(self, args):
        self.args = args
        self.work = args.work or tempfile.mkdtemp(prefix="typingd-cost.")
        os.makedirs(self.work, exist_ok=True)
        # The nodes end by themselves after CLUSTER_LIFETIME s (cluster.sh's default, 600,
        # is shorter than a default run: 3 runs at 1000 lines/s are 3 minutes of input alone).
        self.env = dict(os.environ, PORT_BASE=str(args.port_base),
                        CLUSTER_LIFETIME=os.environ.get("CLUSTER_LIFETIME", "7200"))
        self.urls = subprocess.check_output([os.path.join(CLUSTER, "cluster.sh"), "urls"], env=self.env).decode().strip()
        self.input = os.path.join(self.work, "input.jsonl")
        self.shards = []
        self.started_nats = False

    def prepare(self):
        if self.args.input:
            self.input = os.path.abspath(self.args.input)
        else:
            with open(self.input, "wb") as out:
                subprocess.check_call([sys.executable, os.path.join(HERE, "workload.py"), "--lines", str(self.args.lines)],
                                      stdout=out)
        with open(self.input, "rb") as f:
            self.data = f.read()
        self.count = self.data.count(b"\n")
        log("input: {} lines, {} bytes ({})".format(self.count, len(self.data), self.input))
        log("starting a 3-node cluster at {}".format(self.urls))
        self.started_nats = True
        subprocess.check_call([os.path.join(CLUSTER, "cluster.sh"), "start", os.path.join(self.work, "nats")], env=self.env)
        self.ctl(self.args.binary, "ready")

    def ctl(self, binary, *what):
        for attempt in range(5):   # a young cluster may time a request out while it elects its leaders
            done = subprocess.run([binary, "ctl"] + list(what) + ["--servers", self.urls], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=400, env=self.env, cwd=ROOT)
            if done.returncode == 0:
                return done.stdout.decode()
            log("ctl {} failed ({}): {}".format(" ".join(what), done.returncode, done.stderr.decode().strip()[-300:]))
            time.sleep(2)
        sys.exit("cost.py: typingd-cluster ctl {} failed".format(" ".join(what)))

    def nats_pids(self):
        pids = []
        for node in ("n1", "n2", "n3"):
            with open(os.path.join(self.work, "nats", node + ".pid")) as f:
                pids.append(int(f.read().strip()))
        return pids

    # -- one plain typingd -------------------------------------------------------

    def plain(self, rate):
        command = [self.args.typingd, "--clock", "manual", "--no-drain"] + self.args.typingd_options
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=ROOT)
        started = time.monotonic()
        feeder = threading.Thread(target=feed, args=(proc.stdin, self.data, rate))
        feeder.start()
        seconds = rusage_wait(proc)
        feeder.join()
        if proc.returncode != 0:
            sys.exit("cost.py: typingd exited {}".format(proc.returncode))
        return {"total": seconds, "wall": time.monotonic() - started}

    # -- the cluster ----------------------------------------------------------------

    def start_shards(self, binary, label, run):
        # A fresh cluster: `ctl wipe --force` (an older typingd-cluster, as a
        # --baseline, has no wipe: its setup wiped).
        listed = subprocess.run([binary, "ctl", "--help"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        has_wipe = any(line.split()[:1] == [b"wipe"] for line in listed.splitlines())
        self.ctl(binary, *(["wipe", "--force"] if has_wipe else ["setup"]), *self.args.ctl_option)
        self.shards, logs = [], []
        for p in range(PARTITIONS):
            path = os.path.join(self.work, "shard-{}-{}-{}.log".format(label, run, p))
            logs.append(path)
            command = [binary, "shard", "--servers", self.urls, "--partition", str(p), "--partitions", str(PARTITIONS),
                       "--lifetime", "900", "--snapshot-every", "0"] + self.args.shard_option
            with open(path, "ab") as out:
                self.shards.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=self.env))
        deadline = time.monotonic() + 60
        for proc, path in zip(self.shards, logs):
            while True:
                with open(path, "rb") as f:
                    if b"caught up" in f.read():
                        break
                if time.monotonic() > deadline or proc.poll() is not None:
                    with open(path, "rb") as f:
                        tail = f.read().decode("utf-8", "replace").splitlines()[-8:]
                    sys.exit("cost.py: a shard did not start ({}); the end of its log:\n  {}".format(
                        "it exited {}".format(proc.returncode) if proc.returncode is not None else "60 s",
                        "\n  ".join(tail)))
                time.sleep(0.05)

    def stop_shards(self):
        for proc in self.shards:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.shards:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.shards = []

    def published(self, binary):
        """What the shards published (their stats): events and messages, for where the nodes' time goes."""
        events = messages = 0
        for line in self.ctl(binary, "stats").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if row.get("role") == "owner":
                events += int(row.get("events_published", 0))
                messages += int(row.get("messages_published", 0))
        return events, messages

    def cluster(self, binary, label, rate, run):
        self.start_shards(binary, label, run)
        roles = {pid: "nats-server" for pid in self.nats_pids()}
        for p, proc in enumerate(self.shards):
            roles[proc.pid] = "shard {}".format(p)
        before = {pid: cpu_of(pid) for pid in roles}
        command = [binary, "route", "--servers", self.urls, "--partitions", str(PARTITIONS),
                   "--name", "cost{}".format(run)] + self.args.router_option
        # The router reads a pipe that this script feeds at the rate, as the plain
        # typingd does; its CPU counts from the moment it says it is reading (its
        # start-up, like the shards', is apart: the same for 10 lines or 10 million).
        router_log = os.path.join(self.work, "router-{}-{}.log".format(label, run))
        router, relayer, reading = start_router(command, router_log, self.env)
        if not reading.wait(120):
            router.kill()
            router.wait()
            sys.exit("cost.py: the router did not start reading in 120 s; see {}".format(router_log))
        startup = cpu_of(router.pid)
        started = time.monotonic()
        feeder = threading.Thread(target=feed, args=(router.stdin, self.data, rate))
        feeder.start()
        router_cpu = rusage_wait(router)
        feeder.join()
        relayer.join()
        if router.returncode != 0:
            sys.exit("cost.py: the router exited {}; see {}".format(router.returncode, router_log))
        self.ctl(binary, "idle", "--timeout", "300")
        wall = time.monotonic() - started
        after = {pid: cpu_of(pid) for pid in roles}
        events, messages = self.published(binary)
        self.stop_shards()
        result = {"router": max(0.0, router_cpu - startup), "router start-up": startup, "wall": wall,
                  "events": events, "event messages": messages}
        for pid, role in roles.items():
            result[role] = result.get(role, 0.0) + max(0.0, after[pid] - before[pid])
        result["shards"] = sum(result["shard {}".format(p)] for p in range(PARTITIONS))
        result["total"] = result["router"] + result["shards"] + result["nats-server"]
        return result


ROLES = ["router"] + ["shard {}".format(p) for p in range(PARTITIONS)] + ["nats-server"]


def per100k(seconds, lines):
    return seconds * 100000 / lines


def rate_name(rate, short=False):
    if not rate:
        return "unpaced"
    return "{:.0f}/s".format(rate) if short else "{:.0f} lines/s".format(rate)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=50000, help="workload.py --lines (default: %(default)s)")
    parser.add_argument("--input", help="command lines to use instead of a workload")
    parser.add_argument("--runs", type=int, default=3, help="runs of each (default: %(default)s)")
    parser.add_argument("--rates", default="0,5000,1000",
                        help="comma-separated lines a second, 0: unpaced (default: %(default)s)")
    parser.add_argument("--port-base", type=int, default=int(os.environ.get("COST_PORT_BASE", "20222")),
                        help="the nodes' PORT_BASE (default: COST_PORT_BASE, else %(default)s)")
    parser.add_argument("--typingd", default=os.environ.get("TYPINGD_BINARY", os.path.join(ROOT, ".build/release/typingd")))
    parser.add_argument("--binary", default=os.path.join(CLUSTER, ".build/release/typingd-cluster"),
                        help="typingd-cluster (default: %(default)s)")
    parser.add_argument("--baseline", help="another typingd-cluster, run after each cluster run, for a before/after")
    parser.add_argument("--shard-option", action="append", default=[], help="more shard options (repeat)")
    parser.add_argument("--router-option", action="append", default=[], help="more route options (repeat)")
    parser.add_argument("--ctl-option", action="append", default=[], help="ctl wipe (setup) options, e.g. --storage=memory")
    parser.add_argument("--work", help="work folder (default: a new one in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    args.typingd_options = typingd_options()
    if not any(o.startswith("--tick-ms") for o in args.shard_option):
        args.shard_option += ["--tick-ms", "0"]
    try:
        rates = [float(r) for r in args.rates.split(",")]
    except ValueError:
        parser.error("--rates: numbers, comma-separated")
    for path, what in ((args.typingd, "--typingd"), (args.binary, "--binary"), (args.baseline, "--baseline")):
        if path and not os.access(path, os.X_OK):
            parser.error("{}: no executable at {} (build it first)".format(what, path))
    kinds = [("cluster", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])

    cost = Cost(args)
    results = {}
    try:
        cost.prepare()
        for run in range(args.runs):
            for rate in rates:
                for kind, binary in [("plain", None)] + kinds:
                    got = cost.plain(rate) if kind == "plain" else cost.cluster(binary, kind, rate, run)
                    results.setdefault((rate, kind), []).append(got)
                    parts = ", ".join("{} {:.2f}".format(k, per100k(got[k], cost.count)) for k in ROLES if k in got)
                    print("run {} {:>7}: {:<8} {:6.2f} CPU-s per 100k lines{} in {:.1f} s{}".format(
                        run + 1, rate_name(rate, True), kind, per100k(got["total"], cost.count),
                        " ({})".format(parts) if parts else "", got["wall"],
                        "; {} events out in {} messages; the router's start-up {:.2f} CPU-s apart".format(
                            got["events"], got["event messages"], got["router start-up"])
                        if "events" in got else ""),
                        flush=True)
    finally:
        cost.stop_shards()
        if cost.started_nats:
            subprocess.call([os.path.join(CLUSTER, "cluster.sh"), "stop", os.path.join(cost.work, "nats")], env=cost.env)
        if not args.keep and not args.work:
            subprocess.call(["rm", "-rf", cost.work])
        elif args.keep:
            log("kept " + cost.work)
    print("medians of {} alternating runs, {} lines, CPU-s per 100k lines:".format(args.runs, cost.count))
    final = {}
    for kind, _ in kinds:
        for rate in rates:
            plain_runs = results[(rate, "plain")]
            plain = statistics.median(per100k(r["total"], cost.count) for r in plain_runs)
            runs = results[(rate, kind)]
            total = statistics.median(per100k(r["total"], cost.count) for r in runs)
            parts = ", ".join("{} {:.2f}".format(k, statistics.median(per100k(r[k], cost.count) for r in runs))
                              for k in ROLES)
            startup = statistics.median(r["router start-up"] for r in runs)
            # Each cluster run against the plain run just before it: on a noisy machine both
            # move together, and the median of these ratios moves least.
            ratios = [c["total"] / p["total"] for c, p in zip(runs, plain_runs)]
            ratio = statistics.median(ratios)
            if kind == "cluster":
                final[rate] = ratio
            print("  {:<8} {:>13}: plain typingd {:.3f}, cluster {:.2f} ({}); median of the runs' ratios {:.2f}x ({}); "
                  "the router's start-up {:.2f} CPU-s a run apart".format(
                      kind, rate_name(rate), plain, total, parts, ratio, " ".join("{:.2f}".format(r) for r in ratios),
                      startup))
    print("cluster cost: " + ", ".join("{} {:.1f}x".format(rate_name(rate, True), final[rate]) for rate in rates))


if __name__ == "__main__":
    main()
