#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""example_scheduler.py: a scheduler loop on a leader_plugin, in Python.

    example_scheduler.py [--every SECONDS] PLUGIN.so CONFIG

Campaigns with one plugin instance, ticks when the plugin asks, prints
each change of leadership, and while leader runs a job every SECONDS
(default 2) under the current term. SIGTERM or SIGINT shuts the instance
down (a leader resigns, so another candidate takes over at once) and
exits 0. Example:

    example_scheduler.py /usr/local/lib/odbc-leader/odbc_leader.so \\
        'DSN=sched;LeaderNamespace=nightly'
"""

import argparse
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from odbc_leader import plugin as leader_plugin  # noqa: E402

STOP = {signal.SIGTERM, signal.SIGINT}


def on_change(is_leader, term, leader_id):
    """Prints one line per change of leadership."""
    if is_leader:
        print("leader term=%d" % term, flush=True)
    else:
        print("follower (leader: %s)" % (leader_id or "none"), flush=True)


def log(level, msg):
    """The plugin's log lines (syslog levels) go to stderr."""
    print("log(%d): %s" % (level, msg), file=sys.stderr, flush=True)


def job(term):
    """The leader-only work; term is the fencing token to pass on."""
    print("job ran under term %d" % term, flush=True)


def main():
    ap = argparse.ArgumentParser(description="leader_plugin scheduler example")
    ap.add_argument("--every", type=float, default=2.0, help="job period (s)")
    ap.add_argument("plugin")
    ap.add_argument("config")
    args = ap.parse_args()

    # Stop signals are blocked and collected by sigtimedwait, the sleep.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP)
    plugin = leader_plugin.Plugin(args.plugin)
    try:
        inst = plugin.init(args.config, log=log, on_change=on_change)
    except leader_plugin.LeaderPluginError as e:
        sys.exit("example_scheduler: %s" % e)
    with inst:
        next_tick = next_job = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= next_tick:
                try:
                    delay_ms = inst.tick().next_tick_ms
                except leader_plugin.TickError as e:  # keep ticking
                    print("tick: %s" % e, file=sys.stderr)
                    delay_ms = e.next_tick_ms
                next_tick = now + delay_ms / 1000
            if inst.is_leader() and now >= next_job:
                job(inst.term())
                next_job = now + args.every
            wake = min(next_tick, next_job if inst.is_leader() else next_tick)
            if signal.sigtimedwait(STOP, max(0.0, wake - time.monotonic())):
                break
    print("shut down", flush=True)


if __name__ == "__main__":
    main()
