# SPDX-License-Identifier: MIT
"""odbc_leader.leader: a candidate that campaigns in a thread of its own.

Leader loads odbc_leader.so (found by find_plugin), creates one plugin
instance from an ODBC connection string and ticks it in a background
thread, as the plugin asks. The program asks is_leader() and term() (no
I/O) and claims fires: claim(job, fire_ms) records in the database that
this fire runs in this term, so each fire runs on one host at most
(docs/fencing.md). Calls into the instance are serialized by a lock: the
plugin's instance is not thread-safe, and a claim may come from any
thread.

    with Leader("DSN=sched", namespace="nightly") as leader:
        ...
        with leader.claimed("report", fire_ms) as fire:
            if fire:                       # None: not ours to run
                write_report(fire.term)    # the fencing token

Leaving the with block (or stop()) resigns, so another host takes over at
once.

With shards=N the candidate is a member of a sharded group
(docs/groups.md): each job belongs to one of N shards (shard_of), each
shard is led by one member of the group, fenced by a term of its own, and
the members share the shards between them. leads(job) says whether this
host leads the job's shard (no I/O), and claim(job, fire_ms) claims the
fire in that shard's term, so each job runs on one host and the jobs are
spread over the hosts:

    with Leader("DSN=sched", namespace="fleet", shards=64) as leader:
        with leader.claimed("report", fire_ms) as fire:
            if fire:                       # this host leads report's shard
                write_report(fire.term)    # that shard's fencing token
"""

import logging
import os
import re
import shutil
import subprocess
import threading
import time
from contextlib import contextmanager
from datetime import datetime
from typing import Callable, Iterator, List, NamedTuple, Optional, Tuple

from . import plugin as _plugin
from .fencing import Fence

_log = logging.getLogger("odbc_leader")


def epoch_ms(dt: datetime) -> int:
    """An aware datetime as epoch milliseconds, rounded: the key every
    integration claims a fire under."""
    return int(round(dt.timestamp() * 1000))

__all__ = ["Fire", "Leader", "find_plugin", "PLUGIN_ENV"]

PLUGIN_ENV = "ODBC_LEADER_PLUGIN"
_PLUGIN_NAME = "odbc_leader.so"
# Where `make install` puts the plugin ($(pkglibdir)) for the usual prefixes,
# after what pkg-config says.
_PKGLIBDIRS = (
    "/usr/local/lib/odbc-leader",
    "/usr/lib/odbc-leader",
    "/usr/lib/x86_64-linux-gnu/odbc-leader",
    "/usr/lib/aarch64-linux-gnu/odbc-leader",
)


def _pkgconfig_pkglibdir() -> Optional[str]:
    """The pkglibdir of an installed odbcleader.pc, or None."""
    exe = shutil.which("pkg-config")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--variable=pkglibdir", "odbcleader"],
            capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    path = out.stdout.strip()
    return path if out.returncode == 0 and path else None


def _resolve_plugin(path: Optional[str], env: Optional[str],
                    pkglibdir: Callable[[], Optional[str]],
                    exists: Callable[[str], bool]) -> str:
    """The plugin's path in docs/abi.md's order ("Finding the plugin"):
    path when given, else env ($ODBC_LEADER_PLUGIN), else the installed
    pkglibdir (pkglibdir() asks pkg-config, then the usual prefixes).
    exists(p) says whether p is a file. Raises FileNotFoundError naming
    every place it looked. Pure: find_plugin gives it the host's."""
    if path:
        if not exists(path):
            raise FileNotFoundError("odbc-leader plugin %s: no such file" % path)
        return path
    if env:
        if not exists(env):
            raise FileNotFoundError(
                "odbc-leader plugin %s (from $%s): no such file" % (env, PLUGIN_ENV))
        return env
    dirs = [d for d in (pkglibdir(),) if d] + list(_PKGLIBDIRS)
    tried = [os.path.join(d, _PLUGIN_NAME) for d in dirs]
    for candidate in tried:
        if exists(candidate):
            return candidate
    raise FileNotFoundError(
        "odbc-leader plugin not found: pass plugin=, set $%s, or install "
        "odbc-leader (tried %s)" % (PLUGIN_ENV, ", ".join(tried)))


