#!/usr/bin/env python3
"""Keystroke to gateway: how long a `type` written to the router takes to be applied at a gateway.

    latency.py [--idle-runs 5] [--idle-seconds 25] [--busy-runs 1] [--busy-seconds 20]
               [--rate 5000] [--probe-ms 100] [--port-base N] [--keep]

Starts its own 3-node cluster (cluster.sh, ports from --port-base, default
LATENCY_PORT_BASE, else 22222) and, for each run, a fresh stream (ctl setup), 4
shards with the cluster's default settings (ticks, snapshots), a gateway for the
probe viewers (`gateway --received FILE`: each indicator applied, after the wall
clock in ms) and a router with --stamp fed by this script. Probe conversations
lat0..lat7 each have a typist and a viewer; every --probe-ms one typist types
(and sends 50 ms later, which clears the indicator). A probe's latency is from
the moment its `type` line is written to the router's stdin to the moment the
gateway applied the viewer's indicator showing the typist.

  idle   --idle-runs runs of --idle-seconds: the probes alone;
  busy   --busy-runs runs of --busy-seconds: the probes among workload.py's lines
         (their own `at` removed, so the router stamps them, and the final tick,
         snapshots and stats left out) at --rate lines a second, in 10 ms slices.

It prints each run's p50, p99 and worst (ms) and the lines the shards logged
about pulls failing, and ends with

    cluster latency: idle p99 Xms, 5000/s p99 Yms

(X: the worst idle run's p99; Y: the worst busy run's). It exits 1 when an idle
run's p99 is above --idle-goal (20 ms) or a busy run's above --busy-goal (50
ms), or a probe never reached the gateway; 2 when the cluster would not start.
Everything started is stopped by pid.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost  # noqa: E402  (the cluster's start-up and stopping, shared with the cost benchmark)

PROBES = 8
AT = re.compile(rb',"at":[0-9]+')


def log(text):
    print("latency.py: " + text, file=sys.stderr, flush=True)


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, int(round(fraction * len(ordered) + 0.5)) - 1))
    return ordered[index]


class Latency(cost.Cost):
    def background(self, lines):
        """workload.py's lines without their `at` (the router stamps them), no final tick, snapshots or stats."""
        path = os.path.join(self.work, "background.jsonl")
        with open(path, "wb") as out:
            subprocess.check_call([sys.executable, os.path.join(cost.HERE, "workload.py"), "--lines", str(lines)],
                                  stdout=out)
        kept = []
        with open(path, "rb") as f:
            for line in f:
                if b'"cmd":"tick"' in line or b'"cmd":"snapshot"' in line or b'"cmd":"stats"' in line:
                    continue
                kept.append(AT.sub(b"", line.rstrip(b"\n")))
        return kept

    def run(self, label, run, seconds, rate, background):
        binary = self.args.binary
        self.start_shards(binary, label, run)
        received = os.path.join(self.work, "received-{}-{}.txt".format(label, run))
        gateway_log = os.path.join(self.work, "gateway-{}-{}.log".format(label, run))
        viewers = []
        for k in range(PROBES):
            viewers += ["--viewer", "lv{}".format(k)]
        with open(gateway_log, "ab") as out:
            gateway = subprocess.Popen([binary, "gateway", "--servers", self.urls, "--received", received] + viewers,
                                       stdout=subprocess.DEVNULL, stderr=out, cwd=cost.ROOT, env=self.env)
        router_log = os.path.join(self.work, "router-{}-{}.log".format(label, run))
        router, relayer, reading = cost.start_router(
            [binary, "route", "--servers", self.urls, "--partitions", str(cost.PARTITIONS),
             "--stamp", "--name", "lat{}{}".format(label, run)] + self.args.router_option, router_log, self.env)
        probes = {k: [] for k in range(PROBES)}
        try:
            if not reading.wait(120):
                sys.exit("latency.py: the router did not start reading in 120 s; see " + router_log)
            deadline = time.monotonic() + 30
            while b"subscribed" not in open(gateway_log, "rb").read():
                if time.monotonic() > deadline or gateway.poll() is not None:
                    sys.exit("latency.py: the gateway did not subscribe; see " + gateway_log)
                time.sleep(0.05)
            pipe = router.stdin
            joins = []
            for k in range(PROBES):
                for user in ("lt{}".format(k), "lv{}".format(k)):
                    joins.append('{{"cmd":"join","conv":"lat{}","user":"{}","name":"{}"}}'.format(k, user, user))
            pipe.write(("\n".join(joins) + "\n").encode())
            pipe.flush()
            time.sleep(1.0)
            step = max(1, int(rate / 100)) if rate else 0
            started = time.monotonic()
            next_probe = started
            sends = []   # (due, conv) of the sends that clear a probe's indicator
            i = 0
            sent = 0
            count = 0
            while True:
                now = time.monotonic()
                if now - started >= seconds:
                    break
                chunk = b""
                if step and sent < len(background):
                    due = int((now - started) * rate)
                    if due > sent:
                        chunk = b"\n".join(background[sent:min(due, sent + 50 * step)]) + b"\n"
                        sent = min(due, sent + 50 * step)
                while sends and sends[0][0] <= now:
                    _, k = sends.pop(0)
                    chunk += '{{"cmd":"send","conv":"lat{}","user":"lt{}"}}\n'.format(k, k).encode()
                probe = None
                if now >= next_probe:
                    probe = count % PROBES
                    count += 1
                    next_probe += self.args.probe_ms / 1000
                    chunk += '{{"cmd":"type","conv":"lat{}","user":"lt{}"}}\n'.format(probe, probe).encode()
                    sends.append((now + 0.05, probe))
                if chunk:
                    written = time.time() * 1000
                    pipe.write(chunk)
                    pipe.flush()
                    if probe is not None:
                        probes[probe].append(written)
                i += 1
                wake = min([next_probe] + [s[0] for s in sends[:1]] + ([now + 0.01] if step else []))
                pause = wake - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
            for _, k in sends:
                pipe.write('{{"cmd":"send","conv":"lat{}","user":"lt{}"}}\n'.format(k, k).encode())
            pipe.flush()
            # Every probe reaches the gateway, or 10 s pass.
            wanted = sum(len(v) for v in probes.values())
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if len(self.delays(received, probes)[0]) >= wanted:
                    break
                time.sleep(0.2)
        finally:
            try:
                router.stdin.close()
            except BrokenPipeError:
                pass
            try:
                router.wait(60)
            except subprocess.TimeoutExpired:
                router.kill()
                router.wait()
            relayer.join()
            gateway.terminate()
            try:
                gateway.wait(30)
            except subprocess.TimeoutExpired:
                gateway.kill()
                gateway.wait()
            self.stop_shards()
        delays, lost = self.delays(received, probes)
        troubles = []
        for p in range(cost.PARTITIONS):
            path = os.path.join(self.work, "shard-{}-{}-{}.log".format(label, run, p))
            with open(path, "rb") as f:
                for line in f.read().decode("utf-8", "replace").splitlines():
                    if any(word in line for word in ("pull failed", "pulling again", "making it anew", "lost (", "applied from the stream")):
                        troubles.append(line)
        return delays, lost, troubles

    @staticmethod
    def delays(received, probes):
        """Each probe's delay (ms) to the gateway, and how many never arrived."""
        arrived = {k: [] for k in probes}
        try:
            with open(received, "rb") as f:
                for line in f:
                    stamp, _, text = line.partition(b"\t")
                    try:
                        event = json.loads(text)
                        at = float(stamp)
                    except ValueError:
                        continue
                    viewer = event.get("viewer", "")
                    if not viewer.startswith("lv") or not event.get("typing"):
                        continue
                    k = int(viewer[2:])
                    if k in arrived and "lt{}".format(k) in event["typing"]:
                        arrived[k].append(at)
        except FileNotFoundError:
            pass
        delays, lost = [], 0
        for k, written in probes.items():
            seen = arrived[k]
            # In order: the nth indicator showing the typist answers the nth probe.
            for index, at in enumerate(written):
                if index < len(seen):
                    delays.append(max(0.0, seen[index] - at))
                else:
                    lost += 1
        return delays, lost


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle-runs", type=int, default=5)
    parser.add_argument("--idle-seconds", type=float, default=25)
    parser.add_argument("--busy-runs", type=int, default=1)
    parser.add_argument("--busy-seconds", type=float, default=20)
    parser.add_argument("--rate", type=float, default=5000, help="background lines a second in busy runs")
    parser.add_argument("--probe-ms", type=float, default=100, help="a probe keystroke this often")
    parser.add_argument("--idle-goal", type=float, default=20, help="p99 an idle run must meet (ms)")
    parser.add_argument("--busy-goal", type=float, default=50, help="p99 a busy run must meet (ms)")
    parser.add_argument("--port-base", type=int, default=int(os.environ.get("LATENCY_PORT_BASE", "22222")))
    parser.add_argument("--binary", default=os.path.join(cost.CLUSTER, ".build/release/typingd-cluster"))
    parser.add_argument("--shard-option", action="append", default=[], help="more shard options (repeat)")
    parser.add_argument("--router-option", action="append", default=[], help="more route options (repeat)")
    parser.add_argument("--work", help="work folder (default: a new one in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        parser.error("--binary: no executable at {} (build it first)".format(args.binary))
    # cost.Cost's start-up wants these; the shards keep the cluster's defaults
    # (ticks, snapshots) but for their lifetime.
    args.input, args.lines, args.ctl_option = None, 0, []
    args.shard_option = ["--snapshot-every", "1000"] + args.shard_option
    latency = Latency(args)
    results = []
    failed = False
    try:
        latency.started_nats = True
        log("starting a 3-node cluster at {}".format(latency.urls))
        subprocess.check_call([os.path.join(cost.CLUSTER, "cluster.sh"), "start", os.path.join(latency.work, "nats")],
                              env=latency.env)
        latency.ctl(args.binary, "ready")
        background = latency.background(int(args.rate * args.busy_seconds) + 1000) if args.busy_runs else []
        plan = [("idle", r, args.idle_seconds, 0) for r in range(args.idle_runs)]
        plan += [("busy", r, args.busy_seconds, args.rate) for r in range(args.busy_runs)]
        for label, run, seconds, rate in plan:
            delays, lost, troubles = latency.run(label, run, seconds, rate, background)
            p50, p99 = percentile(delays, 0.5), percentile(delays, 0.99)
            worst = max(delays) if delays else float("nan")
            name = "idle" if not rate else "{:.0f}/s".format(rate)
            print("run {} {:>7}: {} probes, p50 {:.0f} ms, p99 {:.0f} ms, worst {:.0f} ms{}".format(
                run + 1, name, len(delays), p50, p99, worst, ", {} never arrived".format(lost) if lost else ""),
                flush=True)
            for line in troubles:
                print("    " + line, flush=True)
            goal = args.idle_goal if not rate else args.busy_goal
            if lost or not delays or p99 > goal:
                failed = True
            results.append((label, p50, p99))
    finally:
        latency.stop_shards()
        subprocess.call([os.path.join(cost.CLUSTER, "cluster.sh"), "stop", os.path.join(latency.work, "nats")],
                        env=latency.env)
        if not args.keep and not args.work:
            subprocess.call(["rm", "-rf", latency.work])
        elif args.keep:
            log("kept " + latency.work)
    idle = [p99 for label, _, p99 in results if label == "idle"]
    busy = [p99 for label, _, p99 in results if label == "busy"]
    parts = []
    if idle:
        parts.append("idle p99 {:.0f}ms".format(max(idle)))
    if busy:
        parts.append("{:.0f}/s p99 {:.0f}ms".format(args.rate, max(busy)))
    print("cluster latency: " + ", ".join(parts))
    if failed:
        log("a target was missed: idle p99 at most {:.0f} ms, {:.0f}/s p99 at most {:.0f} ms, every probe arriving".format(
            args.idle_goal, args.rate, args.busy_goal))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
