# SPDX-License-Identifier: MIT
"""odbc_leader.examples.apscheduler: APScheduler jobs, each fire run on one host.

    python3 -m odbc_leader.examples.apscheduler --plugin SO --connect STR \\
        --namespace NS (--every SECONDS | --cron EXPR [--tz NAME])
        [--ttl MS] [--job NAME] [--jobs N --shards N] [--recover N]
        [--hold SECONDS]

Run the same command on several hosts. The job fires at every multiple of
SECONDS since the epoch (like cron), or by the five-field crontab
expression EXPR (APScheduler's CronTrigger.from_crontab) in the zone NAME
(default: the host's, as TZ says), on every host; LeaderExecutor runs
each fire on exactly one of them, and after a failover the new leader
runs the fires nobody ran within the job's misfire_grace_time (five TTLs
plus SECONDS and a second: a takeover takes about a TTL, the rest is for
a host starved of CPU). Each fire run prints one line on stdout, flushed:

    FIRE <job> <fire_ms> <term> <attempt>

fire_ms is the fire's time in epoch ms (a run-now's key, below 0, for a
fire of `odbc-leader jobs trigger`), term the fencing token it ran
under, attempt 1 unless the fire recovers an interrupted one. With
--recover N a fire whose host died before its end runs again on the next
leader, up to N attempts in all (default 1: at most once); --hold keeps
each run going SECONDS after its FIRE line (a job that takes time). With --jobs N the scheduler has N such jobs, NAME-0 .. NAME-N-1;
with --shards N the hosts form a sharded group of N shards named NS
(docs/groups.md): each job runs on the host that leads its shard, under
that shard's term, so the jobs are spread over the hosts; a crashed
host's shards are taken over after about two TTLs (the watch), still
well within the grace.

Leadership changes go to stderr. SIGTERM or SIGINT stops the scheduler,
waits for a running fire and resigns, so another host takes over at
once; the exit status is then 0.
"""

import argparse
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, List, Optional

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from odbc_leader import Leader, LeaderPluginError
from odbc_leader.apscheduler import LeaderExecutor, current_fire

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
DEFAULT_TTL_MS = 15000  # the library's default LeaderTTL
_out = threading.Lock()


def fire(hold: float = 0.0) -> None:
    """The job: prints the fire it runs, then takes hold seconds."""
    f = current_fire()
    assert f is not None
    with _out:
        sys.stdout.write("FIRE %s %d %d %d\n" % (f.job, f.fire_ms, f.term,
                                                 f.attempt))
        sys.stdout.flush()
    if hold > 0:
        time.sleep(hold)


def on_change(is_leader: bool, term: int) -> None:
    """Leadership changes, on stderr."""
    print("leader term %d" % term if is_leader else "follower",
          file=sys.stderr, flush=True)


def on_shard_change(shard: int, is_leader: bool, term: int) -> None:
    """A group's shard changes, on stderr."""
    print("shard %d: %s" % (shard, "leader term %d" % term if is_leader
                            else "stopped"), file=sys.stderr, flush=True)


def trigger_of(args: argparse.Namespace) -> Any:
    """The job's trigger: every --every seconds since the epoch, or the
    --cron expression in --tz (None: the host's zone). Raises ValueError
    (a bad expression) or LookupError (an unknown zone)."""
    if args.cron is None:
        return IntervalTrigger(seconds=args.every, start_date=EPOCH,
                               timezone=timezone.utc)
    return CronTrigger.from_crontab(args.cron, timezone=args.tz)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m odbc_leader.examples.apscheduler",
        description="one APScheduler job whose every fire runs on one host")
    ap.add_argument("--plugin", help="odbc_leader.so (default: "
                    "$ODBC_LEADER_PLUGIN, else the installed one)")
    ap.add_argument("--connect", required=True,
                    help="ODBC connection string or DSN=name")
    ap.add_argument("--namespace", required=True)
    when = ap.add_mutually_exclusive_group(required=True)
    when.add_argument("--every", type=float,
                      help="fire at every multiple of this many seconds")
    when.add_argument("--cron", metavar="EXPR",
                      help="fire by this five-field crontab expression")
    ap.add_argument("--tz", metavar="NAME", default=None,
                    help="--cron's time zone (default: the host's)")
    ap.add_argument("--ttl", type=int, default=None, help="LeaderTTL (ms)")
    ap.add_argument("--job", default="every")
    ap.add_argument("--jobs", type=int, default=1,
                    help="this many jobs, JOB-0 .. JOB-N-1 (default 1: JOB)")
    ap.add_argument("--shards", type=int, default=None,
                    help="a sharded group of this many shards (LeaderShards)")
    ap.add_argument("--recover", type=int, default=1, metavar="N",
                    help="attempts a fire may take when its host dies "
                    "before its end (default 1: at most once)")
    ap.add_argument("--hold", type=float, default=0.0, metavar="SECONDS",
                    help="each run lasts this long after its FIRE line")
    args = ap.parse_args(argv)
    if args.every is not None and args.every <= 0:
        ap.error("--every must be positive")
    if args.tz is not None and args.cron is None:
        ap.error("--tz goes with --cron")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.recover < 1:
        ap.error("--recover must be at least 1")
    if args.hold < 0:
        ap.error("--hold must not be negative")

    stop = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)  # threads inherit it
    try:
        leader = Leader(args.connect, namespace=args.namespace,
                        ttl_ms=args.ttl, plugin=args.plugin,
                        shards=args.shards)
    except (LeaderPluginError, FileNotFoundError) as e:
        print("odbc_leader.examples.apscheduler: %s" % e, file=sys.stderr)
        return 1
    if leader.shards:
        leader.add_shard_listener(on_shard_change)
    else:
        leader.add_listener(on_change)
    ttl_s = (args.ttl or DEFAULT_TTL_MS) / 1000.0
    grace = int(5 * ttl_s + (args.every or 0) + 1)
    try:
        trigger = trigger_of(args)
    except (ValueError, LookupError) as e:
        print("odbc_leader.examples.apscheduler: %s" % e, file=sys.stderr)
        return 64
    sched = BackgroundScheduler(
        executors={"default": LeaderExecutor(
            leader, max_attempts=args.recover)}, timezone=timezone.utc)
    names = [args.job] if args.jobs == 1 else \
        ["%s-%d" % (args.job, i) for i in range(args.jobs)]
    for name in names:
        sched.add_job(fire, trigger, args=[args.hold], id=name,
                      coalesce=False,
                      max_instances=100,
                      misfire_grace_time=grace)
    leader.start()
    sched.start()
    signal.sigwait(stop)
    sched.shutdown(wait=True)
    leader.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