def find_plugin(path: Optional[str] = None) -> str:
    """The path of odbc_leader.so: path when given, else $ODBC_LEADER_PLUGIN,
    else the installed pkglibdir (pkg-config's, then the usual prefixes).
    Raises FileNotFoundError naming every place it looked."""
    return _resolve_plugin(path, os.environ.get(PLUGIN_ENV),
                           _pkgconfig_pkglibdir, os.path.isfile)


_BLANKS = " \t\r\n\v\f"


def _quote(value: str) -> str:
    """value as the library's parser (src/config.c) reads it back as one
    value: as it is, or in braces with '}' doubled when it holds ';', '{',
    '}' or blanks at either end."""
    s = str(value)
    if not re.search(r"[;{}\0]", s) and s.strip(_BLANKS) == s:
        return s
    return "{" + s.replace("}", "}}") + "}"


def _config(connect: str, namespace: Optional[str], ttl_ms: Optional[int],
            extra: Optional[str], shards: Optional[int] = None) -> str:
    """The plugin's configuration string: the ODBC connection string (or
    DSN=...) with the Leader* keys added (the namespace quoted: one value,
    whatever it holds)."""
    parts = [connect.rstrip(";")]
    if namespace is not None:
        parts.append("LeaderNamespace=%s" % _quote(namespace))
    if ttl_ms is not None:
        parts.append("LeaderTTL=%d" % int(ttl_ms))
    if shards is not None:
        parts.append("LeaderShards=%d" % int(shards))
    if extra:
        parts.append(extra.strip(";"))
    return ";".join(p for p in parts if p)


class Fire(NamedTuple):
    """A fire this host claimed: run it under term (the fencing token).

    attempt counts the fire's runs (1 the first; more when it recovers a
    run whose leader died before its outcome: recovering, as Quartz's
    isRecovering()); triggered marks a run-now (`odbc-leader jobs
    trigger`), whose fire_ms is its key, below 0, not a time."""
    job: str
    fire_ms: int
    term: int
    attempt: int = 1
    recovering: bool = False
    triggered: bool = False


Listener = Callable[[bool, int], None]
ShardListener = Callable[[int, bool, int], None]
OfferListener = Callable[[List[_plugin.Offer]], None]


