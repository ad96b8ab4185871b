# SPDX-License-Identifier: MIT
"""odbc_leader.fencing: fenced writes through a DB-API cursor.

A leader that was paused may write after another host took over. The
fence of docs/fencing.md moves the check into the write: the statement
applies only while the writer's term still holds, by the database clock.
The predicate is the dialect's `fence` statement; it needs the lease
table in the same database as the rows written. A Leader hands it out
from its plugin (ABI 1.5: no odbc-leader command needed):

    fence = leader.fence(paramstyle="format")   # a group: job=...
    n = fence.execute(cur, "UPDATE report SET body = %s WHERE day = %s",
                      (body, day), term=fire.term)
    if n == 0:
        ...   # fenced out (or no row matched): another host leads now

Without a Leader in the process (a worker that gets the term in a
message), Fence.from_command() asks `odbc-leader fence --bare`.
"""

import shutil
import subprocess
from typing import Any, Optional, Sequence

__all__ = ["Fence", "FenceError"]


class FenceError(Exception):
    """The predicate could not be had (odbc-leader missing or failing)."""


# DB-API paramstyles and how each writes a positional placeholder.
_MARKS = {"qmark": "?", "format": "%s", "pyformat": "%s"}


class Fence:
    """The predicate of one namespace's fence.

    predicate is the SELECT that goes inside EXISTS ( ... ), with two `?`
    placeholders: the namespace, then the term (odbc-leader fence --bare).
    paramstyle is the DB-API module's (qmark, format, pyformat or numeric).
    """

    def __init__(self, predicate: str, namespace: str,
                 paramstyle: str = "qmark") -> None:
        if predicate.count("?") != 2:
            raise ValueError("a fence predicate has two ? placeholders "
                             "(namespace, term); got %d" % predicate.count("?"))
        if paramstyle not in _MARKS and paramstyle != "numeric":
            raise ValueError("paramstyle %r: use qmark, format, pyformat or "
                             "numeric (named: bind positionally)" % paramstyle)
        self.predicate = predicate.strip()
        self.namespace = namespace
        self.paramstyle = paramstyle

    @classmethod
    def from_command(cls, dialect: str, namespace: str,
                     paramstyle: str = "qmark",
                     prefix: Optional[str] = None,
                     odbc_leader: str = "odbc-leader") -> "Fence":
        """Asks `odbc-leader fence --bare` for dialect's predicate (sqlite,
        postgresql, mariadb or a dialect file). Raises FenceError with the
        command's message when that fails."""
        exe = shutil.which(odbc_leader) or odbc_leader
        cmd = [exe, "fence", "--bare", "--dialect", dialect]
        if prefix is not None:
            cmd += ["--prefix", prefix]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True,
                                 timeout=30, check=False)
        except OSError as e:
            raise FenceError("cannot run %s: %s" % (exe, e)) from e
        if out.returncode != 0:
            raise FenceError("%s fence failed (exit %d): %s" % (
                exe, out.returncode, out.stderr.strip()))
        return cls(out.stdout, namespace, paramstyle)

    def clause(self, first_param: int = 1) -> str:
        """" AND EXISTS (predicate)" with the placeholders in this
        paramstyle; first_param numbers them for paramstyle numeric."""
        if self.paramstyle == "numeric":
            parts = self.predicate.split("?")
            text = parts[0] + ":%d" % first_param + parts[1] + \
                ":%d" % (first_param + 1) + parts[2]
        else:
            text = self.predicate.replace("?", _MARKS[self.paramstyle])
        return " AND EXISTS (%s)" % text

    def params(self, term: int) -> tuple:
        """The predicate's parameters: (namespace, term)."""
        return (self.namespace, int(term))

    def execute(self, cursor: Any, sql: str, params: Sequence[Any],
                term: int) -> int:
        """Runs sql (an UPDATE or DELETE whose WHERE clause ends the
        statement, or an INSERT ... SELECT ... WHERE) with the fence
        appended and its parameters after params; returns the cursor's
        rowcount: 0 when the term no longer holds (or no row matched)."""
        text = sql.rstrip().rstrip(";") + self.clause(len(params) + 1)
        cursor.execute(text, tuple(params) + self.params(term))
        return cursor.rowcount
