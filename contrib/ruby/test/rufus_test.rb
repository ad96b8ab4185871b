# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# test/rufus_test.rb: OdbcLeader::Rufus::Scheduler with a real
# Rufus::Scheduler on real plugins: the jobs it refuses, `every` snapped to
# the epoch grid, two schedulers on one SQLite file running each fire once,
# a failed job recorded in the ledger, the fires a paused scheduler skipped,
# and a new leader's catch-up of the fires due while no one led, at their
# nominal times and within the grace only.
require_relative 'test_helper'
require 'odbc_leader/rufus'

class RufusTest < Minitest::Test
  include OlTest

  def setup
    @closing = []
  end

  def teardown
    @closing.reverse_each do |x|
      x.is_a?(OdbcLeader::Leader) ? x.close : x.shutdown(wait: true)
    rescue StandardError
      nil
    end
  end

  # Returns a started Leader on conn, closed after the test.
  # always_leader.so (conn "LeaderMode=always") knows no other key.
  def leader(conn, ns = 'rufus', plugin: ODBC_SO, **opts)
    keys = if plugin == ODBC_SO
             { namespace: ns, extra: 'LeaderRenewInterval=250;LeaderSafetyMargin=150' }
           else
             {}
           end
    l = OdbcLeader::Leader.new(connect: conn, plugin: plugin, log: ->(_l, _m) {}, **keys, **opts)
    @closing << l
    l.start
  end

  # Returns an OdbcLeader::Rufus::Scheduler over l, shut down after the test.
  def scheduler(l, grace_ms: 60_000, **opts)
    s = OdbcLeader::Rufus::Scheduler.new(leader: l, grace_ms: grace_ms, frequency: 0.05, **opts)
    @closing << s
    s
  end

  # Runs a job every second on s, pauses s for pause_s after its first
  # fire, then lets it run for after_s. Returns [the fire times run, when
  # the pause began, when it ended] (ms).
  def paused_runs(s, pause_s, after_s)
    runs = Queue.new
    s.cron('* * * * * * UTC', name: 'p') { runs << OdbcLeader.current_fire.fire_ms }
    Timeout.timeout(5) { runs.pop }
    s.pause
    paused = OlTest.now_ms
    sleep pause_s
    s.resume
    woke = OlTest.now_ms
    sleep after_s
    got = []
    got << runs.pop until runs.empty?
    [got, paused, woke]
  end

  def test_unnamed_interval_in_and_duplicate_jobs_are_refused
    s = scheduler(leader('LeaderMode=always', plugin: ALWAYS_SO))
    assert_match(/name the job/, assert_raises(ArgumentError) { s.cron('* * * * *') {} }.message)
    assert_match(/name the job/, assert_raises(ArgumentError) { s.every('1s') {} }.message)
    e = assert_raises(ArgumentError) { s.interval('1s', name: 'i') {} }
    assert_match(/interval is timed from the end of each run/, e.message)
    assert_match(/`in` is timed/, assert_raises(ArgumentError) { s.in('1s', name: 'n') {} }.message)
    e = assert_raises(ArgumentError) { s.every('1s', name: 'f', first_in: '2s') {} }
    assert_match(/no first time of your own/, e.message)
    s.cron('* * * * *', name: 'c') {}
    assert_match(/already scheduled/, assert_raises(ArgumentError) { s.cron('* * * * *', name: 'c') {} }.message)
    assert s.at(Time.now + 3600, name: 'a') {}
    assert_empty s.jobs.select { |j| j.name.nil? }
  end

  # A cron job's fire times in the host's zone on both sides of a DST change,
  # whatever the date today: one of EDT and EST is not the current offset.
  def test_cron_times_across_a_dst_change_in_the_hosts_zone
    tz = ENV.fetch('TZ', nil)
    ENV['TZ'] = 'America/New_York'
    s = scheduler(leader('LeaderMode=always', plugin: ALWAYS_SO))
    job = s.cron('30 1 * * *', name: 'daily', job: true) {}
    utc = ->(*a) { Time.utc(*a).to_i * 1000 }
    assert_equal utc.call(2025, 7, 1, 5, 30), s.send(:next_fire, job, utc.call(2025, 7, 1))
    assert_equal utc.call(2025, 11, 2, 5, 30), s.send(:next_fire, job, utc.call(2025, 11, 2, 5))
    assert_equal utc.call(2026, 1, 2, 6, 30), s.send(:next_fire, job, utc.call(2026, 1, 1, 12))
    # within the repeated hour (01:10 EST) the second 01:30 is not a fire:
    # a host that ran through ran the first
    assert_equal utc.call(2025, 11, 3, 6, 30), s.send(:next_fire, job, utc.call(2025, 11, 2, 6, 10))
    assert s.send(:second_pass?, job, utc.call(2025, 11, 2, 6, 30))
    refute s.send(:second_pass?, job, utc.call(2025, 11, 2, 5, 30))
    # the rule is the plugin's: a callback's exception is raised after its call
    plugin = OdbcLeader::Plugin.new(ALWAYS_SO)
    assert_raises(RuntimeError) do
      plugin.second_pass?(->(_) { raise 'engine broke' }, ->(_, _) { true }, 7_200_000)
    end
    assert_nil plugin.first_pass_next(->(_) {}, ->(_, _) { false }, 0)
    # a line that fires within the hour anyway keeps its second pass
    often = s.cron('*/20 * * * *', name: 'often', job: true) {}
    assert_equal utc.call(2025, 11, 2, 6), s.send(:next_fire, often, utc.call(2025, 11, 2, 5, 40))
    # the spring gap's 02:30 is skipped
    gap = s.cron('30 2 * * *', name: 'gap', job: true) {}
    assert_equal utc.call(2025, 3, 10, 6, 30), s.send(:next_fire, gap, utc.call(2025, 3, 8, 12))
  ensure
    ENV['TZ'] = tz
  end

  def test_every_is_snapped_to_the_epoch_grid
    s = scheduler(leader('LeaderMode=always', plugin: ALWAYS_SO))
    job = s.every('3s', name: 'three', job: true) {}
    first = OdbcLeader::Runner.ms(job.next_time)
    assert_equal 0, first % 3000, "first fire at #{first}"
    assert_operator first, :>, OlTest.now_ms - 50
    assert_operator first, :<=, OlTest.now_ms + 3000
    assert_equal 0, OdbcLeader::Runner.ms(job.next_times(3).last) % 3000
    assert_equal [first + 3000, first + 6000], s.fire_times(job, first, first + 6000)
    cron = s.cron('*/2 * * * * * UTC', name: 'two', job: true) {}
    assert_equal [first + ((first % 2000).zero? ? 2000 : 1000)], s.fire_times(cron, first, first + 2000)
  end

  def test_two_schedulers_on_one_file_run_each_fire_once
    conn = OlTest.sqlite
    runs = Queue.new
    ls = 2.times.map { leader(conn) }
    ss = ls.map { |l| scheduler(l) }
    ss.each_with_index do |s, i|
      s.cron('* * * * * * UTC', name: 'tick') do
        f = OdbcLeader.current_fire
        runs << [i, f.fire_ms, f.term]
      end
      s.every('1s', name: 'beat') { runs << [i, OdbcLeader.current_fire.fire_ms, :every] }
    end
    sleep 3.5
    ss.each { |s| s.shutdown(wait: true) }
    got = []
    got << runs.pop until runs.empty?
    ticks = got.reject { |r| r[2] == :every }
    beats = got.select { |r| r[2] == :every }
    assert_operator ticks.size, :>=, 3
    assert_operator beats.size, :>=, 3
    [ticks, beats].each do |rs|
      ms = rs.map { |r| r[1] }
      assert_equal ms.uniq.size, ms.size, "a fire ran twice: #{rs.inspect}"
      assert(ms.all? { |m| (m % 1000).zero? }, "unaligned fires: #{ms.inspect}")
    end
    leader_i = ls.index(&:leader?)
    assert(ticks.all? { |r| r[0] == leader_i && r[2] == ls[leader_i].term })
    rows = OlTest.fires(conn, 'rufus')
    assert_equal ticks.map { |r| r[1] }.sort, rows.select { |r| r['job'] == 'tick' }.map { |r| r['fire_ms'] }.sort
    assert(rows.all? { |r| r['status'].zero? })
  end

  def test_a_failed_job_is_recorded_with_status_1
    conn = OlTest.sqlite
    s = scheduler(leader(conn))
    errors = Queue.new
    s.define_singleton_method(:on_error) { |_job, err| errors << err }
    s.cron('* * * * * * UTC', name: 'fails') { raise 'job failed' }
    err = Timeout.timeout(5) { errors.pop }
    assert_equal 'job failed', err.message
    s.shutdown(wait: true)
    rows = OlTest.wait_for(5) do
      r = OlTest.fires(conn, 'rufus')
      r unless r.empty? || r.any? { |x| x['status'].nil? }
    end
    assert(rows.all? { |r| r['status'] == 1 }, rows.inspect)
  end

  # A paused scheduler (as a stopped process) wakes once; the fires it
  # skipped run too, at their nominal times, those within the grace only.
  def test_fires_skipped_in_a_pause_run_within_the_grace
    l = leader('LeaderMode=always', plugin: ALWAYS_SO)
    got, paused, woke = paused_runs(scheduler(l, grace_ms: 3000), 4.6, 1.2)
    late = got.select { |m| m > paused && m < woke - 500 }
    assert_operator late.size, :>=, 2, "skipped fires run late: #{got.inspect}"
    assert(got.all? { |m| (m % 1000).zero? })
    assert_equal got.uniq, got
    assert(late.all? { |m| m >= woke - 3000 - 200 }, "a fire older than the grace ran: #{late.inspect} woke #{woke}")
    assert_equal [], got.select { |m| m > paused && m < woke - 3300 }
  end

  # The same pause with the catch-up policy skip (docs/catch-up.md): the
  # fires it skipped do not run; the scheduler runs on from its wake-up.
  def test_fires_skipped_in_a_pause_follow_the_catch_up_policy
    l = leader(OlTest.sqlite, ttl_ms: 60_000)
    got, paused, woke = paused_runs(scheduler(l, grace_ms: 10_000, catch_up: 'skip'), 3.6, 1.5)
    assert_equal [], got.select { |m| m > paused && m < woke - 1000 }, "skipped fires ran: #{got.inspect} woke #{woke}"
    assert(got.any? { |m| m >= woke - 1000 }, "nothing ran after the pause: #{got.inspect} woke #{woke}")
    assert_equal got.uniq, got
  end

  # A leads without a scheduler and runs one fire of each job, then
  # resigns: B's scheduler, elected, catches up the fires due since (no
  # one ran them), within the grace, at their nominal times (a job with no
  # fire in the ledger would catch up nothing: docs/catch-up.md).
  def test_a_new_leader_catches_up_within_the_grace
    conn = OlTest.sqlite
    a = leader(conn, ttl_ms: 2000)
    b = leader(conn, ttl_ms: 2000)
    refute b.leader?
    t0 = OlTest.now_ms / 1000 * 1000
    %w[c e].each { |j| a.finish(a.claim(j, t0)) }
    elected = Queue.new
    b.on(:elected) { elected << OlTest.now_ms }
    runs = Queue.new
    s = scheduler(b, grace_ms: 2500)
    s.cron('* * * * * * UTC', name: 'c') do
      f = OdbcLeader.current_fire
      runs << [f.fire_ms, OlTest.now_ms, f.term]
    end
    s.every('1s', name: 'e') { runs << [OdbcLeader.current_fire.fire_ms, OlTest.now_ms, :every] }
    sleep 4.2
    assert runs.empty?, 'a follower ran fires'
    a.close
    at = Timeout.timeout(10) { elected.pop }
    sleep 1.5
    s.shutdown(wait: true)
    got = []
    got << runs.pop until runs.empty?
    caught = got.select { |fire_ms, _, _| fire_ms <= at } # due before the election: caught up
    assert_operator caught.count { |r| r[2] != :every }, :>=, 2, "no cron catch-up: #{got.inspect} elected #{at}"
    assert_operator caught.count { |r| r[2] == :every }, :>=, 2, "no every catch-up: #{got.inspect}"
    assert(got.all? { |fire_ms, _, _| (fire_ms % 1000).zero? })
    assert(got.all? { |fire_ms, _, _| fire_ms >= at - 2500 - 300 }, "older than the grace: #{got.inspect} at #{at}")
    rows = OlTest.fires(conn, 'rufus').reject { |r| r['fire_ms'] == t0 }
    assert_equal rows.size, rows.map { |r| [r['job'], r['fire_ms']] }.uniq.size
    # every run is a done row; a fire claimed as shutdown began, its
    # trigger dropped by rufus, stays running (not run, no outcome)
    ran = got.map { |fire_ms, _, kind| [kind == :every ? 'e' : 'c', fire_ms] }.sort
    done = rows.select { |r| r['state'] == 'done' }.map { |r| [r['job'], r['fire_ms']] }.sort
    assert_equal ran, done
    assert_equal [], rows.reject { |r| %w[done running].include?(r['state']) }
    assert_operator rows.size - done.size, :<=, 2, "fires claimed and not run: #{rows.inspect}"
  end

  # A runs one fire of c and resigns; B is elected within its start (no one
  # leads), before its scheduler and job exist, as after a restart of every
  # host: the fires within the grace since still run, once each.
  def test_a_leader_elected_before_its_jobs_exist_catches_them_up
    conn = OlTest.sqlite
    a = leader(conn, ttl_ms: 2000)
    t0 = OlTest.now_ms / 1000 * 1000 - 6000
    a.finish(a.claim('c', t0))
    a.close
    b = leader(conn, ttl_ms: 2000)
    assert b.leader?, 'not elected within start'
    since = OlTest.now_ms
    runs = Queue.new
    s = scheduler(b, grace_ms: 4000)
    s.cron('* * * * * * UTC', name: 'c') { runs << OdbcLeader.current_fire.fire_ms }
    sleep 1.0
    s.shutdown(wait: true)
    got = []
    got << runs.pop until runs.empty?
    caught = got.select { |m| m <= since }
    assert_operator caught.size, :>=, 2, "caught up #{got.inspect} since #{since}"
    assert_equal got.uniq, got
    assert(caught.all? { |m| m > since - 4001 && (m % 1000).zero? }, "outside the grace: #{got.inspect}")
  end
end
