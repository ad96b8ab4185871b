# SPDX-License-Identifier: MIT
"""odbc_leader.celery: celery beat on every host, each due entry sent once.

Celery beat must never run twice: two beats send every periodic task
twice. LeaderScheduler is a beat scheduler to run on every host:

    celery -A proj beat -S odbc_leader.celery:LeaderScheduler

Each host computes the same nominal time for each due entry (interval
schedules are aligned to multiples of their period since the epoch,
crontab schedules fire at their crontab times) and claims it in the
database's fire ledger (job = the entry's name) before it sends the task.
Only the claimant sends it, so each due entry is sent once across hosts.
A beat that does not lead leaves the entry to the leader. A beat that
becomes leader walks back over each entry's nominal times within
odbc_leader_misfire_grace_time and sends those the library's catch-up
policy names (odbc_leader_catch_up, docs/catch-up.md): by default all
that nobody sent (the ones due while the old leader was dead, even if
this beat started after them); an entry with no fire in the ledger
catches up nothing. A late beat (a paused process, a long send) sends
the entries it skipped as the same policy says, the one due now in any
case.

With odbc_leader_shards = N the beats are members of a sharded group
(docs/groups.md): each entry belongs to one of N shards (by its name), the
beats share the shards, and each entry is sent by the beat that leads its
shard, so a fleet spreads its entries. A beat that gains a shard catches
up that shard's entries as above.

Settings (app.conf, or CELERY_ODBC_LEADER_... in a Django-style config):

    odbc_leader_connect             ODBC connection string or "DSN=name"
                                    (required)
    odbc_leader_namespace           election namespace (default
                                    "celery-beat")
    odbc_leader_ttl_ms              LeaderTTL (default: the library's, 15 s)
    odbc_leader_shards              LeaderShards: a sharded group of this
                                    many shards (default: none, one leader
                                    sends every entry)
    odbc_leader_plugin              odbc_leader.so (default: find_plugin())
    odbc_leader_misfire_grace_time  seconds a late entry is still sent
                                    (default 60; make it exceed the
                                    takeover time, TTL plus a few seconds)
    odbc_leader_catch_up            which missed nominal times a new
                                    leader sends: "all" (default),
                                    "all:CAP", "latest" or "skip"
    odbc_leader_max_attempts        how many times a due entry may be
                                    claimed when the beat that claimed it
                                    died before recording that it sent it
                                    (default 1: at most once; an int, or a
                                    dict of entry name to int)

The task gets headers odbc_leader_fire_ms, odbc_leader_term (its fencing
token; in a group, the term of the entry's shard) and odbc_leader_attempt:
self.request.odbc_leader_term in a bound task.

A paused entry (`odbc-leader jobs pause NAME`) is sent by no beat; a
run-now (`odbc-leader jobs trigger NAME`) is sent once by the leading beat,
with the run-now's key (below 0) as odbc_leader_fire_ms. With
odbc_leader_max_attempts above 1, an entry whose beat died between the
claim and recording the send is sent again by the next leader (so, if it
died after sending, twice: at least once, docs/lifecycle.md).
Schedules other than interval (celery.schedules.schedule, timedelta) and
crontab are refused at start: their times cannot be made the same on
every host.
"""

import copy
import logging
import signal
import threading
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

import celery
from celery.beat import Scheduler
from celery.schedules import crontab, schedule

from .leader import Fire, Leader, epoch_ms
from .plugin import LeaderPluginError

__all__ = ["LeaderScheduler", "nominal_time"]

logger = logging.getLogger("odbc_leader.celery")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# The engine part of a schedule identity (docs/schedules.md): celery's
# crontab fields, matched on the wall clock of the app's timezone, with
# this module's DST rule (_next_crontab; celery_times.py checks it).
ENGINE = ("celery %s (DST gap: an hour later; overlap: the first)"
          % celery.__version__)
DEFAULT_GRACE_S = 60
CATCH_UP_INTERVAL_S = 1.0  # beat re-checks at least this often
MAX_CATCH_UP = 10000  # nominal times claimed per entry and catch-up
_TICK = timedelta(microseconds=1)  # nominal_times(since=t - _TICK) holds t


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def nominal_time(entry: Any) -> Optional[datetime]:
    """The time entry is due at after its last_run_at: the same on every
    host that gives it the same last_run_at. None for other schedules."""
    s = entry.schedule
    last = _aware(s.maybe_make_aware(entry.last_run_at))
    if isinstance(s, crontab):
        return _next_crontab(s, last)
    if isinstance(s, schedule):
        return last + s.run_every
    return None


