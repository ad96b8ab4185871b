# SPDX-License-Identifier: MIT
"""odbc_leader.plugin: drive a leader_plugin (plugin/leader_plugin.h) from Python.

A ctypes binding to the generic scheduler-plugin ABI, standard library only.
It works with any plugin that implements the ABI, such as odbc_leader.so or
always_leader.so. Most programs use odbc_leader.Leader, which ticks an
instance in a thread of its own; this module is the instance itself:

    from odbc_leader import plugin as leader_plugin

    plugin = leader_plugin.Plugin("/usr/local/lib/odbc-leader/odbc_leader.so")
    with plugin.init("DSN=sched;LeaderNamespace=nightly",
                     on_change=lambda leader, term, leader_id: ...) as inst:
        while running:
            try:
                delay_ms = inst.tick().next_tick_ms
            except leader_plugin.TickError as e:   # the database failed;
                delay_ms = e.next_tick_ms          # keep ticking
            if inst.is_leader():
                run_due_jobs(inst.term())          # the fencing token
            time.sleep(delay_ms / 1000)
    # leaving the with block shuts the instance down: it resigns

Callbacks run in the thread that calls init, tick or shutdown. An
exception raised by a callback is kept and raised again by that call once
the plugin has returned (the plugin itself never sees it). is_leader(),
term() and leadership() do no I/O and may be called from any thread.

ABI 1.1 plugins also claim fires, so that each fire of a job runs at most
once across all hosts (docs/fencing.md):

        try:
            if inst.claim("nightly", fire_ms):  # False: claimed before
                inst.finish("nightly", fire_ms, run_job())
        except leader_plugin.NotLeaderError:
            pass                                # the leader claims it

claim raises NotLeaderError when the instance does not lead (checked by
the plugin where the claim is recorded). Plugin.has("claim") tells whether
a plugin (ABI 1.0 has none) has the member; calling a missing one raises
LeaderPluginError with code EABI.
"""

import ctypes
import logging
import os
import weakref
from collections import namedtuple
from typing import Callable, Optional, Tuple

__all__ = [
    "ABI_MAJOR",
    "ABI_MINOR",
    "EABI",
    "ENOTLEADER",
    "ESCHEDULE",
    "RESIGN_REQUESTED",
    "LeaderPluginError",
    "NotLeaderError",
    "ScheduleError",
    "TickError",
    "Plugin",
    "Instance",
    "TickResult",
    "LastError",
    "Claim",
    "Offer",
    "CLAIM_RUN",
    "CLAIM_PAUSED",
    "CLASS_TRANSIENT",
    "CLASS_CONFIG",
    "CLASS_FATAL",
    "logging_callback",
]

ABI_MAJOR = 1  # LEADER_PLUGIN_ABI_MAJOR
ABI_MINOR = 8  # LEADER_PLUGIN_ABI_MINOR
EABI = -1000  # LEADER_PLUGIN_EABI
ENOTLEADER = -1001  # LEADER_PLUGIN_ENOTLEADER (ABI 1.1): claim, not leader
# LEADER_PLUGIN_ESCHEDULE (ABI 1.6): a claim computed by another schedule
# than the one the job's fires are recorded under (docs/schedules.md)
ESCHEDULE = -1002
RESIGN_REQUESTED = 2  # LEADER_PLUGIN_RESIGN_REQUESTED: tick, when enabled
# ABI 1.2: error classes (LEADER_PLUGIN_CLASS_*): what to do about a code.
CLASS_TRANSIENT = 1  # keep ticking
CLASS_CONFIG = 2  # alert an operator: a setting, schema, grant or password
CLASS_FATAL = 3  # a bug or resource exhaustion
# ABI 1.4: claim_fire's answers besides 0 (claimed before) and the errors.
CLAIM_RUN = 1  # LEADER_PLUGIN_CLAIM_RUN: run it
CLAIM_PAUSED = 2  # LEADER_PLUGIN_CLAIM_PAUSED: its job is paused

_ERRLEN = 1024  # size of the buffer init writes its message into

# The callbacks: log(level, message), on_change(is_leader, term, leader_id),
# on_shard_change(shard, is_leader, term) (ABI 1.3, groups).
LogFn = Callable[[int, str], None]
ChangeFn = Callable[[bool, int, Optional[str]], None]
ShardChangeFn = Callable[[int, bool, int], None]

