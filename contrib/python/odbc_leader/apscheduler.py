# SPDX-License-Identifier: MIT
"""odbc_leader.apscheduler: one APScheduler configuration on every host,
each fire run on one of them.

APScheduler (3.x) fires a job on every host that runs the scheduler.
LeaderExecutor, an executor to give the scheduler, claims each fire (job
id, scheduled run time) in the database before it runs it; only the
claimant runs it, so each fire runs once across hosts and never twice.
Hosts that do not lead leave the fire to the leader. A host that becomes
leader walks back over each job's fire times within its
misfire_grace_time (as the trigger computes them) and claims and runs
those the library's catch-up policy names (docs/catch-up.md): the fires
due while the old leader was dead, even if this host started after them:
all of them for a job with coalesce=False, the newest for coalesce=True
(APScheduler's default; none when a later fire ran), the grace measured
on the database clock. A job with no fire
in the ledger catches up nothing. So a job's misfire_grace_time should
exceed the takeover time (the lease's TTL plus a few seconds). A late
scheduler thread (a paused process, scheduler.pause()) runs the fires it
skipped as the same policy says, the one due now in any case.

    from apscheduler.schedulers.blocking import BlockingScheduler
    from odbc_leader import Leader
    from odbc_leader.apscheduler import LeaderExecutor, current_fire

    leader = Leader("DSN=sched", namespace="jobs").start()
    sched = BlockingScheduler(executors={"default": LeaderExecutor(leader)})
    sched.add_job(report, "cron", minute=0, misfire_grace_time=60)
    sched.start()

With a Leader of a sharded group (Leader(..., shards=N)), each job id
belongs to one shard: the host that leads a job's shard claims and runs
its fires, so the jobs are spread over the hosts, and a host that gains
a shard catches up that shard's jobs as above.

Inside a job, current_fire() returns the Fire it runs (job id, fire_ms,
term: the fencing token; in a group, the term of the job's shard;
attempt and recovering, as Quartz's isRecovering(); triggered for a
run-now).

Each fire runs at most once by default. LeaderExecutor(leader,
max_attempts=N) (or a dict of job id to N) opts jobs into recovery: when
the host running a fire dies before its end, the next leader runs it
again, as attempt 2, once the dead host's term can no longer act (never
two attempts at once; docs/lifecycle.md); after N attempts the fire is
recorded abandoned. Paused jobs (`odbc-leader jobs pause JOB`) are not
run on any host; `odbc-leader jobs trigger JOB` runs one once on the
leader. Recovered and triggered fires reach the executor through the
leader's ticks (Leader.add_offer_listener) and run with the time they
run at as APScheduler's run time (so a job's misfire_grace_time does not
drop them); current_fire().fire_ms keeps the fire's own time. The fire's time is the run time APScheduler
computed, so triggers must give the same times on every host: cron and
date triggers do; give interval triggers a fixed start_date.

Each job's claims carry its schedule identity (docs/schedules.md): the
trigger as APScheduler prints it, the IANA zone it computes in (none for
interval and date triggers) and APScheduler's version and DST rule
(schedule_of). The first claim records it; a host whose trigger computes
the job otherwise (another time zone: give the scheduler or the trigger
an explicit timezone to pin it) has its claims refused and logged, never
run, so a fire never runs twice across zones.
"""

import concurrent.futures
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Set, Tuple, Union

import apscheduler
from apscheduler.events import (EVENT_JOB_ERROR, EVENT_JOB_MISSED,
                                JobExecutionEvent)
from apscheduler.executors.base import BaseExecutor, run_job
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from .leader import Fire, Leader, epoch_ms
from .plugin import LeaderPluginError

__all__ = ["LeaderExecutor", "current_fire", "engine_of", "fire_ms_of",
           "schedule_of"]

# Zones without DST, whatever object names them.
_NO_DST = frozenset(("UTC", "Etc/UTC", "GMT", "Etc/GMT", "Zulu", "Etc/Zulu",
                     "Universal", "Etc/Universal", "UCT", "Etc/UCT"))


