"""odbc_leader.apscheduler: one APScheduler configuration on every host,
each fire run on one of them.

APScheduler (3.x) fires a job on every host that runs the scheduler.
LeaderExecutor, an executor to give the scheduler, claims each fire (job
id, scheduled run time) in the database before it runs it; only the
claimant runs it, so each fire runs once across hosts and never twice.
Hosts that do not lead remember the fires they were given; when one of
them becomes leader it claims and runs those that nobody claimed and that
are still within the job's misfire_grace_time (the fires due while the
old leader was dead). So a job's misfire_grace_time should exceed the
takeover time (the lease's TTL plus a few seconds).

    from apscheduler.schedulers.blocking import BlockingScheduler
    from odbc_leader import Leader
    from odbc_leader.apscheduler import LeaderExecutor, current_fire

    leader = Leader("DSN=sched", namespace="jobs").start()
    sched = BlockingScheduler(executors={"default": LeaderExecutor(leader)})
    sched.add_job(report, "cron", minute=0, misfire_grace_time=60)
    sched.start()

Inside a job, current_fire() returns the Fire it runs (job id, fire_ms,
term: the fencing token). The fire's time is the run time APScheduler
computed, so triggers must give the same times on every host: cron and
date triggers do; give interval triggers a fixed start_date.
"""

import concurrent.futures
import threading
import time
from datetime import datetime
from typing import Any, Dict, List, Optional, Tuple

from apscheduler.events import (EVENT_JOB_ERROR, EVENT_JOB_MISSED,
                                JobExecutionEvent)
from apscheduler.executors.base import BaseExecutor, run_job

from .leader import Fire, Leader
from .plugin import LeaderPluginError

__all__ = ["LeaderExecutor", "current_fire", "fire_ms_of"]

_local = threading.local()
MAX_KEPT = 10000  # fires kept for a catch-up, at most


def current_fire() -> Optional[Fire]:
    """The Fire the calling job runs (job id, fire_ms, term), or None
    outside a job run by LeaderExecutor."""
    return getattr(_local, "fire", None)


def fire_ms_of(run_time: datetime) -> int:
    """A run time (an aware datetime) as epoch milliseconds."""
    return int(round(run_time.timestamp() * 1000))


class LeaderExecutor(BaseExecutor):
    """An APScheduler executor that runs a fire only when leader claimed it.

    leader is a started odbc_leader.Leader (this executor neither starts
    nor stops it). Jobs run in a thread pool of max_workers threads.
    """

    def __init__(self, leader: Leader, max_workers: int = 10) -> None:
        super().__init__()
        self.leader = leader
        self._pool = concurrent.futures.ThreadPoolExecutor(int(max_workers))
        # fires given while not leading: (job id, fire_ms) -> (job, run time)
        self._pending: Dict[Tuple[str, int], Tuple[Any, datetime]] = {}
        self._pending_lock = threading.Lock()

    def start(self, scheduler: Any, alias: str) -> None:
        super().start(scheduler, alias)
        self.leader.add_listener(self._on_leadership)

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait)

    # ---- submitting ----

    def _do_submit_job(self, job: Any, run_times: List[datetime]) -> None:
        # the claims do I/O: they run in the pool, not in the scheduler
        f = self._pool.submit(self._run_fires, job, run_times, False)
        f.add_done_callback(lambda fut: self._done(job.id, fut))

    def _done(self, job_id: str, fut: "concurrent.futures.Future") -> None:
        exc = fut.exception()
        if exc is not None:
            self._run_job_error(job_id, exc, exc.__traceback__)
        else:
            self._run_job_success(job_id, fut.result())

    def _run_fires(self, job: Any, run_times: List[datetime],
                   catch_up: bool) -> list:
        """Claims and runs each run time of job; returns the scheduler
        events of those it ran. A fire this host cannot claim because it
        does not lead is kept for a catch-up."""
        events: list = []
        kept = False
        for run_time in run_times:
            fire_ms = fire_ms_of(run_time)
            if self._too_late(job, run_time):
                events.append(JobExecutionEvent(
                    EVENT_JOB_MISSED, job.id, job._jobstore_alias, run_time))
                continue
            if not catch_up and not self.leader.is_leader():
                kept = self._keep(job, run_time)
                continue
            try:
                fire = self.leader.claim(job.id, fire_ms)
            except LeaderPluginError as e:
                self._logger.warning("claiming %s at %s failed: %s; not run",
                                     job.id, run_time, e)
                continue
            if fire is None:
                if not catch_up and not self.leader.is_leader():
                    kept = self._keep(job, run_time)
                continue
            events += self._run_one(job, run_time, fire)
        if kept and self.leader.is_leader():
            # leadership came while these were being kept: catch up now
            self._on_leadership(True, self.leader.term())
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

    # ---- catching up after a failover ----

    @staticmethod
    def _too_late(job: Any, run_time: datetime) -> bool:
        """True when run_time is past the job's misfire_grace_time (None:
        no limit)."""
        grace = job.misfire_grace_time
        return grace is not None and time.time() - run_time.timestamp() > grace

    def _keep(self, job: Any, run_time: datetime) -> bool:
        """Keeps a fire for a catch-up; returns True."""
        with self._pending_lock:
            self._pending[(job.id, fire_ms_of(run_time))] = (job, run_time)
            self._gc_pending()
            while len(self._pending) > MAX_KEPT:  # jobs without a grace
                del self._pending[min(self._pending, key=lambda k: k[1])]
        return True

    def _gc_pending(self) -> None:
        """Drops kept fires past their job's grace (lock held)."""
        for key, (job, run_time) in list(self._pending.items()):
            if self._too_late(job, run_time):
                del self._pending[key]

    def _on_leadership(self, is_leader: bool, term: int) -> None:
        """On becoming leader: claims and runs, in the pool, every kept
        fire still within its grace."""
        if not is_leader:
            return
        with self._pending_lock:
            self._gc_pending()
            kept = sorted(self._pending.values(), key=lambda jr: jr[1])
            self._pending.clear()
        for job, run_time in kept:
            self._logger.info("catching up %s at %s (term %d)", job.id,
                              run_time, term)
            self._pool.submit(self._catch_up, job, run_time)

    def _catch_up(self, job: Any, run_time: datetime) -> None:
        events = self._run_fires(job, [run_time], True)
        for event in events:
            self._scheduler._dispatch_event(event)