# ---- the C structures, member for member as in leader_plugin.h ----------

_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)
_ON_CHANGE_FN = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p
)
_ON_SHARD_FN = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_int64
)


class _LeaderHost(ctypes.Structure):
    """struct leader_host: filled by the host, borrowed by the plugin."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ctx", ctypes.c_void_p),
        ("log", _LOG_FN),
        ("on_change", _ON_CHANGE_FN),
        ("on_shard_change", _ON_SHARD_FN),  # ABI 1.3
    ]


_INIT_FN = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.POINTER(_LeaderHost),
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.c_char_p,
    ctypes.c_size_t,
)
_TICK_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)
)
_IS_LEADER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_SHUTDOWN_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_TERM_FN = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
_STRERROR_FN = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)
# ABI 1.1
_CLAIM_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
)
_FINISH_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int
)
_LEADERSHIP_FN = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)
)
# ABI 1.2
_CANDIDATE_ID_FN = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)
_ERROR_CLASS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
_LAST_ERROR_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
    ctypes.c_char_p, ctypes.POINTER(ctypes.c_long), ctypes.c_char_p,
    ctypes.c_size_t
)
# ABI 1.3
_SHARDS_FN = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)
_SHARD_OF_FN = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p,
                                ctypes.c_char_p)
_SHARD_LEADERSHIP_FN = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_void_p, ctypes.c_uint32,
    ctypes.POINTER(ctypes.c_uint32)
)

# ABI 1.4: the fire lifecycle


class _Claim(ctypes.Structure):
    """struct leader_plugin_claim: a claim as the database recorded it."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("attempt", ctypes.c_int32),
        ("max_attempts", ctypes.c_int32),
        ("recovering", ctypes.c_int32),
        ("triggered", ctypes.c_int32),
        ("term", ctypes.c_int64),
        ("nominal_ms", ctypes.c_int64),
    ]


class _Offer(ctypes.Structure):
    """struct leader_plugin_offer: a fire offered to the leader."""

    _fields_ = [
        ("fire_ms", ctypes.c_int64),
        ("attempt", ctypes.c_int32),
        ("max_attempts", ctypes.c_int32),
        ("job", ctypes.c_char * 129),
    ]


_CLAIM_FIRE_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64,
    ctypes.c_int, ctypes.POINTER(_Claim)
)
_FINISH_FIRE_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64,
    ctypes.c_int64, ctypes.c_int
)
_OFFERS_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_Offer), ctypes.c_int
)
_PAUSE_JOB_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
)
_TRIGGER_JOB_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
    ctypes.POINTER(ctypes.c_int64)
)

_FENCE_SQL_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
)
_SET_SCHEDULE_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
    ctypes.c_char_p, ctypes.c_char_p
)
_LOCAL_ZONE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p,
                                  ctypes.c_size_t)
_CATCH_UP_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
    ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
    ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)
)
_CATCH_UP_SELECT_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int,
    ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
    ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)
)

_FIELDS_1_0 = [
    ("struct_size", ctypes.c_uint32),
    ("abi_major", ctypes.c_uint16),
    ("abi_minor", ctypes.c_uint16),
    ("name", ctypes.c_char_p),
    ("version", ctypes.c_char_p),
    ("init", _INIT_FN),
    ("tick", _TICK_FN),
    ("is_leader", _IS_LEADER_FN),
    ("shutdown", _SHUTDOWN_FN),
    ("term", _TERM_FN),
    ("strerror", _STRERROR_FN),
]
_FIELDS_1_1 = [
    ("claim", _CLAIM_FN),
    ("finish", _FINISH_FN),
    ("leadership", _LEADERSHIP_FN),
]
_FIELDS_1_2 = [
    ("candidate_id", _CANDIDATE_ID_FN),
    ("error_class", _ERROR_CLASS_FN),
    ("last_error", _LAST_ERROR_FN),
]
_FIELDS_1_3 = [
    ("shards", _SHARDS_FN),
    ("shard_of", _SHARD_OF_FN),
    ("shard_leadership", _SHARD_LEADERSHIP_FN),
]
_FIELDS_1_4 = [
    ("claim_fire", _CLAIM_FIRE_FN),
    ("finish_fire", _FINISH_FIRE_FN),
    ("offers", _OFFERS_FN),
    ("pause_job", _PAUSE_JOB_FN),
    ("trigger_job", _TRIGGER_JOB_FN),
]
_FIELDS_1_5 = [
    ("fence_sql", _FENCE_SQL_FN),
]
_FIELDS_1_6 = [
    ("set_schedule", _SET_SCHEDULE_FN),
    ("local_zone", _LOCAL_ZONE_FN),
]
_FIELDS_1_7 = [
    ("catch_up", _CATCH_UP_FN),
    ("catch_up_select", _CATCH_UP_SELECT_FN),
]
# ABI 1.8: the first-pass rule, which no Python engine needs (APScheduler
# and Celery beat place a repeated wall time themselves): laid out, not
# wrapped.
_FIELDS_1_8 = [
    ("second_pass", ctypes.c_void_p),
    ("first_pass_next", ctypes.c_void_p),
]