def engine_of(tz: Any) -> str:
    """The engine part of a schedule identity: APScheduler's version and
    its DST rule, which depends on the zone's object (tests/contrib/
    dst.test): a pytz zone (a timezone given by name) runs a time of the
    autumn's repeated hour at its second occurrence; the zone tzlocal gives
    when none is (pytz_deprecation_shim over zoneinfo) at its first. Both
    run a time in the spring gap an hour later. A zone without DST has no
    rule."""
    v = apscheduler.__version__
    if tz is None or str(tz) in _NO_DST:
        return "apscheduler %s" % v
    if type(tz).__module__.split(".")[0] == "pytz":
        return ("apscheduler %s with pytz (DST gap: an hour later; "
                "overlap: the second)" % v)
    return ("apscheduler %s with zoneinfo (DST gap: an hour later; "
            "overlap: the first)" % v)

_local = threading.local()
CATCH_UP_MAX_S = 3600  # the catch-up window of a job without a grace
MAX_CATCH_UP = 10000  # fires claimed per job and catch-up, at most


def current_fire() -> Optional[Fire]:
    """The Fire the calling job runs (job id, fire_ms, term), or None
    outside a job run by LeaderExecutor."""
    return getattr(_local, "fire", None)


def fire_ms_of(run_time: datetime) -> int:
    """A run time (an aware datetime) as epoch milliseconds."""
    return epoch_ms(run_time)


def schedule_of(job: Any) -> Tuple[str, Optional[str], str]:
    """(expr, tz, engine) of job's schedule identity: its trigger as
    APScheduler prints it, the zone's IANA name and engine_of(the zone);
    an interval trigger (with its start date) and a date trigger name
    absolute times, no zone ("")."""
    t = job.trigger
    if isinstance(t, IntervalTrigger):
        return ("%s from %s" % (t, t.start_date.isoformat()), "",
                engine_of(None))
    if isinstance(t, DateTrigger):
        return (str(t), "", engine_of(None))
    tz = getattr(t, "timezone", None)
    return (str(t), str(tz) if tz is not None else None, engine_of(tz))