def _localize(tz: Any, wall: datetime) -> datetime:
    """Wall time wall (naive) in zone tz: a time the autumn change repeats
    at its first pass, one the spring change skips an hour later (at the
    offset before the gap). tz: a pytz zone or a tzinfo with fold."""
    if not hasattr(tz, "localize"):
        return wall.replace(tzinfo=tz, fold=0)
    import pytz  # celery's zones are pytz's where tz has localize
    try:
        return tz.localize(wall, is_dst=None)
    except pytz.exceptions.AmbiguousTimeError:
        return tz.localize(wall, is_dst=True)
    except pytz.exceptions.NonExistentTimeError:
        return tz.localize(wall, is_dst=False)


def _next_crontab(s: crontab, t: datetime) -> datetime:
    """The crontab's first time after t (aware), on the wall clock of its
    zone (the app's timezone): remaining_delta matches the fields in the
    zone of the time it is given, so a time in UTC would fire at UTC's
    hours; it also takes "now" for the day whose hour it fills, so it is
    told that t is now. Its answer keeps the offset of the time it started from, an
    hour off across a DST change, so only its wall time is kept and placed
    by _localize; a wall time whose first pass is not after t (t within a
    repeated hour) gives the next one."""
    local = t.astimezone(s.tz)
    at = copy.copy(s)  # remaining_delta asks now() whether "this hour"
    for _ in range(4):
        at.nowfun = lambda local=local: local
        start, delta, _now = at.remaining_delta(local)
        local = _localize(s.tz, (start + delta).replace(tzinfo=None))
        if local > t:
            break
    return local


