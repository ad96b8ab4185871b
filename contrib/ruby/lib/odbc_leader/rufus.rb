# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/rufus.rb: rufus-scheduler on odbc-leader.
# OdbcLeader::Rufus::Scheduler is a Rufus::Scheduler whose every fire runs on
# one host: confirm_lock (on the scheduler thread, when a job is due) claims
# the fire (job name, nominal time) in the fire ledger and skips it when the
# claim fails; around_trigger (on the work thread) runs the claimed fires
# with OdbcLeader.current_fire set and records each outcome with finish.
#
# The nominal time is the time the job's schedule names, the same on every
# host: rufus sets job.previous_time to the next_time it was due at before
# it calls confirm_lock(job, now). Fire times are computed from the job's
# schedule (fugit's cron, the epoch grid of an `every`), never from the
# clock. So:
# - jobs must be named (the ledger's key);
# - `every` jobs are snapped to an epoch grid (the first fire is at the next
#   multiple of the period since the epoch; no first_at of your own), since
#   rufus times them from each process's start otherwise;
# - `interval` and `in` jobs are refused: they are timed from each
#   process's own start or last run, so no two hosts name a fire alike;
# - cron and `at` jobs are fine.
# On each fire it also claims the fires of the job this process skipped
# since its last one (a pause, a late scheduler thread: rufus runs a late
# job once), within the grace; and when this host is elected (or gains a
# shard) it claims and runs every job's fires that fell due while no one
# led, within the grace.
require 'set'
require 'rufus-scheduler'
require_relative 'leader'
require_relative 'runner'