class LeaderExecutor(BaseExecutor):
    """An APScheduler executor that runs a fire only when leader claimed it.

    leader is a started odbc_leader.Leader (this executor neither starts
    nor stops it). Jobs run in a thread pool of max_workers threads.
    max_attempts is how many times a fire may run when its host dies
    before it ends (1, the default: at most once), for every job of this
    executor, or a dict {job id: attempts} (jobs not in it: 1).
    """

    def __init__(self, leader: Leader, max_workers: int = 10,
                 max_attempts: Union[int, Dict[str, int]] = 1) -> None:
        super().__init__()
        self.leader = leader
        self._pool = concurrent.futures.ThreadPoolExecutor(int(max_workers))
        self._alias: Optional[str] = None
        self._attempts = max_attempts
        self._offered: Set[Tuple[str, int]] = set()  # in the pool
        self._offered_lock = threading.Lock()
        self._declared: Dict[str, Tuple[str, Optional[str], str]] = {}
        self._last: Dict[str, datetime] = {}  # newest run time handed in

    def start(self, scheduler: Any, alias: str) -> None:
        super().start(scheduler, alias)
        self._alias = alias
        if self.leader.shards:
            self.leader.add_shard_listener(self._on_shard)
        else:
            self.leader.add_listener(self._on_leadership)
        self.leader.add_offer_listener(self._on_offers)
        if self.leader.is_leader():
            # elected before this executor started (within Leader.start(),
            # when nobody led): no listener heard it, so catch up now
            self._pool.submit(self._catch_up, self.leader.term())

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait)

    # ---- submitting ----

    def _do_submit_job(self, job: Any, run_times: List[datetime]) -> None:
        # the claims do I/O: they run in the pool, not in the scheduler
        late = self._late_times(job, run_times[-1])
        if late:
            f = self._pool.submit(self._run_late, job, late)
        else:
            f = self._pool.submit(self._run_fires, job, run_times)
        f.add_done_callback(lambda fut: self._done(job.id, fut))

    def _late_times(self, job: Any, newest: datetime) -> List[datetime]:
        """When the scheduler's thread was late (a paused process, a
        pause()), job's fire times within its grace since the last run
        time this executor was handed, newest included; else []. In the
        scheduler's thread (no I/O)."""
        last = self._last.get(job.id)
        if last is None or newest > last:
            self._last[job.id] = newest
        if last is None or newest <= last:
            return []
        times = fire_times(job, newest, last)
        return times if len(times) > 1 else []

    def _run_late(self, job: Any, times: List[datetime]) -> list:
        """A late thread's fires of job (the newest is due now): runs
        those the catch-up policy names (docs/catch-up.md), as
        _run_fires; the newest alone when this host does not lead job."""
        if not self.leader.leads(job.id):
            return self._run_fires(job, times[-1:])  # left to the leader
        return self._run_fires(job, self._to_catch_up(job, times, True))

    def _done(self, job_id: str, fut: "concurrent.futures.Future") -> None:
        exc = fut.exception()
        if exc is not None:
            self._run_job_error(job_id, exc, exc.__traceback__)
        else:
            self._run_job_success(job_id, fut.result())

    def _run_fires(self, job: Any, run_times: List[datetime]) -> list:
        """Claims and runs each run time of job; returns the scheduler
        events of those it ran. A fire this host cannot claim because it
        does not lead is left to the leader, or to this host's catch-up
        when it becomes leader."""
        events: list = []
        for run_time in run_times:
            fire_ms = fire_ms_of(run_time)
            if self._too_late(job, run_time):
                events.append(JobExecutionEvent(
                    EVENT_JOB_MISSED, job.id, job._jobstore_alias, run_time))
                continue
            if not self.leader.leads(job.id):
                continue
            try:
                self._declare(job)
                fire = self.leader.claim(job.id, fire_ms,
                                         self._max_attempts(job.id))
            except LeaderPluginError as e:
                self._logger.warning("claiming %s at %s failed: %s; not run",
                                     job.id, run_time, e)
                continue
            if fire is not None:
                events += self._run_one(job, run_time, fire)
        return events

    def _run_one(self, job: Any, run_time: datetime, fire: Fire) -> list:
        """Runs one claimed fire with current_fire() set; records its
        outcome in the ledger."""
        _local.fire = fire
        try:
            events = run_job(job, job._jobstore_alias, [run_time],
                             self._logger.name)
        finally:
            _local.fire = None
        failed = any(e.code == EVENT_JOB_ERROR for e in events)
        try:
            self.leader.finish(fire, 1 if failed else 0)
        except LeaderPluginError as e:
            self._logger.warning("recording the outcome of %s at %s failed: "
                                 "%s", job.id, run_time, e)
        return events

    def _declare(self, job: Any) -> None:
        """Says job's schedule identity to the leader when it is new or
        changed (no I/O). A zone the library cannot name (tzlocal's
        "local") is the host's, as the library names it."""
        ident = schedule_of(job)
        if self._declared.get(job.id) == ident:
            return
        try:
            self.leader.set_schedule(job.id, *ident)
        except LeaderPluginError:
            if ident[1] in (None, ""):
                raise
            self._logger.warning("%s: zone %r has no IANA name; its "
                                 "schedule names the host's", job.id,
                                 ident[1])
            self.leader.set_schedule(job.id, ident[0], None, ident[2])
        self._declared[job.id] = ident

    def _max_attempts(self, job_id: str) -> int:
        a = self._attempts
        return int(a.get(job_id, 1)) if isinstance(a, dict) else int(a)

    # ---- offered fires: recoveries and run-now ----

    def _on_offers(self, offers: list) -> None:
        """The leader's offer listener (its ticking thread, which must not
        wait on a job store): hands each offered fire to the pool, once
        while it is there (the claim runs it at most once in any case)."""
        for offer in offers:
            key = (offer.job, offer.fire_ms)
            with self._offered_lock:
                if key in self._offered:
                    continue
                self._offered.add(key)
            f = self._pool.submit(self._run_offer, offer)
            f.add_done_callback(
                lambda fut, key=key: self._offer_done(key, fut))

    def _offer_done(self, key: Tuple[str, int],
                    fut: "concurrent.futures.Future") -> None:
        with self._offered_lock:
            self._offered.discard(key)
        exc = fut.exception()
        if exc is not None:
            self._run_job_error(key[0], exc, exc.__traceback__)
        elif fut.result() is not None:
            self._run_job_success(key[0], fut.result())

    def _run_offer(self, offer: Any) -> Optional[list]:
        """Claims and runs one offered fire (in the pool); returns the
        scheduler events of the run ([] when the claim was not this
        host's), or None when its job is not one of this executor's."""
        job = self._scheduler.get_job(offer.job)
        if job is None or job.executor != self._alias:
            return None
        attempts = max(int(offer.max_attempts), self._max_attempts(job.id))
        try:
            fire = self.leader.claim(job.id, offer.fire_ms, attempts)
        except LeaderPluginError as e:
            self._logger.warning("claiming offered %s at %d failed: %s; "
                                 "not run", job.id, offer.fire_ms, e)
            return []
        if fire is None:
            return []
        self._logger.info("running %s at %d: %s, attempt %d (term %d)",
                          job.id, offer.fire_ms,
                          "run-now" if fire.triggered else "recovery",
                          fire.attempt, fire.term)
        return self._run_one(job, datetime.now(timezone.utc), fire)

    # ---- catching up after a failover ----

    @staticmethod
    def _too_late(job: Any, run_time: datetime) -> bool:
        """True when run_time is past the job's misfire_grace_time (None:
        no limit)."""
        grace = job.misfire_grace_time
        return grace is not None and time.time() - run_time.timestamp() > grace

    def _on_leadership(self, is_leader: bool, term: int) -> None:
        """On becoming leader: claims and runs, in the pool, the fires of
        every job of this executor still within the job's grace that
        nobody ran (a claim of a fire run before answers None)."""
        if is_leader:
            self._pool.submit(self._catch_up, term)

    def _on_shard(self, shard: int, is_leader: bool, term: int) -> None:
        """A group: on gaining shard, catches up the jobs of that shard."""
        if is_leader:
            self._pool.submit(self._catch_up, term, shard)

    def _catch_up(self, term: int, shard: Optional[int] = None) -> None:
        """Claims and runs the fires nobody ran of every job of this
        executor (of shard's jobs only, when given) while it leads them."""
        now = datetime.now(timezone.utc)
        for job in self._scheduler.get_jobs():
            if job.executor != self._alias:
                continue
            if shard is not None and self.leader.shard_of(job.id) != shard:
                continue
            for run_time in self._to_catch_up(job, fire_times(job, now)):
                if not self.leader.leads(job.id):
                    break
                events = self._run_fires(job, [run_time])
                if events:
                    self._logger.info("caught up %s at %s (term %d)", job.id,
                                      run_time, term)
                for event in events:
                    self._scheduler._dispatch_event(event)


    def _to_catch_up(self, job: Any, times: List[datetime],
                     present: bool = False) -> List[datetime]:
        """Of job's fire times (present: the newest is due now), those
        the library's catch-up policy (docs/catch-up.md) says to run: the
        job's coalesce is the policy (True: latest, False: all), its
        misfire_grace_time the grace on the database clock
        (Leader.catch_up_times)."""
        policy = "latest" if job.coalesce else "all:%d" % MAX_CATCH_UP
        grace = job.misfire_grace_time
        grace_ms = int((CATCH_UP_MAX_S if grace is None else grace) * 1000)
        return self.leader.catch_up_times(job.id, times, policy, grace_ms,
                                          present)


def fire_times(job: Any, now: datetime,
               after: Optional[datetime] = None) -> List[datetime]:
    """The fire times of job in its catch-up window, as its trigger
    computes them (the same on every host): from now minus its
    misfire_grace_time (CATCH_UP_MAX_S when it has none), or from just
    after after when that is later, to now."""
    grace = job.misfire_grace_time
    if grace is None:
        grace = CATCH_UP_MAX_S
    start = now - timedelta(seconds=grace)
    if after is not None:
        start = max(start, after + timedelta(microseconds=1))
    t = job.trigger.get_next_fire_time(None, start)
    out: List[datetime] = []
    while t is not None and t <= now and len(out) < MAX_CATCH_UP:
        out.append(t)
        t = job.trigger.get_next_fire_time(t, t + timedelta(microseconds=1))
    return out
