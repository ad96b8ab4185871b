# SPDX-License-Identifier: MIT
"""odbc_leader: leader election on the SQL database you run, from Python.

A ctypes binding of odbc-leader's scheduler plugin (odbc_leader.so, ABI
1.1) and integrations for schedulers that must fire each job on one host:

- Leader: a candidate that campaigns in a thread of its own; is_leader(),
  term() (the fencing token), claim()/claimed() for each fire; with
  shards=N a member of a sharded group, leads(job) and term_of(job).
- odbc_leader.apscheduler: LeaderExecutor for APScheduler 3.
- odbc_leader.celery: LeaderScheduler for celery beat (5.x).
- odbc_leader.fencing: Fence, the fenced write for DB-API cursors.
- odbc_leader.plugin: the plugin ABI itself (Plugin, Instance).

The plugin is found by find_plugin(): an explicit path, else
$ODBC_LEADER_PLUGIN, else the installed pkglibdir.
"""

from .leader import PLUGIN_ENV, Fire, Leader, find_plugin
from .plugin import LeaderPluginError, NotLeaderError, ScheduleError, TickError

__all__ = [
    "Fire",
    "Leader",
    "LeaderPluginError",
    "NotLeaderError",
    "PLUGIN_ENV",
    "ScheduleError",
    "TickError",
    "find_plugin",
]
__version__ = "0.1.0"