class Leader:
    """One candidate of one election namespace, ticking in a thread.

    connect is an ODBC connection string or "DSN=name" (the Leader* keys of
    odbc_leader(7) may be in it or in the odbc.ini section); namespace and
    ttl_ms, when given, set LeaderNamespace and LeaderTTL; shards, when
    given, LeaderShards: the candidate is then a member of the sharded
    group namespace (every member must give the same count); extra adds
    more Leader* keys. plugin is the .so (see find_plugin). log(level, msg) gets
    the plugin's log lines (syslog levels); by default they go to the
    "odbc_leader" logger. Raises odbc_leader.LeaderPluginError when the
    configuration or the database is refused (the message names the
    problem).

    The configuration string, which may hold a password, is passed to the
    plugin and not kept: repr() shows the namespace, the plugin, the shards
    and the state, nothing of the connection string.
    """

    def __init__(self, connect: str, namespace: Optional[str] = None,
                 ttl_ms: Optional[int] = None, plugin: Optional[str] = None,
                 log: Optional[Callable[[int, str], None]] = None,
                 extra: Optional[str] = None,
                 shards: Optional[int] = None) -> None:
        self.plugin_path = find_plugin(plugin)
        self.namespace = namespace
        if log is None:
            log = _plugin.logging_callback(logging.getLogger("odbc_leader"))
        self._plugin = _plugin.Plugin(self.plugin_path)
        # Reentrant: stop() may run in a signal handler (celery beat's
        # SIGTERM) that interrupted this thread inside claim or finish.
        self._lock = threading.RLock()
        self._listeners: List[Listener] = []
        self._shard_listeners: List[ShardListener] = []
        self._offer_listeners: List[OfferListener] = []
        self._changes: List[bool] = []
        self._shard_changes: List[Tuple[int, bool, int]] = []
        self._inst = self._plugin.init(
            _config(connect, namespace, ttl_ms, extra, shards), log=log,
            on_change=self._on_change, on_shard_change=self._on_shard_change)
        self.shards = self._inst.shards()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.last_error: Optional[BaseException] = None

    def __repr__(self) -> str:
        inst = getattr(self, "_inst", None)
        return "<odbc_leader.Leader namespace=%r plugin=%r shards=%d " \
            "leader=%s term=%d>" % (
                getattr(self, "namespace", None),
                getattr(self, "plugin_path", None), getattr(self, "shards", 0),
                inst is not None and inst.is_leader(),
                inst.term() if inst is not None else 0)

    # ---- the ticking thread ----

    def _on_change(self, is_leader: bool, term: int, leader_id: Optional[str]) -> None:
        """The plugin's on_change, called inside tick (lock held): only
        noted here; listeners run after the lock is released."""
        self._changes.append(is_leader)

    def _on_shard_change(self, shard: int, is_leader: bool, term: int) -> None:
        """The plugin's on_shard_change (a group), inside tick: noted,
        as _on_change."""
        self._shard_changes.append((shard, is_leader, term))

    def _run(self) -> None:
        delay_ms = 0
        while not self._stop.wait(delay_ms / 1000.0):
            # never wait for the lock for long: stop() must be able to
            # join this thread while another frame of its caller holds it
            if not self._lock.acquire(timeout=0.05):
                delay_ms = 0
                continue
            offers: List[_plugin.Offer] = []
            try:
                delay_ms = self._inst.tick().next_tick_ms
                if self._offer_listeners:
                    offers = self._offers()
            except _plugin.TickError as e:  # the database failed: go on
                self.last_error = e
                delay_ms = e.next_tick_ms
            finally:
                changes, self._changes = self._changes, []
                shard_changes, self._shard_changes = self._shard_changes, []
                self._lock.release()
            if changes:
                leading, term = self._inst.is_leader(), self._inst.term()
                for fn in list(self._listeners):
                    fn(leading, term)
            for shard, leading, term in shard_changes:
                for sfn in list(self._shard_listeners):
                    sfn(shard, leading, term)
            if offers:
                for ofn in list(self._offer_listeners):
                    ofn(offers)

    def _offers(self) -> List[_plugin.Offer]:
        """The offers the last tick left (no I/O; lock held); [] after
        logging when the plugin refuses to list them."""
        try:
            return self._inst.offers()
        except _plugin.LeaderPluginError as e:
            self.last_error = e
            _log.warning("listing the offered fires failed: %s", e)
            return []

    def start(self) -> "Leader":
        """Starts campaigning (the ticking thread). Returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="odbc-leader", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stops ticking and shuts the instance down: a leader resigns,
        so another candidate takes over at once. Idempotent; may be called
        from a signal handler of the thread that claims."""
        self._stop.set()
        if self._thread is not None and \
                self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            self._inst.shutdown()

    def __enter__(self) -> "Leader":
        return self.start()

    def __exit__(self, *exc_info: object) -> bool:
        self.stop()
        return False

    def add_listener(self, fn: Listener) -> None:
        """fn(is_leader, term) runs in the ticking thread after each change
        of leadership (it may call claim; it must not block for long)."""
        self._listeners.append(fn)

    def add_shard_listener(self, fn: ShardListener) -> None:
        """fn(shard, is_leader, term) runs in the ticking thread after each
        change of a shard's leadership in a group, in order per shard (a
        shard stops here before another member takes it)."""
        self._shard_listeners.append(fn)

    def add_offer_listener(self, fn: OfferListener) -> None:
        """fn(offers) runs in the ticking thread after each tick that left
        fires offered to this leader: run-now requests and interrupted
        fires whose job allows another attempt (odbc_leader.plugin.Offer:
        job, fire_ms, attempt, max_attempts). An offer stays until it is
        claimed, so fn sees it again at the next tick: claim each with
        claim(offer.job, offer.fire_ms, offer.max_attempts), which runs
        it once, and hand the run to another thread (fn must not block).
        A plugin before ABI 1.4 offers nothing."""
        self._offer_listeners.append(fn)

    # ---- state, no I/O ----

    def is_leader(self) -> bool:
        """True while this candidate leads (no I/O; turns false by itself
        when the trust window passes)."""
        return self._inst.is_leader()

    def term(self) -> int:
        """The term led (the fencing token), 0 when not leader (and for a
        group, whose shards have terms of their own: term_of)."""
        return self._inst.term()

    def shard_of(self, job: str) -> int:
        """The shard of job in the group (0 without shards)."""
        return self._inst.shard_of(job) if self.shards else 0

    def leads(self, job: str) -> bool:
        """True while this host may run job: it leads the job's shard (a
        group) or leads (one namespace). No I/O."""
        return self._inst.leads_job(job)

    def term_of(self, job: str) -> int:
        """The term under which this host runs job: its shard's term in a
        group, else term(); 0 when it does not lead it."""
        if self.shards:
            return self._inst.shard_leadership(self.shard_of(job))[0]
        return self._inst.term()

    def fence(self, job: Optional[str] = None,
              namespace: Optional[str] = None,
              paramstyle: str = "qmark") -> "Fence":
        """A Fence (odbc_leader.fencing) for this host's writes, built from
        the plugin's predicate for its own dialect: no odbc-leader command
        needed. namespace: the Leader's by default (give it when the
        connection string or DSN names it); in a group, the shard of job
        (NAMESPACE/shard). Raises ValueError without a namespace (or, in
        a group, without job), LeaderPluginError when the plugin has no
        fence (before ABI 1.5)."""
        ns = namespace if namespace is not None else self.namespace
        if ns is None:
            raise ValueError("fence: give namespace= (the Leader was made "
                             "without one)")
        if self.shards:
            if job is None:
                raise ValueError("fence: a group's fence is its job's "
                                 "shard's: give job=")
            ns = "%s/%d" % (ns, self.shard_of(job))
        with self._lock:  # not beside a tick: a reconnect may reload it
            predicate = self._inst.fence_sql()
        return Fence(predicate, ns, paramstyle)

    # ---- fires ----

    def set_schedule(self, job: str, expr: Optional[str],
                     tz: Optional[str] = None, engine: str = "") -> bool:
        """Says how this host computes job's nominal fire times
        (docs/schedules.md): expr in the scheduler's own terms (None
        forgets it), tz the IANA zone it computes in (None: the host's;
        "": none, for fixed intervals), engine the scheduler and its DST
        rule. The first claim records this identity for job; a claim from
        a host that computes it otherwise (another zone) is refused, logged
        and not run, so "the same" fire never runs twice across zones.
        Returns True, or False for a plugin before ABI 1.6 (which cannot
        check). Raises LeaderPluginError for a bad zone or part."""
        if not self._plugin.has("set_schedule"):
            return False
        with self._lock:
            self._inst.set_schedule(job, expr, tz, engine)
        return True

    def catch_up(self, job: str, times: List[int], policy: str,
                 grace_ms: int, present: bool = False) -> List[int]:
        """Of job's fire times (epoch ms, ascending, as this host's
        scheduler computes them; present: the newest is the fire due now),
        those to claim after an election, an outage or a pause, decided by
        the library's catch-up policy (docs/catch-up.md): no older than
        grace_ms on the database clock, by policy ("skip", "latest" (later
        than the ledger's latest fire of the job), "all" or "all:CAP").
        A job with no fire in the ledger catches up nothing. With a plugin
        before ABI 1.7, those within the grace by this host's clock. Raises
        LeaderPluginError (a bad policy, or the read failed)."""
        if not self._plugin.has("catch_up"):
            floor = time.time() * 1000 - grace_ms
            return [t for t in times if t >= floor]
        with self._lock:
            return self._inst.catch_up(job, policy, grace_ms, times, present)

    def catch_up_times(self, job: str, times: List[datetime],
                       policy: str, grace_ms: int,
                       present: bool = False) -> List[datetime]:
        """catch_up of aware datetimes (ascending; present: the newest is
        the fire due now, claimed under the epoch ms it rounds to): those
        of times the policy names. When the read failed (logged), none,
        or the present one alone, which runs as it would have without a
        catch-up. What each integration's late and elected paths share."""
        ms = [epoch_ms(t) for t in times]
        try:
            keep = set(self.catch_up(job, ms, policy, grace_ms, present))
        except _plugin.LeaderPluginError as e:
            _log.warning("catching up %s: %s", job, e)
            return times[-1:] if present else []
        return [t for t, m in zip(times, ms) if m in keep]

    def valid_catch_up(self, policy: str) -> bool:
        """True when the plugin reads policy as a catch-up policy ("skip",
        "latest", "all" or "all:CAP"; any text before ABI 1.7). No I/O."""
        if not self._plugin.has("catch_up_select"):
            return True
        try:
            self._plugin.catch_up_select(policy, 0, 0, 0, [])
        except _plugin.LeaderPluginError:
            return False
        return True

    def claim(self, job: str, fire_ms: int = 0,
              max_attempts: int = 1) -> Optional[Fire]:
        """Claims fire fire_ms (epoch ms, its nominal time, the same on
        every host) of job for the term led. Returns the Fire to run, as
        the database recorded it (the term it is fenced in, its attempt),
        or None when it is not this host's to run: claimed before (by
        anyone, in any term), its job paused (`odbc-leader jobs pause`;
        the fire is recorded skipped), this host does not lead, or it
        computes the job's fires by another schedule than the one
        recorded (set_schedule; logged as an error).
        max_attempts above 1 opts the fire into recovery: if this host
        dies before finish, the next leader gets it offered (see
        add_offer_listener) once this term can no longer act. Raises
        LeaderPluginError when the claim failed and its outcome is
        unknown (do not run it)."""
        if not self.leads(job):
            return None  # no lock: a follower's tick may be in its wait
        with self._lock:
            try:
                if not self._plugin.has("claim_fire"):  # before ABI 1.4
                    term = self.term_of(job)
                    if not self._inst.claim(job, fire_ms):
                        return None
                    return Fire(job, int(fire_ms), term)
                rc, c = self._inst.claim_fire(job, fire_ms, max_attempts)
            except _plugin.NotLeaderError:
                return None
            except _plugin.ScheduleError as e:
                _log.error("%s at %d not run: %s", job, fire_ms, e.message)
                return None
        if c is None:
            if rc == _plugin.CLAIM_PAUSED:
                _log.info("%s at %d not run: the job is paused", job, fire_ms)
            return None
        return Fire(job, int(fire_ms), c.term, c.attempt, c.recovering,
                    c.triggered)

    def finish(self, fire: Fire, status: int = 0) -> None:
        """Records the outcome of a claimed fire (0 success) for its term:
        a fire taken again by a later term (this host was paused past its
        lease) keeps that term's outcome, and this raises. Raises
        LeaderPluginError when it could not be recorded."""
        with self._lock:
            if not self._plugin.has("finish_fire"):
                self._inst.finish(fire.job, fire.fire_ms, status)
                return
            c = _plugin.Claim(fire.job, fire.fire_ms, fire.attempt, 0,
                              fire.recovering, fire.triggered, fire.term,
                              fire.fire_ms)
            self._inst.finish_fire(c, status)

    @contextmanager
    def claimed(self, job: str, fire_ms: int = 0) -> Iterator[Optional[Fire]]:
        """Claims the fire and yields the Fire, or None when it is not
        this host's to run; records the outcome on the way out (status 1
        when the block raised)."""
        fire = self.claim(job, fire_ms)
        status = 1
        try:
            yield fire
            status = 0
        finally:
            if fire is not None:
                try:
                    self.finish(fire, status)
                except _plugin.LeaderPluginError as e:
                    self.last_error = e