class _LeaderPlugin10(ctypes.Structure):
    """struct leader_plugin as ABI 1.0 had it: the least a plugin has."""

    _fields_ = _FIELDS_1_0


class _LeaderPlugin(ctypes.Structure):
    """struct leader_plugin: the plugin's static function table. Members
    after strerror (ABI 1.1 to 1.8) exist only when struct_size covers
    them: read them only after Plugin.has()."""

    _fields_ = (_FIELDS_1_0 + _FIELDS_1_1 + _FIELDS_1_2 + _FIELDS_1_3
                + _FIELDS_1_4 + _FIELDS_1_5 + _FIELDS_1_6 + _FIELDS_1_7
                + _FIELDS_1_8)


_FIELD_NAMES = frozenset(name for name, _ in _LeaderPlugin._fields_)


_ENTRY_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_uint16, ctypes.POINTER(ctypes.POINTER(_LeaderPlugin))
)



def _times(times):
    """times as a C array of int64 and a size_t for the first index."""
    times = list(times)
    return (ctypes.c_int64 * len(times))(*times), ctypes.c_size_t(0)


# ---- errors -------------------------------------------------------------


class LeaderPluginError(Exception):
    """A negative code from a plugin: code is the number, strerror the
    plugin's text for it, message the most precise text there is (init's
    own message when it wrote one, else strerror). str() is the message."""

    def __init__(self, code, message, strerror=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.strerror = strerror if strerror is not None else message


class NotLeaderError(LeaderPluginError):
    """claim() by an instance that does not lead the current, unexpired
    term (ENOTLEADER): do not run the fire."""


class ScheduleError(LeaderPluginError):
    """A claim computed by another schedule than the one its job's fires
    are recorded under (ESCHEDULE, docs/schedules.md): another time zone,
    expression or engine. Do not run the fire; an operator makes the hosts
    agree, or changes the job's schedule (odbc-leader jobs reschedule).
    The message names both schedules."""


class TickError(LeaderPluginError):
    """tick() failed (the database is unreachable, a statement failed...).
    Not fatal: tick again after next_tick_ms. Leadership, if held, lasts
    until the trust window ends, as is_leader() reports."""

    def __init__(self, code, message, next_tick_ms):
        super().__init__(code, message)
        self.next_tick_ms = next_tick_ms


LastError = namedtuple("LastError",
                       ["code", "error_class", "sqlstate", "native", "message"])
LastError.__doc__ = """An instance's last error (ABI 1.2): code (0 when no
call failed yet), error_class (CLASS_TRANSIENT, CLASS_CONFIG or
CLASS_FATAL, refined by the SQLSTATE), sqlstate ("" when the error did not
come from the driver), the driver's native code and message (never a
password)."""

Claim = namedtuple("Claim", ["job", "fire_ms", "attempt", "max_attempts",
                             "recovering", "triggered", "term",
                             "nominal_ms"])
Claim.__doc__ = """A fire claimed to run (ABI 1.4, claim_fire), as the
database recorded it: job and fire_ms (the key), attempt (1, or n + 1 when
attempt n was interrupted), max_attempts, recovering (an earlier attempt's
term ended without its outcome), triggered (a run-now), term (the fencing
token; finish_fire uses it) and nominal_ms (the fire's nominal time; a
run-now's: when it was asked)."""

Offer = namedtuple("Offer", ["job", "fire_ms", "attempt", "max_attempts"])
Offer.__doc__ = """A fire offered to the leader (ABI 1.4, offers()): a
run-now (fire_ms below 0) or an interrupted attempt its job may run again;
claim it with claim_fire(job, fire_ms, the job's max_attempts)."""

TickResult = namedtuple("TickResult",
                        ["leader", "next_tick_ms", "resign_requested"],
                        defaults=(False,))
TickResult.__doc__ = """What tick() returns: leader (bool: only while
is_leader() is), next_tick_ms, and resign_requested (True when the plugin
was configured to report resign requests, e.g. LeaderResignRequests=report,
and one is pending: stop leader-only work, then shut down to hand over)."""


def _text(raw):
    """A C string from the plugin as str (None stays None)."""
    if raw is None:
        return None
    return raw.decode("utf-8", errors="replace")


# ---- the plugin ---------------------------------------------------------


class Plugin:
    """A loaded plugin .so and its function table.

    Loading calls leader_plugin_entry(abi_major); a plugin of another major
    version refuses with EABI, raised as LeaderPluginError. abi_major is a
    parameter only so that tests can check that refusal. ctypes never
    unloads a library, so neither does this class.
    """

    def __init__(self, path: "os.PathLike[str] | str",
                 abi_major: int = ABI_MAJOR) -> None:
        self.path = os.fspath(path)
        self._dll = ctypes.CDLL(self.path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        entry = _ENTRY_FN(("leader_plugin_entry", self._dll))
        table = ctypes.POINTER(_LeaderPlugin)()
        rc = entry(abi_major, ctypes.byref(table))
        if rc != 0 or not table:
            reason = "unsupported plugin ABI major version"
            msg = "%s: ABI major %d refused (%d)" % (self.path, abi_major, rc)
            raise LeaderPluginError(rc if rc != 0 else EABI, msg, reason)
        self._table = table.contents
        if self._table.struct_size < ctypes.sizeof(_LeaderPlugin10):
            raise LeaderPluginError(
                EABI, "%s: struct leader_plugin too small" % self.path
            )
        self.name = _text(self._table.name)
        self.version = _text(self._table.version)
        self.abi_major = self._table.abi_major
        self.abi_minor = self._table.abi_minor

    def strerror(self, code: int) -> str:
        """The plugin's message for one of its negative codes."""
        return _text(self._table.strerror(code)) or "unknown error"

    def error_class(self, code: int) -> int:
        """CLASS_TRANSIENT, CLASS_CONFIG or CLASS_FATAL for one of the
        plugin's negative codes (0 for a code that is not an error).
        Raises LeaderPluginError (EABI) for a plugin before ABI 1.2."""
        return self._member("error_class")(code)

    def has(self, member: str) -> bool:
        """True when the plugin's table has member (a name of
        struct leader_plugin, e.g. "claim") and it is set: the table's
        struct_size covers it, as LEADER_PLUGIN_HAS checks in C."""
        if member not in _FIELD_NAMES:
            return False
        field = getattr(_LeaderPlugin, member)
        if self._table.struct_size < field.offset + field.size:
            return False
        return bool(getattr(self._table, member))

    def local_zone(self) -> str:
        """ABI 1.6: the IANA name of the host's time zone as the C library
        computes local time (TZ, else /etc/localtime), "UTC" for its
        aliases. Raises LeaderPluginError when it has none."""
        buf = ctypes.create_string_buffer(128)
        rc = self._member("local_zone")(buf, len(buf))
        if rc < 0:
            raise LeaderPluginError(rc, "the host's time zone has no IANA "
                                    "name: set TZ", self.strerror(rc))
        return _text(buf.value)

    def catch_up_select(self, policy: str, grace_ms: int, now_ms: int,
                        last_ms: int, times, present: bool = False) -> list:
        """ABI 1.7: the catch-up policy (docs/catch-up.md) with the
        database clock now_ms and the ledger's latest nominal time last_ms
        given, no I/O: of times (ascending; present: the newest is the
        fire due now), those to claim, oldest first. Raises
        LeaderPluginError for a policy text or times the plugin refuses."""
        arr, first = _times(times)
        rc = self._member("catch_up_select")(
            policy.encode("utf-8"), grace_ms, int(present), now_ms, last_ms,
            arr, len(arr), ctypes.byref(first))
        if rc < 0:
            raise LeaderPluginError(rc, self.strerror(rc))
        return list(arr[first.value:first.value + rc])

    def _member(self, member):
        """The function pointer member of an ABI 1.1 or 1.2 table; raises
        LeaderPluginError (EABI) when the plugin does not have it."""
        if not self.has(member):
            raise LeaderPluginError(
                EABI,
                "%s: plugin %s (ABI %d.%d) has no %s"
                % (self.path, self.name, self.abi_major, self.abi_minor, member),
                "unsupported plugin ABI version",
            )
        return getattr(self._table, member)

    def init(self, config: str, log: Optional[LogFn] = None,
             on_change: Optional[ChangeFn] = None,
             on_shard_change: Optional[ShardChangeFn] = None
             ) -> "Instance":
        """Creates an instance from config (str), an Instance.

        log(level, message) gets the plugin's log lines, level being a
        syslog level (3 error .. 7 debug); on_change(is_leader, term,
        leader_id) each change of leadership, in order (for a follower,
        term and leader_id describe the leader it knows of: 0 and None
        when none); on_shard_change(shard, is_leader, term) each change of
        a shard's leadership in a group (config with LeaderShards), in
        order per shard, a stop before the shard is handed over. Each may
        be None. Raises LeaderPluginError with the plugin's message when
        init fails.
        """
        return Instance(self, config, log, on_change, on_shard_change)


# ---- callbacks ----------------------------------------------------------


class _Callbacks:
    """The Python callables, their C wrappers and the struct leader_host
    that points at them. Kept alive until the plugin's shutdown returns,
    since the plugin borrows the host struct and calls into it. Never
    refers to the Instance, so an Instance can be collected."""

    def __init__(self, log, on_change, on_shard_change=None):
        self.log = log
        self.on_change = on_change
        self.on_shard_change = on_shard_change
        self.error = None  # first exception a callback raised, pending
        self.c_log = _LOG_FN(self._log) if log is not None else _LOG_FN()
        self.c_on_change = (
            _ON_CHANGE_FN(self._on_change) if on_change is not None else _ON_CHANGE_FN()
        )
        self.c_on_shard = (
            _ON_SHARD_FN(self._on_shard) if on_shard_change is not None
            else _ON_SHARD_FN()
        )
        self.host = _LeaderHost(
            ctypes.sizeof(_LeaderHost), None, self.c_log, self.c_on_change,
            self.c_on_shard
        )

    def _keep(self, exc):
        if self.error is None:
            self.error = exc

    def _log(self, _ctx, level, msg):
        try:
            self.log(level, _text(msg) or "")
        except BaseException as exc:  # never unwind through C
            self._keep(exc)

    def _on_change(self, _ctx, is_leader, term, leader_id):
        try:
            self.on_change(bool(is_leader), term, _text(leader_id))
        except BaseException as exc:
            self._keep(exc)

    def _on_shard(self, _ctx, shard, is_leader, term):
        try:
            self.on_shard_change(shard, bool(is_leader), term)
        except BaseException as exc:
            self._keep(exc)

    def reraise(self):
        """Raises the pending callback exception, if any, and clears it."""
        exc, self.error = self.error, None
        if exc is not None:
            raise exc


def _shutdown(shutdown_fn, inst, callbacks):
    """Calls the plugin's shutdown on inst; callbacks stays referenced
    until it has returned. Used as the Instance's finalizer."""
    shutdown_fn(inst)
    del callbacks


class Instance:
    """One plugin instance: a candidate in one election namespace.

    Made by Plugin.init. Use it as a context manager, or call shutdown()
    when done; an instance that is garbage collected, or still alive at
    interpreter exit, is shut down then.
    """

    def __init__(self, plugin, config, log=None, on_change=None,
                 on_shard_change=None):
        self.plugin = plugin
        self._t = plugin._table
        self._cb = _Callbacks(log, on_change, on_shard_change)
        inst = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERRLEN)
        rc = self._t.init(
            config.encode("utf-8"),
            ctypes.byref(self._cb.host),
            ctypes.byref(inst),
            err,
            _ERRLEN,
        )
        if rc < 0 or inst.value is None:
            cause, self._cb.error = self._cb.error, None
            reason = plugin.strerror(rc)
            msg = _text(err.value) or reason
            raise LeaderPluginError(rc, msg, reason) from cause
        self._inst = inst
        self._finalizer = weakref.finalize(
            self, _shutdown, self._t.shutdown, inst, self._cb
        )
        self._cb.reraise()

    def _live(self):
        if not self._finalizer.alive:
            raise ValueError("the instance was shut down")
        return self._inst

    def tick(self) -> "TickResult":
        """One election step. Returns TickResult(leader, next_tick_ms):
        tick again after next_tick_ms at the latest. Raises TickError on a
        plugin error, or what a callback raised."""
        next_ms = ctypes.c_uint32(1000)
        rc = self._t.tick(self._live(), ctypes.byref(next_ms))
        self._cb.reraise()
        if rc < 0:
            raise TickError(rc, self.plugin.strerror(rc), next_ms.value)
        return TickResult(rc >= 1, next_ms.value,
                          rc == RESIGN_REQUESTED)

    def is_leader(self) -> bool:
        """True while this instance leads. No I/O, any thread; False
        after shutdown."""
        if not self._finalizer.alive:
            return False
        return self._t.is_leader(self._inst) != 0

    def term(self) -> int:
        """The term (fencing token) led, 0 when not leader."""
        if not self._finalizer.alive:
            return 0
        return self._t.term(self._inst)

    # ---- ABI 1.1 --------------------------------------------------------

    def leadership(self) -> Tuple[int, int]:
        """(term, valid_for_ms): the term led and how long the trust
        window still runs, read at once, so they cannot disagree; (0, 0)
        when not leader or after shutdown. No I/O, any thread. Raises
        LeaderPluginError (EABI) for a plugin without it (ABI 1.0)."""
        fn = self.plugin._member("leadership")
        if not self._finalizer.alive:
            return (0, 0)
        valid = ctypes.c_uint32(0)
        term = fn(self._inst, ctypes.byref(valid))
        return (term, valid.value if term != 0 else 0)

    def claim(self, job: str, fire_ms: int = 0) -> bool:
        """Claims fire fire_ms (epoch ms, the nominal time as the schedule
        names it; 0 for a one-off key) of job (str) for the term this
        instance leads. True: claimed, run it. False: claimed before, by
        anyone in any term, do not run it. Raises NotLeaderError when this
        instance does not lead, LeaderPluginError for other errors (the
        outcome is then unknown). Same thread as tick."""
        fn = self.plugin._member("claim")
        rc = fn(self._live(), job.encode("utf-8"), int(fire_ms))
        self._raise_claim_error(rc)
        return rc == 1

    def finish(self, job: str, fire_ms: int = 0, status: int = 0) -> None:
        """Records the outcome of a fire this instance claimed: status 0
        for success, else an exit status or -signal. Idempotent. Raises
        LeaderPluginError on failure. Same thread as tick."""
        fn = self.plugin._member("finish")
        rc = fn(self._live(), job.encode("utf-8"), int(fire_ms), int(status))
        if rc < 0:
            raise LeaderPluginError(rc, self.plugin.strerror(rc))

    # ---- ABI 1.2 --------------------------------------------------------

    def candidate_id(self) -> str:
        """This instance's candidate id, as the lease and candidate rows
        and on_change name it. No I/O, any thread."""
        return _text(self.plugin._member("candidate_id")(self._live()))

    def last_error(self) -> "LastError":
        """The instance's last error (LastError); code 0 when no call
        failed yet. No I/O; same thread as tick."""
        fn = self.plugin._member("last_error")
        cls = ctypes.c_int(0)
        state = ctypes.create_string_buffer(6)
        native = ctypes.c_long(0)
        msg = ctypes.create_string_buffer(512)
        code = fn(self._live(), ctypes.byref(cls), state, ctypes.byref(native),
                  msg, len(msg))
        return LastError(code, cls.value, _text(state.value),
                         native.value, _text(msg.value))

    # ---- ABI 1.3: groups -------------------------------------------------

    def shards(self) -> int:
        """The shard count of a group member (LeaderShards), 0 for an
        instance of one namespace or a plugin before ABI 1.3."""
        if not self.plugin.has("shards") or not self._finalizer.alive:
            return 0
        return self._t.shards(self._inst)

    def shard_of(self, key: str) -> int:
        """The shard of key in this instance's group, as the plugin's
        shard_of computes it (FNV-1a 64 of its UTF-8 bytes modulo the shard
        count, docs/abi.md); 0 outside a group."""
        if self.shards() == 0:
            return 0
        return self._t.shard_of(self._live(), key.encode("utf-8"))

    def shard_leadership(self, shard: int) -> Tuple[int, int]:
        """(term, valid_for_ms) of shard as this member leads it; (0, 0)
        when not led. No I/O, any thread."""
        fn = self.plugin._member("shard_leadership")
        if not self._finalizer.alive:
            return (0, 0)
        valid = ctypes.c_uint32(0)
        term = fn(self._inst, int(shard), ctypes.byref(valid))
        return (term, valid.value if term != 0 else 0)

    def leads_job(self, job: str) -> bool:
        """True while this member leads the shard of job (a group), or
        leads at all (one namespace). No I/O, any thread."""
        if self.shards() == 0:
            return self.is_leader()
        return self.shard_leadership(self.shard_of(job))[0] != 0

    # ---- ABI 1.4: the fire lifecycle (docs/lifecycle.md) ----------------

    def claim_fire(self, job: str, fire_ms: int, max_attempts: int = 1
                   ) -> Tuple[int, Optional["Claim"]]:
        """claim() that says what it got: (CLAIM_RUN, Claim) to run it
        (which attempt, whether it recovers one, whether it is a run-now,
        the term to finish it in), (0, None) claimed before, or
        (CLAIM_PAUSED, None). max_attempts > 1 opts the job into
        recovery. Raises NotLeaderError, LeaderPluginError. Same thread
        as tick."""
        fn = self.plugin._member("claim_fire")
        c = _Claim(struct_size=ctypes.sizeof(_Claim))
        rc = fn(self._live(), job.encode("utf-8"), int(fire_ms),
                int(max_attempts), ctypes.byref(c))
        self._raise_claim_error(rc)
        if rc != CLAIM_RUN:
            return (rc, None)
        return (rc, Claim(job, int(fire_ms), c.attempt, c.max_attempts,
                          c.recovering != 0, c.triggered != 0, c.term,
                          c.nominal_ms))

    def finish_fire(self, claim: "Claim", status: int = 0) -> None:
        """Records the outcome of the attempt claim_fire() returned.
        Raises LeaderPluginError (also when a later term took the fire
        again: this attempt's outcome is not kept). Same thread as tick."""
        fn = self.plugin._member("finish_fire")
        rc = fn(self._live(), claim.job.encode("utf-8"), claim.fire_ms,
                claim.term, int(status))
        if rc < 0:
            raise LeaderPluginError(rc, self.plugin.strerror(rc))

    def offers(self) -> "list[Offer]":
        """The fires offered to this leader, as its ticks learned them
        (run-now requests, interrupted fires with attempts left); claim
        each with claim_fire(). No I/O; same thread as tick. [] for a
        plugin before ABI 1.4."""
        if not self.plugin.has("offers") or not self._finalizer.alive:
            return []
        buf = (_Offer * 64)()
        n = self._t.offers(self._inst, buf, 64)
        if n < 0:
            raise LeaderPluginError(n, self.plugin.strerror(n))
        return [Offer(_text(o.job), o.fire_ms, o.attempt, o.max_attempts)
                for o in buf[:min(n, 64)]]

    def pause_job(self, job: str, paused: bool = True) -> None:
        """Pauses (or resumes) job on every host, durably. Raises
        LeaderPluginError."""
        fn = self.plugin._member("pause_job")
        rc = fn(self._live(), job.encode("utf-8"), 1 if paused else 0)
        if rc < 0:
            raise LeaderPluginError(rc, self.plugin.strerror(rc))

    def trigger_job(self, job: str) -> int:
        """Asks the leader to run job once now; returns the run-now's key
        (below 0). Raises LeaderPluginError."""
        fn = self.plugin._member("trigger_job")
        key = ctypes.c_int64(0)
        rc = fn(self._live(), job.encode("utf-8"), ctypes.byref(key))
        if rc < 0:
            raise LeaderPluginError(rc, self.plugin.strerror(rc))
        return key.value

    # ---- ABI 1.5 ----------------------------------------------------------

    def fence_sql(self) -> str:
        """The fence predicate of the instance's dialect (docs/fencing.md):
        the SELECT inside EXISTS ( ... ), "?" for the namespace and then
        the term. No I/O; same thread as tick (Leader.fence takes its
        lock). Raises LeaderPluginError (EABI for a plugin before ABI
        1.5)."""
        fn = self.plugin._member("fence_sql")
        n = fn(self._live(), None, 0)
        if n >= 0:
            buf = ctypes.create_string_buffer(n + 1)
            n = fn(self._live(), buf, n + 1)
        if n < 0:
            raise LeaderPluginError(n, self.plugin.strerror(n))
        return _text(buf.value)

    # ---- ABI 1.6 ----------------------------------------------------------

    def set_schedule(self, job: str, expr: Optional[str],
                     tz: Optional[str] = None, engine: str = "") -> None:
        """Says how this host computes the nominal times of job's fires
        (docs/schedules.md): expr in the engine's own syntax (None forgets
        it), tz the IANA zone it computes in (None: the host's, as
        local_zone() names it; "": none, for intervals), engine its name
        and DST rule. A later claim computed by another schedule than the
        job's recorded one raises ScheduleError. No I/O. Raises
        LeaderPluginError (a bad zone or part, named)."""
        fn = self.plugin._member("set_schedule")

        def enc(v):
            return None if v is None else v.encode("utf-8")

        rc = fn(self._live(), job.encode("utf-8"), enc(expr), enc(tz),
                enc(engine))
        if rc < 0:
            raise LeaderPluginError(rc, self._message(rc),
                                    self.plugin.strerror(rc))

    # ---- ABI 1.7 ----------------------------------------------------------

    def catch_up(self, job: str, policy: str, grace_ms: int, times,
                 present: bool = False) -> list:
        """The catch-up policy (docs/catch-up.md): of job's fire times
        (ascending, as this host's engine computes them; present: the
        newest is the fire due now), those to claim, oldest first, decided
        by the plugin from the ledger's latest fire of the job and the
        database clock. One round trip. Raises LeaderPluginError."""
        arr, first = _times(times)
        rc = self.plugin._member("catch_up")(
            self._live(), job.encode("utf-8"), policy.encode("utf-8"),
            grace_ms, int(present), arr, len(arr), ctypes.byref(first))
        if rc < 0:
            raise LeaderPluginError(rc, self._message(rc),
                                    self.plugin.strerror(rc))
        return list(arr[first.value:first.value + rc])

    def _message(self, rc: int) -> str:
        """The last error's message when the plugin has one, else
        strerror(rc)."""
        if self.plugin.has("last_error"):
            msg = self.last_error().message
            if msg:
                return msg
        return self.plugin.strerror(rc)

    def _raise_claim_error(self, rc: int) -> None:
        """Raises what a claim's negative rc means."""
        if rc == ENOTLEADER:
            raise NotLeaderError(rc, self.plugin.strerror(rc))
        if rc == ESCHEDULE:
            raise ScheduleError(rc, self._message(rc),
                                self.plugin.strerror(rc))
        if rc < 0:
            raise LeaderPluginError(rc, self.plugin.strerror(rc))

    def shutdown(self) -> None:
        """Resigns if leader, leaves the election, frees the instance.
        Calling it again does nothing. Raises what a callback raised."""
        self._finalizer()
        self._cb.reraise()

    @property
    def closed(self) -> bool:
        """True once shut down."""
        return not self._finalizer.alive

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.shutdown()
        return False


# ---- helpers ------------------------------------------------------------

_SYSLOG_TO_LOGGING = {
    0: logging.CRITICAL,
    1: logging.CRITICAL,
    2: logging.CRITICAL,
    3: logging.ERROR,
    4: logging.WARNING,
    5: logging.INFO,
    6: logging.INFO,
    7: logging.DEBUG,
}


def logging_callback(logger: logging.Logger) -> "LogFn":
    """A log callback for Plugin.init that passes the plugin's lines to a
    logging.Logger, mapping syslog levels to logging levels."""

    def log(level, msg):
        logger.log(_SYSLOG_TO_LOGGING.get(level, logging.DEBUG), "%s", msg)

    return log