def _aligned(run_every: timedelta, now: datetime) -> datetime:
    """The latest multiple of run_every since the epoch at or before now."""
    period = run_every.total_seconds()
    n = int((now - EPOCH).total_seconds() // period)
    return EPOCH + timedelta(seconds=n * period)


class LeaderScheduler(Scheduler):
    """A celery beat scheduler that sends each due entry on one host."""

    def setup_schedule(self) -> None:
        conf = self.app.conf
        connect = conf.get("odbc_leader_connect")
        if not connect:
            raise ValueError("odbc_leader.celery: set odbc_leader_connect "
                             "(an ODBC connection string or DSN=name)")
        self.grace_s = float(conf.get("odbc_leader_misfire_grace_time",
                                      DEFAULT_GRACE_S))
        self.catch_up_policy = str(conf.get("odbc_leader_catch_up") or "all")
        self.max_attempts = conf.get("odbc_leader_max_attempts") or 1
        self._offers_lock = threading.Lock()
        self._offers: list = []  # the last tick's offers, for beat's loop
        self._caught_up = threading.Event()
        self._gained_lock = threading.Lock()
        self._gained: Optional[set] = set()  # None: every entry
        self.leader = Leader(
            connect, namespace=conf.get("odbc_leader_namespace",
                                        "celery-beat"),
            ttl_ms=conf.get("odbc_leader_ttl_ms"),
            plugin=conf.get("odbc_leader_plugin"),
            shards=conf.get("odbc_leader_shards"))
        if not self.leader.valid_catch_up(self.catch_up_policy):
            raise ValueError("odbc_leader.celery: odbc_leader_catch_up: skip, "
                             "latest, all or all:CAP (1 to 10000), not %r"
                             % self.catch_up_policy)
        if self.leader.shards:
            self.leader.add_shard_listener(self._on_shard)
        else:
            self.leader.add_listener(self._on_leadership)
        self.leader.add_offer_listener(self._on_offers)
        super().setup_schedule()
        now = datetime.now(timezone.utc)
        for entry in self.schedule.values():
            self._align(entry, now)
        self.leader.start()

    def _align(self, entry: Any, now: datetime) -> None:
        """Gives entry the last_run_at every host gives it, and says its
        schedule identity (docs/schedules.md): a crontab in its zone (the
        app's timezone), an interval on the epoch's grid with none."""
        s = entry.schedule
        if isinstance(s, crontab):
            # the next crontab time after now, in the crontab's zone
            entry.last_run_at = now.astimezone(s.tz)
            expr = "crontab %s %s %s %s %s" % (
                s._orig_minute, s._orig_hour, s._orig_day_of_month,
                s._orig_month_of_year, s._orig_day_of_week)
            tz = str(s.tz)
        elif isinstance(s, schedule):
            entry.last_run_at = _aligned(s.run_every, now)
            expr = "every %s s from the epoch" % s.run_every.total_seconds()
            tz = ""
        else:
            raise ValueError(
                "odbc_leader.celery: entry %s has a %s schedule; only "
                "interval and crontab schedules give the same times on "
                "every host" % (entry.name, type(s).__name__))
        self.leader.set_schedule(entry.name, expr, tz, ENGINE)

    def close(self) -> None:
        """Stops campaigning: a leader resigns, another beat takes over."""
        super().close()
        leader = getattr(self, "leader", None)
        if leader is not None:
            leader.stop()

    # ---- the beat loop ----

    def reserve(self, entry: Any) -> Any:
        """The entry's next instance, last run at its nominal time (not
        at now), so that every host keeps the same times."""
        nominal = nominal_time(entry)
        new_entry = self.schedule[entry.name] = entry._next_instance(
            last_run_at=nominal)
        return new_entry

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if self._caught_up.is_set():
            self._caught_up.clear()
            with self._gained_lock:
                shards, self._gained = self._gained, set()
            self._catch_up(shards)
        self._send_offers()
        return min(super().tick(*args, **kwargs), CATCH_UP_INTERVAL_S)

    def apply_entry(self, entry: Any, producer: Any = None) -> None:
        """Sends entry's task when this host claims its nominal time. A
        late beat (a paused process, a long send) finds later nominal
        times of the entry due too: the catch-up policy decides which of
        those within the grace run, the newest flagged present
        (docs/catch-up.md), and the entry moves on to the newest."""
        nominal = nominal_time(entry)
        if nominal is None:
            return
        now = datetime.now(timezone.utc)
        times = nominal_times(entry, max(nominal - _TICK, now - timedelta(
            seconds=self.grace_s)), now)
        if times in ([], [nominal]):  # on time, or past the grace (logged)
            self._claim_and_send(entry, nominal, producer)
            return
        self.schedule[entry.name].last_run_at = times[-1]  # the heap's entry
        if self.leader.leads(entry.name):
            for t in self._to_catch_up(entry, times, present=True):
                self._claim_and_send(entry, t, producer)

    def _claim_and_send(self, entry: Any, nominal: datetime,
                        producer: Any) -> None:
        """Sends entry's task for nominal when this host leads and claims
        it; else leaves it to the leader (or to this host's catch-up)."""
        late = (datetime.now(timezone.utc) - nominal).total_seconds()
        if late > self.grace_s:
            logger.warning("%s at %s: %.1f s late, past the grace; not sent",
                           entry.name, nominal.isoformat(), late)
            return
        if not self.leader.leads(entry.name):
            return
        _stops_held(lambda: self._claim_then_send(
            entry, epoch_ms(nominal), self._attempts_of(entry.name), producer))

    def _claim_then_send(self, entry: Any, fire_ms: int, attempts: int,
                         producer: Any) -> None:
        """Claims entry's fire_ms and, when this beat is to send it, sends
        it and records the outcome (under _stops_held)."""
        try:
            fire = self.leader.claim(entry.name, fire_ms, attempts)
        except LeaderPluginError as e:
            logger.warning("claiming %s at %d failed: %s; not sent",
                           entry.name, fire_ms, e)
            return
        if fire is None:
            return
        if fire.recovering or fire.triggered:
            logger.info("%s %s at %d, attempt %d", "run-now of"
                        if fire.triggered else "recovering", entry.name,
                        fire_ms, fire.attempt)
        self._send_and_finish(entry, fire, producer)

    def _send_and_finish(self, entry: Any, fire: Fire, producer: Any) -> None:
        status = 1
        sent = copy.copy(entry)  # the same entry, with the fire's headers
        sent.options = dict(entry.options, headers=dict(
            entry.options.get("headers") or {},
            odbc_leader_fire_ms=fire.fire_ms, odbc_leader_term=fire.term,
            odbc_leader_attempt=fire.attempt))
        try:
            result = self.apply_async(sent, producer=producer, advance=False)
            status = 0
            logger.info("sent %s fire %d term %d: task %s", entry.name,
                        fire.fire_ms, fire.term, result.id)
        except Exception as exc:  # pylint: disable=broad-except
            logger.error("sending %s failed: %s", entry.name, exc)
        try:
            self.leader.finish(fire, status)
        except LeaderPluginError as e:
            logger.warning("recording %s failed: %s", entry.name, e)

    # ---- offered fires: run-now requests and recoveries ----

    def _attempts_of(self, name: str) -> int:
        m = self.max_attempts
        return int(m.get(name, 1)) if isinstance(m, dict) else int(m)

    def _on_offers(self, offers: list) -> None:
        """The leader's offer listener, in the ticking thread: noted for
        beat's loop (the producer is not thread-safe)."""
        with self._offers_lock:
            self._offers = list(offers)

    def _send_offers(self) -> None:
        """Claims and sends each offered fire of an entry (its claim sends
        it at most once: an offer seen again before the next read is
        claimed before, and skipped)."""
        with self._offers_lock:
            offers, self._offers = self._offers, []
        for offer in offers:
            entry = self.schedule.get(offer.job)
            if entry is None or not self.leader.leads(offer.job):
                continue
            attempts = max(int(offer.max_attempts),
                           self._attempts_of(offer.job))
            _stops_held(lambda: self._claim_then_send(
                entry, offer.fire_ms, attempts, self.producer))

    # ---- catching up after a failover ----

    def _on_leadership(self, is_leader: bool, term: int) -> None:
        """In the ticking thread: the catch-up runs in beat's own loop
        (the producer is not thread-safe)."""
        if is_leader:
            with self._gained_lock:
                self._gained = None
            self._caught_up.set()

    def _on_shard(self, shard: int, is_leader: bool, term: int) -> None:
        """A group, in the ticking thread: the shards gained since the
        last catch-up, which beat's loop runs."""
        if is_leader:
            with self._gained_lock:
                if self._gained is not None:
                    self._gained.add(shard)
            self._caught_up.set()

    def _catch_up(self, shards: Optional[set] = None) -> None:
        """Claims and sends, for every entry (of the given shards only,
        when not None), each nominal time within the grace that nobody
        sent (a claim of one sent before answers None): the entries due
        while the old leader was dead, even if this beat started after
        them."""
        now = datetime.now(timezone.utc)
        due = []
        for entry in list(self.schedule.values()):
            if (shards is not None and
                    self.leader.shard_of(entry.name) not in shards):
                continue
            due += [(nominal, entry.name, entry) for nominal in self._to_catch_up(
                entry, nominal_times(entry, now - timedelta(seconds=self.grace_s), now))]
        # oldest first across entries: the closest to their grace go first
        for nominal, name, entry in sorted(due, key=lambda d: d[:2]):
            if self.leader.leads(name):
                self._claim_and_send(entry, nominal, self.producer)


    def _to_catch_up(self, entry: Any, times: list,
                     present: bool = False) -> list:
        """Of entry's nominal times (present: the newest is due now),
        those the library's catch-up policy says to send
        (docs/catch-up.md; Leader.catch_up_times)."""
        return self.leader.catch_up_times(entry.name, times,
                                          self.catch_up_policy,
                                          int(self.grace_s * 1000), present)


def _stops_held(fn: Callable[[], None]) -> None:
    """Runs fn (a claim, the send and the record of its outcome) with
    SIGTERM and SIGINT held until it returns: beat stops by raising
    SystemExit from its handler, which would otherwise leave a fire
    claimed and not sent, or sent and unfinished in the ledger. Their
    handlers are swapped for ones that note the signal, and the noted
    signals go to beat's handlers afterwards. (Blocking them with
    pthread_sigmask is not enough: the kernel then hands the signal to
    another thread, and Python runs the handler in the main thread all
    the same.) Only the main thread can swap handlers; beat embedded in a
    worker's thread runs fn as is."""
    if threading.current_thread() is not threading.main_thread():
        fn()
        return
    noted: list = []
    held = {sig: signal.signal(sig, lambda n, f: noted.append((n, f)))
            for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        fn()
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
        for sig, frame in noted:
            _deliver(held[sig], sig, frame)


def _deliver(handler: Any, sig: int, frame: Any) -> None:
    """Runs the handler that was in place for sig when it arrived."""
    if callable(handler):
        handler(sig, frame)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(sig)  # the default handler is back in place


def nominal_times(entry: Any, since: datetime, until: datetime) -> list:
    """entry's nominal times in (since, until], as every host computes
    them (at most MAX_CATCH_UP)."""
    s = entry.schedule
    out = []
    if isinstance(s, crontab):
        t = since
        while len(out) < MAX_CATCH_UP:
            t = _next_crontab(s, t)
            if t > until:
                break
            out.append(t)  # the next one comes strictly after t
    elif isinstance(s, schedule):
        t = _aligned(s.run_every, since) + s.run_every
        while t <= until and len(out) < MAX_CATCH_UP:
            out.append(t)
            t += s.run_every
    return out
