# SPDX-License-Identifier: MIT
"""odbc_leader.examples.celery: a Celery app whose beat runs on every host.

    export ODBC_LEADER_CONNECT='DSN=sched' CELERY_BROKER_URL=redis://mq:6379/0
    celery -A odbc_leader.examples.celery worker        # where tasks run
    celery -A odbc_leader.examples.celery beat \\
        -S odbc_leader.celery:LeaderScheduler           # on every host

One periodic entry, "every", sends the task odbc_leader.examples.fire at
every multiple of ODBC_LEADER_EVERY seconds since the epoch (default 10),
or, with ODBC_LEADER_CRON set to a crontab ("M H DOM MON DOW"), at its
times in the app's timezone: ODBC_LEADER_TZ, else TZ when it names a zone
(the example honours the host's TZ), else Celery's default, UTC.
The beats elect a leader on the database of ODBC_LEADER_CONNECT; only the
leader sends an entry, once, and after a failover the new leader sends
the ones nobody sent within the grace (five TTLs plus the period: a
takeover takes about a TTL, the rest is for a beat starved of CPU). The
worker prints one line per run, flushed: FIRE <entry> <fire_ms> <term>
<attempt> (fire_ms below 0 for a run-now of `odbc-leader jobs trigger`).

With ODBC_LEADER_JOBS=N (N > 1) there are N entries, every-0 .. every-N-1,
on the same schedule; with ODBC_LEADER_SHARDS=N as well the beats are
members of a sharded group of N shards and each entry is sent by the beat
that leads its shard (a crashed member's shards come back after about
two TTLs, still within the grace, and a member that starts or gains many
shards catches up the entries of all of them).

Environment: ODBC_LEADER_CONNECT (required: an ODBC connection string or
DSN=name), ODBC_LEADER_NAMESPACE (default celery-beat), ODBC_LEADER_TTL_MS
(default: the library's, 15000), ODBC_LEADER_PLUGIN (default: the
installed odbc_leader.so), ODBC_LEADER_EVERY, ODBC_LEADER_JOBS (default 1),
ODBC_LEADER_SHARDS (default: no group), ODBC_LEADER_MAX_ATTEMPTS (default
1, odbc_leader_max_attempts), ODBC_LEADER_CRON, ODBC_LEADER_TZ,
CELERY_BROKER_URL (default redis://127.0.0.1:6379/0).
"""

import os
import re
import sys

from celery import Celery
from celery.schedules import crontab

EVERY_S = float(os.environ.get("ODBC_LEADER_EVERY", "10"))
_ttl = os.environ.get("ODBC_LEADER_TTL_MS")
TTL_S = int(_ttl) / 1000.0 if _ttl else 15.0
JOBS = int(os.environ.get("ODBC_LEADER_JOBS", "1"))
_shards = os.environ.get("ODBC_LEADER_SHARDS")
SHARDS = int(_shards) if _shards else None
NAMES = ["every"] if JOBS <= 1 else ["every-%d" % i for i in range(JOBS)]
CRON = os.environ.get("ODBC_LEADER_CRON")
# a zone name (Area/Location or UTC), not a POSIX rule or ":/path"
_tz = os.environ.get("ODBC_LEADER_TZ") or os.environ.get("TZ") or ""
ZONE = _tz if re.fullmatch(r"[A-Za-z_]+(/[A-Za-z0-9_+-]+)*", _tz) else None


def _schedule() -> object:
    """The entries' schedule: the crontab of ODBC_LEADER_CRON, else every
    EVERY_S seconds."""
    if not CRON:
        return EVERY_S
    f = CRON.split()
    if len(f) != 5:
        raise SystemExit("ODBC_LEADER_CRON: five fields (M H DOM MON DOW), "
                         "not %r" % CRON)
    return crontab(minute=f[0], hour=f[1], day_of_month=f[2],
                   month_of_year=f[3], day_of_week=f[4])


app = Celery("odbc_leader_example", broker=os.environ.get(
    "CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"))
app.conf.update(
    odbc_leader_connect=os.environ.get("ODBC_LEADER_CONNECT"),
    odbc_leader_namespace=os.environ.get("ODBC_LEADER_NAMESPACE",
                                         "celery-beat"),
    odbc_leader_ttl_ms=int(_ttl) if _ttl else None,
    odbc_leader_plugin=os.environ.get("ODBC_LEADER_PLUGIN"),
    odbc_leader_shards=SHARDS,
    odbc_leader_max_attempts=int(os.environ.get("ODBC_LEADER_MAX_ATTEMPTS",
                                                "1")),
    odbc_leader_misfire_grace_time=5 * TTL_S + EVERY_S,
    beat_schedule={name: {"task": "odbc_leader.examples.fire",
                          "schedule": _schedule(), "args": (name,)}
                   for name in NAMES},
    beat_max_loop_interval=1,
    task_ignore_result=True,
    worker_redirect_stdouts=False,
    broker_connection_retry_on_startup=True,
)
if ZONE:
    app.conf.timezone = ZONE


@app.task(bind=True, name="odbc_leader.examples.fire")
def fire(self, entry: str = "every") -> None:
    """Prints the fire this run belongs to (from the beat's headers)."""
    sys.stdout.write("FIRE %s %d %d %d\n" % (
        entry, self.request.odbc_leader_fire_ms,
        self.request.odbc_leader_term,
        getattr(self.request, "odbc_leader_attempt", None) or 1))
    sys.stdout.flush()
