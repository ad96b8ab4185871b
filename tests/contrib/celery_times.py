# SPDX-License-Identifier: MIT
"""celery_times.py: the nominal times odbc_leader.celery gives a crontab
entry are in the app's timezone, whatever the zone of the time they start
from (the beat's clock is read in UTC). Pure: celery's crontab, no beat.

Usage: celery_times.py PKG   (PKG: contrib/python, the package's parent)
"""

import sys
import unittest
from datetime import datetime, timezone

sys.path.insert(0, sys.argv.pop(1))
from celery import Celery  # noqa: E402
from celery.beat import ScheduleEntry  # noqa: E402
from celery.schedules import crontab  # noqa: E402
from odbc_leader.celery import nominal_time, nominal_times  # noqa: E402

UTC = timezone.utc


def entry(app_tz, last_run_at, **fields):
    """A crontab entry of an app whose timezone is app_tz."""
    app = Celery(set_as_current=False)
    app.conf.timezone = app_tz
    return ScheduleEntry(name="job", schedule=crontab(app=app, **fields),
                         last_run_at=last_run_at, app=app)


class CrontabZoneTest(unittest.TestCase):
    LAST = datetime(2026, 1, 1, 12, 10, tzinfo=UTC)

    def test_hourly_in_kolkata_is_at_half_past_utc(self):
        e = entry("Asia/Kolkata", self.LAST, minute="0")
        self.assertEqual(nominal_time(e), datetime(2026, 1, 1, 12, 30,
                                                   tzinfo=UTC))
        until = datetime(2026, 1, 1, 14, 30, tzinfo=UTC)
        self.assertEqual(nominal_times(e, self.LAST, until),
                         [datetime(2026, 1, 1, h, 30, tzinfo=UTC)
                          for h in (12, 13, 14)])

    def test_daily_in_new_york(self):
        e = entry("America/New_York", self.LAST, minute="30", hour="1")
        self.assertEqual(nominal_time(e), datetime(2026, 1, 2, 6, 30,
                                                   tzinfo=UTC))

    def test_utc_app(self):
        e = entry("UTC", self.LAST, minute="0")
        self.assertEqual(nominal_time(e), datetime(2026, 1, 1, 13, 0,
                                                   tzinfo=UTC))


if __name__ == "__main__":
    unittest.main()
