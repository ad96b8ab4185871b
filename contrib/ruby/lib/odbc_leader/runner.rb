# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/runner.rb: the schedule arithmetic every scheduler
# integration shares: a job's fire times are listed from its schedule (a
# block giving the first fire time strictly after a time), never read from
# the clock, so that every host names a fire by the same nominal time.
module OdbcLeader
  module Runner
    DEFAULT_GRACE_MS = 60_000
    MAX_CATCH_UP = 10_000 # fires per job and catch-up, at most

    # Returns the fire times (epoch ms) of a schedule in (from_ms, to_ms],
    # oldest first, at most max of them. The block gives the first fire time
    # strictly after a time in ms, or nil.
    def self.slots_in(from_ms, to_ms, max = MAX_CATCH_UP)
      out = []
      t = yield(from_ms)
      while t && t > from_ms && t <= to_ms && out.length < max
        out << t
        after = yield(t)
        break if after && after <= t # a schedule that does not move on

        t = after
      end
      out
    end

    # Returns the first multiple of period_ms since the epoch strictly after
    # ms: the grid an `every` job is snapped to.
    def self.next_on_grid(ms, period_ms)
      ((ms.div(period_ms)) + 1) * period_ms
    end

    # Returns t (a Time, EtOrbi::EoTime or Numeric seconds) in epoch ms.
    def self.ms(t)
      (t.to_f * 1000).round
    end
  end
end