module OdbcLeader
  module Rufus
    # A Rufus::Scheduler over leader (a started OdbcLeader::Leader).
    # grace_ms: how old a fire may be and still be caught up (default 60 s;
    # make it exceed the takeover time: the TTL plus a period, more in a
    # group); max_attempts: how many times a fire may run when its host
    # dies before it ends (1, the default: at most once; an Integer for
    # every job or a Hash of job name to Integer, other jobs 1); the other
    # options are rufus-scheduler's; catch_up: the catch-up policy of a
    # new leader (docs/catch-up.md: 'all', the default, 'all:CAP',
    # 'latest' or 'skip'). Fires offered to the leader
    # (recoveries, run-now requests of `odbc-leader jobs trigger`) run as
    # triggers of their job off its schedule; a paused job's fires do not
    # run.
    class Scheduler < ::Rufus::Scheduler
      attr_reader :leader, :grace_ms, :max_attempts, :catch_up_policy

      def initialize(leader:, grace_ms: Runner::DEFAULT_GRACE_MS, max_attempts: 1,
                     catch_up: 'all', **opts)
        @leader = leader
        @grace_ms = Integer(grace_ms)
        @catch_up_policy = catch_up.to_s
        @max_attempts = max_attempts
        @ol_offers = [] # the offers of the last tick that had some
        @ol_attempts = nil # the attempts of the offered fire being triggered
        @ol_lock = Mutex.new
        @ol_last = {}.compare_by_identity # job -> the latest fire time it saw
        @ol_claimed = {}.compare_by_identity # job -> Fires claimed, to run
        @ol_every = {}.compare_by_identity # every job -> [anchor_ms, period_ms]
        @ol_at = {}.compare_by_identity # at job -> its time (ms)
        @ol_catch_up = [] # :all, a shard number or a job per request
        @ol_prepared = nil # [job, fire times] of the catch-up under way
        @ol_closed = false
        @ol_on_elected = leader.on(:elected) { |_term| request_catch_up(:all) }
        @ol_on_shard = leader.on(:shard) { |shard, leads, _term| request_catch_up(shard) if leads }
        @ol_on_offers = leader.on(:offers) { |offers| @ol_lock.synchronize { @ol_offers = offers } }
        super(**opts)
      end

      # Shuts rufus down (see Rufus::Scheduler#shutdown; wait: true waits
      # for the fires under way) and stops catching up. The Leader stays up:
      # close it after. Rufus drops the triggers still queued for a work
      # thread: their fires, claimed already, did not run; they stay
      # without an outcome, and the next term records them interrupted
      # (offered again when their job allows another attempt). Logged.
      def shutdown(opt = nil)
        @ol_closed = true
        @leader.off(:elected, @ol_on_elected)
        @leader.off(:shard, @ol_on_shard)
        @leader.off(:offers, @ol_on_offers)
        super
        dropped = @ol_lock.synchronize { @ol_claimed.values.flatten.tap { @ol_claimed.clear } }
        dropped.each do |f|
          @leader.log(4, "rufus job #{f.job}: the fire at #{f.fire_ms} was claimed but not " \
                         'run when the scheduler shut down; the next term records it interrupted')
        end
      end
      alias stop shutdown

      # Claims the fires of job due at time (rufus calls it on the
      # scheduler thread): the job's nominal time and those it skipped
      # since its last fire, within the grace; during a catch-up, the fire
      # times it prepared. Returns true when this host claimed at least one
      # (around_trigger runs them), false to skip the trigger.
      def confirm_lock(job = nil, time = nil)
        return false unless super()
        return true if job.nil? # not a job's trigger: nothing to claim

        prepared = @ol_prepared
        slots = if prepared && prepared[0].equal?(job)
                  @ol_prepared = nil
                  prepared[1]
                else
                  due_slots(job, time)
                end
        fires = slots.filter_map { |t| claim(job, t) }
        return false if fires.empty?

        @ol_lock.synchronize { (@ol_claimed[job] ||= []).concat(fires) }
        true
      end

      # Runs the fires confirm_lock claimed for job, oldest first, each with
      # OdbcLeader.current_fire set, and records each outcome (status 1 when
      # the job raised). Raises the first exception again once all ran, so
      # rufus's on_error reports it. Returns nil.
      def around_trigger(job)
        fires = @ol_lock.synchronize { @ol_claimed.delete(job) } || []
        error = nil
        fires.sort_by(&:fire_ms).each do |fire|
          @leader.track { @leader.run_claimed(fire) { yield } }
        rescue ::Rufus::Scheduler::Job::KillSignal
          raise
        rescue StandardError => e
          error ||= e
        end
        raise error if error

        nil
      end

      # Returns the fire times (epoch ms) of job's schedule in (from_ms,
      # to_ms], oldest first.
      def fire_times(job, from_ms, to_ms)
        Runner.slots_in(from_ms, to_ms) { |t| next_fire(job, t) }
      end

      # Returns the first fire time (epoch ms) of job's schedule strictly
      # after ms, or nil.
      def next_fire(job, ms)
        if (grid = @ol_every[job])
          anchor, period = grid
          anchor + (((ms - anchor).div(period)) + 1) * period
        elsif job.is_a?(::Rufus::Scheduler::CronJob)
          first_pass(job) { |p, nf, sw| p ? p.first_pass_next(nf, sw, ms) : nf.call(ms) }
        elsif (at = @ol_at[job])
          at > ms ? at : nil
        end
      end

      # fugit's next time (epoch ms) of job's cron line strictly after ms.
      # EoTime.new with no zone takes the host's zone by name; EoTime.make
      # of a Time goes by its abbreviation and raises "Cannot determine
      # timezone from EDT" for a time whose offset is not the current one.
      def cron_next(job, ms)
        Runner.ms(job.cron_line.next_time(::EtOrbi::EoTime.new(Rational(ms, 1000), nil)))
      end

      # True when t (epoch ms) is the second pass of a wall time the autumn
      # change repeats in the cron line's zone (the host's without one) that
      # is not to be run: fugit computes a daily 01:30's second 01:30 when
      # asked from within the repeated hour (a host that took over there),
      # while a host that ran through ran the first. The rule is the
      # plugin's (ABI 1.8, docs/schedules.md); a plugin before it keeps
      # fugit's times as they are.
      def second_pass?(job, t)
        job.is_a?(::Rufus::Scheduler::CronJob) &&
          first_pass(job) { |p, nf, sw| p ? p.second_pass?(nf, sw, t) : false }
      end

      # Yields the plugin (nil when it has no first-pass rule), fugit's next
      # time of job's cron line and the wall-time comparison in its zone.
      def first_pass(job)
        zone = job.cron_line.timezone
        wall = ->(ms) { ::EtOrbi::EoTime.new(Rational(ms, 1000), zone).strftime('%F %T') }
        plugin = @leader.plugin
        yield((plugin if plugin&.has?(:second_pass)), ->(ms) { cron_next(job, ms) },
              ->(a, b) { wall.call(a) == wall.call(b) })
      end
      private :cron_next, :second_pass?, :first_pass

      protected

      # Refuses unnamed jobs, a second job of a name, `interval` and `in`
      # jobs, and an `every` with a first time of its own; snaps `every` to
      # the epoch grid. Returns what Rufus::Scheduler#do_schedule returns.
      def do_schedule(job_type, t, callable, opts, return_job_instance, block)
        callable, opts = nil, callable if callable.is_a?(Hash)
        opts = opts.dup
        name = (opts[:name] || opts[:n]).to_s
        if name.empty?
          raise ArgumentError, 'odbc-leader: name the job (name: "report"): ' \
                               'its fires are claimed in the fire ledger under its name'
        end
        if jobs.any? { |j| j.name.to_s == name }
          raise ArgumentError, "odbc-leader: a job named #{name} is already scheduled"
        end

        every = nil
        case job_type
        when :interval
          raise ArgumentError, "odbc-leader: interval job #{name}: an interval is timed " \
                               "from the end of each run in each process, so hosts do not agree on " \
                               "its fire times; use every (snapped to the epoch) or cron"
        when :once
          opts[:_t] ||= ::Rufus::Scheduler.parse(t, opts)
          if opts[:_t].is_a?(Numeric)
            raise ArgumentError, "odbc-leader: in job #{name}: `in` is timed from each " \
                                 'process\'s start; use at with an absolute time, or cron'
          end
        when :every
          every = every_grid(name, t, opts)
        end
        job = super(job_type, t, callable, opts, true, block)
        @ol_every[job] = every if every
        @ol_at[job] = Runner.ms(job.next_time) if job.is_a?(::Rufus::Scheduler::AtJob)
        declare_schedule(job)
        # added while this host leads it (elected within Leader#start, before
        # the job existed): its election's catch-up did not see it
        request_catch_up(job) if @leader.leads?(job.name.to_s)
        return_job_instance || opts[:job] ? job : job.job_id
      end

      # Runs the catch-ups asked for and the offered fires, then rufus's
      # triggers (scheduler thread).
      def trigger_jobs
        catch_up unless @ol_catch_up.empty?
        run_offers
        super
      end

      # The attempts a fire of the job named name may take (max_attempts).
      def attempts_of(name)
        m = @max_attempts
        Integer(m.is_a?(Hash) ? m.fetch(name, m.fetch(name.to_sym, 1)) : m)
      end

      # Returns [anchor_ms, period_ms] of an every job of period t and sets
      # opts[:first_at] to its first fire time: the next multiple of the
      # period since the epoch. Refuses a first time of the caller's.
      def every_grid(name, t, opts)
        if %i[first first_at first_in first_time].any? { |k| opts.key?(k) }
          raise ArgumentError, "odbc-leader: every job #{name}: no first time of your own; " \
                               'every is snapped to multiples of its period since the epoch'
        end
        period = (::Rufus::Scheduler.parse_in(t) * 1000).round
        raise ArgumentError, "odbc-leader: every job #{name}: period #{t.inspect} is not positive" unless period.positive?

        first = Runner.next_on_grid(Runner.ms(Time.now), period)
        opts[:first_at] = Time.at(Rational(first, 1000))
        [first, period]
      end

      # The engine part of a job's schedule identity (docs/schedules.md):
      # rufus-scheduler and fugit, with the DST rule of this integration
      # (fugit skips a time the spring change skips; second_pass? keeps a
      # repeated time to its first pass).
      def engine
        "rufus-scheduler #{::Rufus::Scheduler::VERSION} with fugit #{::Fugit::VERSION} " \
          '(DST gap: skipped; overlap: the first)'
      end

      # Says job's schedule identity to the leader: a cron line in its zone
      # (fugit's, or the host's), an every job's epoch grid or an at job's
      # time with no zone. A host computing the job's fires otherwise has
      # its claims refused. Raises ArgumentError for a zone without an IANA
      # name.
      def declare_schedule(job)
        expr, tz =
          if (grid = @ol_every[job])
            ["every #{grid[1]} ms from the epoch", '']
          elsif job.is_a?(::Rufus::Scheduler::CronJob)
            ["cron #{job.cron_line.original}", job.cron_line.timezone&.name]
          elsif (at = @ol_at[job])
            ["at #{at}", '']
          end
        @leader.set_schedule(job.name.to_s, expr, tz, engine) if expr
      rescue Error => e
        raise ArgumentError, "odbc-leader: job #{job.name}: its schedule: #{e.message}"
      end

      private

      # Returns the fire times of job to claim at a trigger at time: its
      # nominal time (job.previous_time) and, as the catch-up policy says
      # (docs/catch-up.md), the fires skipped since the last one this process
      # saw, those within the grace, oldest first.
      def due_slots(job, time)
        now = Runner.ms(time || ::EtOrbi::EoTime.now)
        nominal = job.previous_time ? Runner.ms(job.previous_time) : now
        floor = now - @grace_ms
        last = @ol_last[job]
        from = [last || (nominal - 1), floor - 1].max
        slots = fire_times(job, from, [now, nominal].max)
        if (last.nil? || nominal > last) && !slots.include?(nominal) && !second_pass?(job, nominal)
          slots << nominal
        end
        slots = slots.select { |t| t >= floor }.sort
        if nominal < floor
          @leader.log(4, "rufus job #{job.name}: fire at #{nominal} woke later than " \
                         "the grace (#{@grace_ms} ms), skipped")
        end
        seen = [last, nominal, *slots].compact.max
        @ol_last[job] = seen
        # the skipped ones as the policy says; a follower's claims answer nil
        return slots unless slots.size > 1 && @leader.leads?(job.name.to_s)

        policy_slots(job, slots, present: true)
      end

      # Returns the Fire of job at t when this host claimed it, else nil (not
      # its to run, or the claim failed: logged).
      def claim(job, t)
        return nil if @ol_closed

        attempts = @ol_attempts || attempts_of(job.name)
        @leader.claim(job.name, t, attempts)
      rescue Error => e
        @leader.log(3, "rufus job #{job.name}: claiming the fire at #{t} failed: #{e.message}")
        nil
      end

      # Triggers, off its schedule, the job of each offered fire (its claim
      # runs it at most once: an offer seen again at a later tick while its
      # run is under way is claimed before, and skipped).
      def run_offers
        offers = @ol_lock.synchronize { @ol_offers.tap { @ol_offers = [] } }
        offers.each do |offer|
          job = jobs.find { |j| j.name == offer.job }
          next if job.nil?

          @ol_prepared = [job, [offer.fire_ms]]
          @ol_attempts = [offer.max_attempts, attempts_of(job.name)].max
          begin
            job.trigger_off_schedule(::EtOrbi::EoTime.now)
          ensure
            @ol_attempts = nil
          end
          @ol_prepared = nil
        end
      rescue StandardError => e
        @leader.log(3, "rufus offered fires failed: #{e.class}: #{e.message}")
      end

      # Of job's fire times (present: the last is the fire due now), those
      # the catch-up policy names; when the read failed (logged), none, or
      # the present one alone.
      def policy_slots(job, slots, present: false)
        return slots if slots.empty?

        @leader.catch_up(job.name.to_s, slots, @catch_up_policy, @grace_ms, present: present)
      rescue Error => e
        @leader.log(4, "rufus job #{job.name}: catching up: #{e.message}")
        present ? [slots.last] : []
      end

      # Asks the scheduler thread to catch up (:all, or a shard's jobs).
      # Called on the ticking thread: no I/O here.
      def request_catch_up(what)
        @ol_lock.synchronize { @ol_catch_up << what } unless @ol_closed
      end

      # Claims and runs, oldest first, the fires within the grace that the
      # library's catch-up policy names (docs/catch-up.md), of the jobs (of the shards or jobs asked
      # for) this host leads: each job's fires are one trigger of it (off its schedule).
      def catch_up
        asked = @ol_lock.synchronize { @ol_catch_up.slice!(0..) }
        all = asked.include?(:all)
        shards = asked.to_set
        now = Runner.ms(::EtOrbi::EoTime.now)
        due = jobs.filter_map do |job|
          next unless @ol_every.key?(job) || job.is_a?(::Rufus::Scheduler::CronJob)
          next unless all || shards.include?(job) || shards.include?(@leader.shard_of(job.name))
          next unless @leader.leads?(job.name)

          slots = policy_slots(job, fire_times(job, now - @grace_ms - 1, now))
          [slots.first, job, slots] unless slots.empty?
        end
        due.sort_by(&:first).each do |_first, job, slots|
          @ol_last[job] = [@ol_last[job], slots.last].compact.max
          @ol_prepared = [job, slots]
          job.trigger_off_schedule(::EtOrbi::EoTime.now)
          next if @ol_prepared.nil?

          # Not triggered (overlap: false and a run under way): its next
          # trigger claims them as skipped fires.
          @ol_prepared = nil
          @ol_last[job] = slots.first - 1
        end
      rescue StandardError => e
        @leader.log(3, "rufus catch-up failed: #{e.class}: #{e.message}")
      end
    end
  end
end
