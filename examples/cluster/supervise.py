#!/usr/bin/env python3
"""Keep N partitions' shards running: start them, restart any that exits, stop them all on SIGTERM.

    supervise.py [--partitions N] [--standbys K] [--log-dir DIR] [-- SHARD.PY OPTIONS ...]

Starts, for every partition P in 0..N-1, 1 + K processes `shard.py --partition P
OPTIONS` (the first to take P's lease owns it, the others wait as standbys), and
starts again any that exits, whatever its status, after a back-off: 0.2 s after
exit 75 (it lost its lease: it comes back as a standby), else 0.5 s doubling up
to --max-backoff for a process that keeps dying young (the back-off starts over
once one has run 30 s). In OPTIONS, {p} is the partition, {i} the instance
(0..K), {n} how many times that instance was started (0, 1, ...) and {t} the
start time (ms since the Unix epoch, 13 digits): give each run its own --audit
file, e.g. --audit /tmp/audit-{p}-{t}-{i} (sorted by name, in the order they
started, as compare.py wants them).

Each process's stderr goes to DIR/shard-P-I.log (appended); the supervisor logs
every start and exit on its own stderr. SIGTERM or SIGINT: SIGTERM to every
shard by its pid (they finish what they wrote and release their leases), SIGKILL
to any still running after --stop-timeout seconds; exits 0.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import conf_option, resolve  # noqa: E402


def log(text):
    print("supervise: " + text, file=sys.stderr, flush=True)


class Instance:
    def __init__(self, p, i):
        self.p, self.i = p, i
        self.proc = None
        self.starts = 0
        self.started = 0.0
        self.backoff = 0.5
        self.due = 0.0   # when to start it again (monotonic)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    conf_option(parser, "--partitions", "PARTITIONS", "partitions")
    parser.add_argument("--standbys", type=int, default=0, help="standbys per partition (default 0)")
    parser.add_argument("--log-dir", default=os.path.join(os.environ.get("TMPDIR") or "/tmp",
                                                          "typingd-supervise-{}".format(os.getuid())),
                        help="where each shard's stderr goes, shard-P-I.log (default: %(default)s)")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs shard.py")
    parser.add_argument("--shard", default=os.path.join(HERE, "shard.py"), help="the shard runner (default: %(default)s)")
    parser.add_argument("--max-backoff", type=float, default=10.0,
                        help="the longest wait before starting again a shard that keeps dying (default: %(default)s s)")
    parser.add_argument("--stop-timeout", type=float, default=20.0,
                        help="seconds after SIGTERM before the shards still running get SIGKILL (default: %(default)s)")
    parser.add_argument("options", nargs="*", help="shard.py options (after --)")
    args = resolve(parser, parser.parse_args())
    if args.partitions < 1 or args.standbys < 0:
        parser.error("--partitions must be at least 1, --standbys at least 0")
    os.makedirs(args.log_dir, mode=0o700, exist_ok=True)

    instances = [Instance(p, i) for p in range(args.partitions) for i in range(1 + args.standbys)]
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))

    def start(inst):
        stamp = "{:013d}".format(int(time.time() * 1000))
        options = [o.replace("{p}", str(inst.p)).replace("{i}", str(inst.i)).replace("{n}", str(inst.starts))
                   .replace("{t}", stamp) for o in args.options]
        with open(os.path.join(args.log_dir, "shard-{}-{}.log".format(inst.p, inst.i)), "ab") as logfile:
            inst.proc = subprocess.Popen([args.python, args.shard, "--partition", str(inst.p),
                                          "--partitions", str(args.partitions)] + options,
                                         stdout=logfile, stderr=logfile, stdin=subprocess.DEVNULL)
        inst.starts += 1
        inst.started = time.monotonic()
        log("partition {} instance {}: started (pid {}, start {})".format(inst.p, inst.i, inst.proc.pid, inst.starts))

    for inst in instances:
        start(inst)
    while not stopping:
        now = time.monotonic()
        for inst in instances:
            if inst.proc is not None:
                status = inst.proc.poll()
                if status is None:
                    continue
                ran = now - inst.started
                if status == 75:
                    delay = 0.2
                else:
                    if ran >= 30:
                        inst.backoff = 0.5
                    delay = inst.backoff
                    inst.backoff = min(inst.backoff * 2, args.max_backoff)
                log("partition {} instance {}: pid {} exited {} after {:.1f} s; starting again in {:.1f} s".format(
                    inst.p, inst.i, inst.proc.pid, status, ran, delay))
                inst.proc = None
                inst.due = now + delay
            elif now >= inst.due and not stopping:
                start(inst)
        time.sleep(0.05)

    running = [inst for inst in instances if inst.proc is not None and inst.proc.poll() is None]
    log("stopping {} shards".format(len(running)))
    for inst in running:
        try:
            os.kill(inst.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + args.stop_timeout
    for inst in running:
        try:
            inst.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log("partition {} instance {}: pid {} still running after {} s: SIGKILL".format(
                inst.p, inst.i, inst.proc.pid, args.stop_timeout))
            os.kill(inst.proc.pid, signal.SIGKILL)
            inst.proc.wait()
    log("stopped")


if __name__ == "__main__":
    main()
