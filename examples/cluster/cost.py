#!/usr/bin/env python3
"""CPU seconds per 100,000 lines of the whole cluster against one plain typingd, on the same input.

    cost.py [--lines 50000] [--runs 3] [--rates 0,5000] [--keep]

Starts its own 3-node cluster (cluster.sh, ports from PORT_BASE: the
environment's, else cluster.conf's), and for each rate (0: unpaced) and each
run, alternately:

  plain    one typingd --clock manual --no-drain (and the shards' typingd
           options) reading the input, paced by this script at the rate;
  cluster  a fresh stream (ctl.py setup), 4 shards (shard.py) started and
           caught up, then router.py started, and once it says it is reading,
           fed the input by this script at the rate (as the plain typingd is),
           until every shard has acknowledged everything.

The plain typingd's CPU is its rusage. The cluster's is the router's rusage less
its CPU when it started reading (its start-up: connecting, the stream, its
checkpoint; printed apart), plus, read from /proc/<pid>/stat before the router
starts and once the shards are idle, utime+stime (and cutime+cstime, for
children that ended) of every shard runner, every shard's typingd and the 3
nats-servers: every process the cluster runs, start-up of the shards and the
router excluded (the same for 10 lines or 10 million), idle time while the
router reads included. It prints each run and the medians, and the ratio
cluster/plain per rate (the issue's targets: at most 3x unpaced, 10x at 5,000
lines/s), the median of each run's ratio to the plain run just before it (on
a noisy machine the two move together), and the ratio again with the router's
start-up counted in.

The input is workload.py's (check.sh's workload: it carries its own "at" and
ticks, so the shards run with --tick-ms 0 unless --shard-option says
otherwise). --profile DIR runs the router under cProfile (slower: for where the
time goes, not for the figures).
"""
import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TICK = os.sysconf("SC_CLK_TCK")
PARTITIONS = 4


def log(text):
    print("cost.py: " + text, file=sys.stderr, flush=True)


def cpu_of(pid):
    """utime+stime+cutime+cstime of a live process, in seconds (0 when gone)."""
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # fields[0] is the state (field 3): utime is field 14, so fields[11..14].
    return sum(int(x) for x in fields[11:15]) / TICK


