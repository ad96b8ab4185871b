# SPDX-License-Identifier: MIT
"""celery_times.py: the nominal times odbc_leader.celery gives a crontab
entry are in the app's timezone, whatever the zone of the time they start
from (the beat's clock is read in UTC), and follow the DST rule of its
identity across New York's changes of 2025 (docs/schedules.md). Pure:
celery's crontab, no beat.

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

    def times(self, app_tz, since, until, **fields):
        e = entry(app_tz, since, **fields)
        return [t.astimezone(UTC).strftime("%m-%d %H:%M")
                for t in nominal_times(e, since, until)]

    def test_dst_autumn_first_pass_and_wall_time_after(self):
        ny = "America/New_York"  # 2025-11-02: 01:00-01:59 twice
        since = datetime(2025, 10, 31, 12, tzinfo=UTC)
        until = datetime(2025, 11, 4, 12, tzinfo=UTC)
        self.assertEqual(self.times(ny, since, until, minute="30", hour="1"),
                         ["11-01 05:30", "11-02 05:30", "11-03 06:30",
                          "11-04 06:30"])
        self.assertEqual(self.times(ny, since, until, minute="30", hour="2"),
                         ["11-01 06:30", "11-02 07:30", "11-03 07:30",
                          "11-04 07:30"])
        # a beat that starts within the repeated hour (01:10 EST)
        within = datetime(2025, 11, 2, 6, 10, tzinfo=UTC)
        self.assertEqual(self.times(ny, within, until, minute="30", hour="1"),
                         ["11-03 06:30", "11-04 06:30"])
        # every wall time once, at its first pass
        self.assertEqual(
            self.times(ny, datetime(2025, 11, 2, 4, 50, tzinfo=UTC),
                       datetime(2025, 11, 2, 7, 10, tzinfo=UTC),
                       minute="*/20"),
            ["11-02 05:00", "11-02 05:20", "11-02 05:40", "11-02 07:00"])

    def test_dst_spring_gap_an_hour_later(self):
        ny = "America/New_York"  # 2025-03-09: 02:00-02:59 skipped
        since = datetime(2025, 3, 7, 12, tzinfo=UTC)
        until = datetime(2025, 3, 11, 12, tzinfo=UTC)
        self.assertEqual(self.times(ny, since, until, minute="30", hour="1"),
                         ["03-08 06:30", "03-09 06:30", "03-10 05:30",
                          "03-11 05:30"])
        self.assertEqual(self.times(ny, since, until, minute="30", hour="2"),
                         ["03-08 07:30", "03-09 07:30", "03-10 06:30",
                          "03-11 06:30"])

    def test_every_20_minutes_on_another_day(self):
        # remaining_delta asks "now" whether the hour is today's
        self.assertEqual(
            self.times("UTC", datetime(2025, 6, 2, 4, 50, tzinfo=UTC),
                       datetime(2025, 6, 2, 6, 10, tzinfo=UTC),
                       minute="*/20"),
            ["06-02 05:00", "06-02 05:20", "06-02 05:40", "06-02 06:00"])

    def test_utc_app(self):
        e = entry("UTC", self.LAST, minute="0")
        self.assertEqual(nominal_time(e), datetime(2026, 1, 1, 13, 0,
                                                   tzinfo=UTC))


if __name__ == "__main__":
    unittest.main()