def children_of(pid):
    out = []
    try:
        for task in os.listdir("/proc/{}/task".format(pid)):
            with open("/proc/{}/task/{}/children".format(pid, task)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


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


class Cost:
    def __init__(self, args):
        self.args = args
        self.work = args.work or tempfile.mkdtemp(prefix="typingd-cost.")
        self.py = sys.executable
        self.env = dict(os.environ)
        self.urls = subprocess.check_output([os.path.join(HERE, "cluster.sh"), "urls"], env=self.env).decode().strip()
        self.input = os.path.join(self.work, "input.jsonl")
        self.shards = []

    def prepare(self):
        if self.args.input:
            self.input = os.path.abspath(self.args.input)
        else:
            with open(self.input, "wb") as out:
                subprocess.check_call([self.py, os.path.join(HERE, "workload.py"), "--lines", str(self.args.lines)],
                                      stdout=out)
        with open(self.input, "rb") as f:
            self.data = f.read()
        self.count = self.data.count(b"\n")
        log("input: {} lines, {} bytes ({})".format(self.count, len(self.data), self.input))
        log("starting a 3-node cluster at {}".format(self.urls))
        subprocess.check_call([os.path.join(HERE, "cluster.sh"), "start", os.path.join(self.work, "nats")], env=self.env)
        self.ctl("ready")

    def ctl(self, *what):
        for attempt in range(5):   # a young cluster may time a request out while it elects its leaders
            if subprocess.call([self.py, os.path.join(HERE, "ctl.py"), "--servers", self.urls] + list(what),
                               stdout=subprocess.DEVNULL, timeout=120) == 0:
                return
            time.sleep(2)
        sys.exit("cost.py: ctl.py {} failed".format(" ".join(what)))

    def nats_pids(self):
        pids = []
        for node in ("n1", "n2", "n3"):
            with open(os.path.join(self.work, "nats", node + ".pid")) as f:
                pids.append(int(f.read().strip()))
        return pids

    # -- one plain typingd -------------------------------------------------------

    def plain(self, rate):
        command = [self.args.typingd, "--clock", "manual", "--no-drain"] + self.args.typingd_options
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        started = time.monotonic()
        feeder = threading.Thread(target=feed, args=(proc.stdin, self.data, rate))
        feeder.start()
        seconds = rusage_wait(proc)
        feeder.join()
        if proc.returncode != 0:
            sys.exit("cost.py: typingd exited {}".format(proc.returncode))
        return {"total": seconds, "typingd": seconds, "wall": time.monotonic() - started}

    # -- the cluster ----------------------------------------------------------------

    def start_shards(self, run):
        self.ctl("setup", *self.args.ctl_option)
        self.shards, logs = [], []
        for p in range(PARTITIONS):
            path = os.path.join(self.work, "shard-{}-{}.log".format(run, p))
            logs.append(path)
            command = [self.py, os.path.join(HERE, "shard.py"), "--servers", self.urls, "--partition", str(p),
                       "--typingd", self.args.typingd, "--lifetime", "900", "--partitions", str(PARTITIONS),
                       "--snapshot-every", "0"] + self.args.shard_option + [
                       "--"] + self.args.typingd_options
            with open(path, "ab") as out:
                self.shards.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT))
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
            proc.send_signal(signal.SIGTERM)
        for proc in self.shards:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.shards = []

    def processes(self):
        """{pid: role} of every process the cluster runs but the router."""
        roles = {pid: "nats-server" for pid in self.nats_pids()}
        for proc in self.shards:
            roles[proc.pid] = "shard"
            for child in children_of(proc.pid):
                roles[child] = "typingd"
        return roles

    async def wait_idle(self):
        """Until every shard's consumer has nothing pending or unacknowledged."""
        sys.path.insert(0, HERE)
        from common import STREAM, connect
        nc = await connect(self.urls, "cost", timeout=10)
        js = nc.jetstream()
        info = await js.stream_info(STREAM)
        last = info.state.last_seq
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            done = 0
            for p in range(PARTITIONS):
                try:
                    consumer = await js.consumer_info(STREAM, "shard-{}".format(p))
                except Exception:
                    break
                if consumer.num_pending or consumer.num_ack_pending:
                    break
                done += 1
            if done == PARTITIONS:
                published = {"events_published": 0, "messages_published": 0}
                for p in range(PARTITIONS):
                    try:   # what the shards published (their stats), for where the nodes' time goes
                        reply = json.loads((await nc.request("typingd.stats.{}".format(p), b"", timeout=2)).data)
                        for key in published:
                            published[key] += int(reply.get(key, 0))
                    except Exception:
                        pass
                await nc.close()
                return last, published
            await asyncio.sleep(0.05)
        sys.exit("cost.py: the shards were still busy after 300 s")

    def cluster(self, rate, run):
        self.start_shards(run)
        roles = self.processes()
        before = {pid: cpu_of(pid) for pid in roles}
        command = [self.py, os.path.join(HERE, "router.py"), "--servers", self.urls, "--partitions", str(PARTITIONS),
                   "--name", "cost{}".format(run)] + self.args.router_option
        if self.args.profile:
            os.makedirs(self.args.profile, exist_ok=True)
            command[1:1] = ["-m", "cProfile", "-o", os.path.join(self.args.profile, "router-{}-{}.prof".format(
                rate, run))]
        # The router reads a pipe that this script feeds at the rate, as the plain
        # typingd does; its CPU counts from the moment it says it is reading (its
        # start-up, like the shards', is apart: the same for 10 lines or 10 million).
        with open(os.path.join(self.work, "router-{}.log".format(run)), "wb") as err:
            router = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
            reading = threading.Event()

            def relay():
                for line in router.stderr:
                    err.write(line)
                    if b": reading at byte " in line:
                        reading.set()
                err.flush()
            relayer = threading.Thread(target=relay)
            relayer.start()
            if not reading.wait(120):
                router.kill()
                sys.exit("cost.py: the router did not start reading in 120 s; see {}".format(err.name))
            startup = cpu_of(router.pid)
            started = time.monotonic()
            feeder = threading.Thread(target=feed, args=(router.stdin, self.data, rate))
            feeder.start()
            router_cpu = rusage_wait(router)
            feeder.join()
            relayer.join()
        if router.returncode != 0:
            sys.exit("cost.py: the router exited {}; see {}".format(router.returncode, err.name))
        messages, published = asyncio.run(self.wait_idle())
        wall = time.monotonic() - started
        # Children that appeared meanwhile (a restarted typingd) count from 0.
        for proc in self.shards:
            for child in children_of(proc.pid):
                if child not in roles:
                    roles[child], before[child] = "typingd", 0.0
        after = {pid: cpu_of(pid) for pid in roles}
        self.stop_shards()
        result = {"router": max(0.0, router_cpu - startup), "router start-up": startup, "wall": wall, "messages": messages,
                  "events": published["events_published"], "event messages": published["messages_published"]}
        for pid, role in roles.items():
            result[role] = result.get(role, 0.0) + max(0.0, after[pid] - before[pid])
        result["total"] = sum(result.get(k, 0.0) for k in ("router", "shard", "typingd", "nats-server"))
        return result


def per100k(seconds, lines):
    return seconds * 100000 / lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=50000, help="workload.py --lines (default: %(default)s)")
    parser.add_argument("--input", help="command lines to use instead of a workload")
    parser.add_argument("--runs", type=int, default=3, help="runs of each (default: %(default)s)")
    parser.add_argument("--rates", default="0,5000", help="comma-separated lines a second, 0: unpaced (default: %(default)s)")
    parser.add_argument("--typingd", default=os.environ.get("TYPINGD_BINARY", os.path.join(ROOT, ".build/release/typingd")))
    parser.add_argument("--typingd-option", action="append", dest="typingd_options",
                        help="typingd options, for the plain one and every shard's (default: the phrases tables, "
                             "--list-style group, as check.sh)")
    parser.add_argument("--shard-option", action="append", default=[], help="more shard.py options (repeat)")
    parser.add_argument("--router-option", action="append", default=[], help="more router.py options (repeat)")
    parser.add_argument("--ctl-option", action="append", default=[], help="ctl.py setup options, e.g. --storage=memory")
    parser.add_argument("--profile", metavar="DIR", help="run the router under cProfile, its profiles in DIR")
    parser.add_argument("--work", help="work folder (default: a new one in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    if args.typingd_options is None:
        args.typingd_options = ["--phrases", os.path.join(ROOT, "phrases"), "--list-style", "group"]
    if not any(o.startswith("--tick-ms") for o in args.shard_option):
        args.shard_option += ["--tick-ms", "0"]
    try:
        rates = [float(r) for r in args.rates.split(",")]
    except ValueError:
        parser.error("--rates: numbers, comma-separated")
    if not os.access(args.typingd, os.X_OK):
        parser.error("no typingd at {} (give --typingd or TYPINGD_BINARY)".format(args.typingd))

    cost = Cost(args)
    results = {}
    try:
        cost.prepare()
        for run in range(args.runs):
            for rate in rates:
                for kind in ("plain", "cluster"):
                    got = cost.plain(rate) if kind == "plain" else cost.cluster(rate, run)
                    results.setdefault((rate, kind), []).append(got)
                    parts = ", ".join("{} {:.2f}".format(k, per100k(v, cost.count))
                                      for k, v in got.items() if k not in ("total", "wall", "messages", "events", "event messages",
                                                                           "router start-up"))
                    print("run {} rate {:>5}: {:<7} {:6.2f} CPU-s per 100k lines ({}) in {:.1f} s{}".format(
                        run + 1, int(rate) or "max", kind, per100k(got["total"], cost.count), parts, got["wall"],
                        ", {} messages in, {} events out in {} messages; the router's start-up {:.2f} CPU-s apart".format(
                            got["messages"], got["events"], got["event messages"], got["router start-up"])
                        if "messages" in got else ""),
                        flush=True)
    finally:
        cost.stop_shards()
        subprocess.call([os.path.join(HERE, "cluster.sh"), "stop", os.path.join(cost.work, "nats")], env=cost.env)
        if not args.keep and not args.work:
            subprocess.call(["rm", "-rf", cost.work])
        elif args.keep:
            log("kept " + cost.work)
    print("medians of {} alternating runs, {} lines, CPU-s per 100k lines (all processes):".format(args.runs, cost.count))
    for rate in rates:
        plain = statistics.median(per100k(r["total"], cost.count) for r in results[(rate, "plain")])
        runs = results[(rate, "cluster")]
        total = statistics.median(per100k(r["total"], cost.count) for r in runs)
        parts = ", ".join("{} {:.2f}".format(k, statistics.median(per100k(r.get(k, 0), cost.count) for r in runs))
                          for k in ("router", "shard", "typingd", "nats-server"))
        startup = statistics.median(r["router start-up"] for r in runs)
        # Each cluster run against the plain run just before it: on a noisy machine both
        # move together, and the median of these ratios moves least.
        ratios = [c["total"] / p["total"] for c, p in zip(runs, results[(rate, "plain")])]
        print("  {:>13}: plain typingd {:.3f}, cluster {:.2f} ({}), {:.1f}x; median of the runs' ratios {:.1f}x "
              "({}); with the router's start-up ({:.2f} CPU-s a run) in the lines: {:.1f}x".format(
                  "unpaced" if not rate else "{:.0f} lines/s".format(rate), plain, total, parts, total / plain,
                  statistics.median(ratios), " ".join("{:.1f}".format(r) for r in ratios),
                  startup, (total + per100k(startup, cost.count)) / plain))


if __name__ == "__main__":
    main()
