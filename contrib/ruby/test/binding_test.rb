# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# test/binding_test.rb: the ruby-ffi binding and Leader against real
# plugins: versions and missing members, errors with their class and
# SQLSTATE, a tick that waits on a locked SQLite file without holding the
# GVL, callbacks on the ticking thread, election and handover, claims and
# finishes against the ledger, shards and the fence.
require_relative 'test_helper'

class BindingTest < Minitest::Test
  include OlTest

  def test_odbc_leader_table_is_abi_1_3_or_later
    p = OdbcLeader::Plugin.new(ODBC_SO)
    assert_equal 'odbc_leader', p.name
    assert_equal 1, p.abi_major
    assert_operator p.abi_minor, :>=, 3
    %i[claim finish leadership candidate_id last_error shards shard_leadership].each do |m|
      assert p.has?(m), m
    end
    refute p.has?(:no_such_member)
    assert_equal :config, p.error_class(-1)
  end

  def test_another_major_is_refused
    e = assert_raises(OdbcLeader::Error) { OdbcLeader::Plugin.new(ODBC_SO, abi_major: 2) }
    assert_equal OdbcLeader::EABI, e.code
    assert_match(/ABI major 2 refused/, e.message)
  end

  # docs/plugin-discovery-vectors.txt through OdbcLeader.resolve_plugin.
  def test_plugin_discovery_vectors
    file = File.expand_path('../../../docs/plugin-discovery-vectors.txt', __dir__)
    rows = File.readlines(file, chomp: true).reject { |l| l.strip.empty? || l.start_with?('#') }
    assert_operator rows.size, :>=, 15
    none = ->(v) { v == '-' ? nil : v }
    rows.each do |row|
      given, env, pc, files, result = row.split('|').map(&:strip)
      present = files == '-' ? [] : files.split(',')
      asked = false
      call = lambda do
        OdbcLeader.resolve_plugin(none.call(given), none.call(env),
                                  -> { asked = true; none.call(pc) }, present.method(:include?))
      end
      unless result.start_with?('error ')
        assert_equal result, call.call, row
        next
      end
      _, kind, *paths = result.split
      e = assert_raises(ArgumentError, row) { call.call }
      paths.each { |p| assert_includes e.message, p, row }
      assert_equal %w[env none].include?(kind), e.message.include?('$ODBC_LEADER_PLUGIN'), e.message
      assert_equal kind == 'none', asked, row
    end
  end

  def test_missing_file_is_a_clear_error
    gone = File.join(TMP, 'none.so')
    assert_match(/cannot load/, assert_raises(OdbcLeader::Error) { OdbcLeader::Plugin.new(gone) }.message)
    assert_match(/no such file/, assert_raises(ArgumentError) { OdbcLeader.find_plugin(gone) }.message)
    saved = ENV.fetch(OdbcLeader::PLUGIN_ENV, nil)
    begin
      ENV[OdbcLeader::PLUGIN_ENV] = ODBC_SO
      assert_equal ODBC_SO, OdbcLeader.find_plugin
      ENV[OdbcLeader::PLUGIN_ENV] = gone
      assert_match(/from \$ODBC_LEADER_PLUGIN\): no such file/,
                   assert_raises(ArgumentError) { OdbcLeader.find_plugin }.message)
    ensure
      ENV[OdbcLeader::PLUGIN_ENV] = saved
    end
  end

  def test_abi_1_0_plugin_has_no_claim
    so = ENV.fetch('OL_RUBY_ABI10', nil)
    skip 'no OL_RUBY_ABI10' unless so
    p = OdbcLeader::Plugin.new(so)
    assert_equal 0, p.abi_minor
    %i[claim finish leadership candidate_id shards].each { |m| refute p.has?(m), m }
    assert_nil p.error_class(-5)
    inst = p.init('')
    inst.tick
    assert inst.leader?
    assert_equal 7, inst.term
    assert_equal 0, inst.shards
    assert_nil inst.last_error
    e = assert_raises(OdbcLeader::Error) { inst.claim('j', 1000) }
    assert_equal OdbcLeader::EABI, e.code
    assert_match(/ABI 1\.0\) has no claim/, e.message)
    assert_raises(OdbcLeader::Error) { inst.leadership }
    inst.shutdown
    refute inst.leader?
  end

  def test_abi_1_2_plugin_claims_without_groups
    so = ENV.fetch('OL_RUBY_ABI12', nil)
    skip 'no OL_RUBY_ABI12' unless so
    p = OdbcLeader::Plugin.new(so)
    assert_equal 2, p.abi_minor
    assert p.has?(:claim) && p.has?(:last_error)
    refute p.has?(:shards)
    assert_equal :transient, p.error_class(-5)
    leader = OdbcLeader::Leader.new(connect: 'x', plugin: so).start
    assert_equal 0, leader.shards
    assert_equal 'abi12', leader.candidate_id
    assert_equal OdbcLeader::Leadership.new(7, 1000), leader.leadership
    assert_equal OdbcLeader::Fire.new(job: 'j', fire_ms: 5000, term: 7), leader.claim('j', 5000)
    assert_nil leader.claim('j', 5000)
    leader.close
  end

  def test_bad_configuration_is_class_config
    p = OdbcLeader::Plugin.new(ODBC_SO)
    e = assert_raises(OdbcLeader::Error) { p.init("#{OlTest.sqlite};LeaderBogus=1") }
    assert_match(/LeaderBogus/, e.message)
    assert_equal :config, e.error_class
    assert_operator e.code, :<, 0
    e = assert_raises(OdbcLeader::Error) { p.init('Driver=SQLite3;Database=/nonexistent/dir/x.db') }
    assert_match(/cannot connect/, e.message)
    assert_equal :transient, e.error_class
  end

  def test_failed_tick_carries_the_driver_sqlstate
    db = OlTest.db_path
    leader = OdbcLeader::Leader.new(connect: "Driver=SQLite3;Database=#{db}", namespace: 'err',
                                    plugin: ODBC_SO, log: ->(_l, _m) {})
    errors = Queue.new
    leader.on(:tick_error) { |e| errors << e }
    leader.start
    _, err, st = Open3.capture3('python3', '-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); ' \
                                                 'c.execute("DROP TABLE odbc_leader_lease"); c.commit()', db)
    assert st.success?, err
    e = Timeout.timeout(20) { errors.pop }
    leader.close
    assert_kind_of OdbcLeader::Error, e
    assert_equal 5, e.sqlstate.length, "sqlstate #{e.sqlstate.inspect}"
    assert_match(/odbc_leader_lease/, e.message)
    assert_includes %i[config transient fatal], e.error_class
    refute_nil leader.last_error
  end

  # A writer holds the SQLite file's lock: the tick waits in the driver's
  # busy handler with the GVL released, and another Ruby thread runs.
  def test_a_blocking_tick_releases_the_gvl
    db = OlTest.db_path
    inst = OdbcLeader::Plugin.new(ODBC_SO).init("Driver=SQLite3;Database=#{db};" \
                                                'LeaderNamespace=wait;LeaderTTL=60000')
    OlTest.wait_for { inst.tick[:leader] }
    holder = IO.popen(['python3', '-c', 'import sqlite3,sys; ' \
                                        'c=sqlite3.connect(sys.argv[1], isolation_level=None); ' \
                                        'c.execute("BEGIN EXCLUSIVE"); print("locked", flush=True); ' \
                                        'sys.stdin.readline(); c.execute("COMMIT")', db], 'r+')
    assert_equal "locked\n", holder.gets
    settled = false
    beats = 0
    counter = Thread.new do
      until settled
        beats += 1
        holder.puts if beats == 3 # the thread ran while tick waited
        sleep 0.02
      end
    end
    begin
      inst.tick
    rescue OdbcLeader::Error
      nil # busy: the tick may give up; what matters is that it waited
    end
    settled = true
    counter.join
    holder.close
    assert_operator beats, :>=, 3, "the thread ran #{beats} times while tick waited"
    inst.shutdown
  end

  # A thread that takes the instance's lock back to back, as a follower's
  # blocking ticks do, does not starve another caller: the caller gets the
  # lock after the turn under way (two at most: the ticker may queue once
  # between the count read and the caller's ticket), not when the ticker
  # happens to stop. Seen failing with a Mutex: 150-300 turns. A recursive
  # take is refused, as by a Mutex, rather than hanging, and a waiter
  # killed while it waits gives its turn up.
  def test_the_instance_lock_serves_callers_in_order
    lock = OdbcLeader::FairLock.new
    stop = false
    turns = 0
    started = Queue.new
    ticker = Thread.new do
      until stop
        lock.synchronize do
          turns += 1
          started << true if turns == 1
          sleep 0.01 # a tick blocking in C with the GVL released
        end
      end
    end
    started.pop
    giveup = Thread.new { sleep 3; stop = true } # a Mutex would wait this long
    asked = turns
    got = lock.synchronize { turns }
    stop = true
    [ticker, giveup].each { |t| t.kill.join }
    assert_operator got - asked, :<=, 2, "the caller waited #{got - asked} turns of the ticker"
    assert_raises(ThreadError) { lock.synchronize { lock.synchronize { nil } } }
    assert_equal :ok, lock.synchronize { :ok }, 'a refused recursive take leaves the lock usable'
    release = Queue.new
    holder = Thread.new { lock.synchronize { release.pop } }
    Thread.pass until holder.status == 'sleep'
    waiter = Thread.new { lock.synchronize { flunk 'a killed waiter ran' } }
    Thread.pass until waiter.status == 'sleep'
    waiter.kill.join
    release << true
    holder.join
    assert_equal :ok, Timeout.timeout(5) { lock.synchronize { :ok } }, 'a killed waiter gave its turn up'
  end

  def test_callbacks_run_on_the_ticking_thread
    threads = []
    raised = false
    inst = OdbcLeader::Plugin.new(ODBC_SO).init(
      "#{OlTest.sqlite};LeaderNamespace=cb",
      on_change: lambda { |leads, term, id|
        threads << [Thread.current, leads, term, id]
        if leads && !raised
          raised = true
          raise 'from the callback'
        end
      }
    )
    t = Thread.new do
      inst.tick
    rescue RuntimeError => e
      e
    end
    e = t.value
    assert_kind_of RuntimeError, e, 'an exception in a callback is raised by the call'
    assert_equal 'from the callback', e.message
    assert_equal t, threads.first[0]
    assert threads.first[1]
    assert_operator threads.first[2], :>, 0
    assert_equal inst.candidate_id, threads.first[3]
    assert inst.leader?
    inst.shutdown
    assert_equal [Thread.current, false], threads.last[0, 2], 'shutdown resigns on its thread'
    inst.shutdown # idempotent
    assert_raises(OdbcLeader::Error) { inst.tick }
  end

  def test_one_leads_the_other_follows_and_close_hands_over
    conn = "#{OlTest.sqlite};LeaderRenewInterval=200"
    a = OdbcLeader::Leader.new(connect: conn, namespace: 'pair', ttl_ms: 3000, plugin: ODBC_SO)
    events = []
    a.on(:elected) { |t| events << [:elected, t] }
    a.on(:lost) { |t| events << [:lost, t] }
    a.start
    assert a.leader?
    b = OdbcLeader::Leader.new(connect: conn, namespace: 'pair', ttl_ms: 3000, plugin: ODBC_SO)
    changes = []
    elected = Queue.new
    b.on(:change) { |*c| changes << c }
    b.on(:elected) { |t| elected << t }
    b.start
    refute b.leader?
    assert_equal a.candidate_id, changes.last[2]
    term = a.term
    assert_operator term, :>, 0
    assert_equal [[:elected, term]], events
    a.close
    assert_equal [[:elected, term], [:lost, term]], events, 'a resign is a loss of the term led'
    b_term = Timeout.timeout(20) { elected.pop }
    assert_operator b_term, :>, term, 'terms only grow'
    assert b.leader?
    assert_equal b_term, b.leadership.term
    assert_operator b.leadership.valid_for_ms, :>, 0
    b.close
    refute b.leader?
  end

  def test_claims_once_by_the_leader_with_current_fire
    conn = OlTest.sqlite
    a = OdbcLeader::Leader.new(connect: conn, namespace: 'fires', plugin: ODBC_SO).start
    b = OdbcLeader::Leader.new(connect: conn, namespace: 'fires', plugin: ODBC_SO).start
    fire_ms = OlTest.now_ms / 1000 * 1000
    assert_nil b.claim('job', fire_ms), 'a follower claims nothing'
    assert_raises(OdbcLeader::NotLeaderError) { b.instance_variable_get(:@inst).claim('job', fire_ms) }
    seen = nil
    ran = a.run_fire('job', fire_ms) { |f| seen = [f, OdbcLeader.current_fire] }
    assert_equal OdbcLeader::Fire.new(job: 'job', fire_ms: fire_ms, term: a.term), ran
    assert_equal [ran, ran], seen
    assert_nil OdbcLeader.current_fire
    assert_nil a.run_fire('job', fire_ms) { flunk 'ran twice' }
    assert_raises(RuntimeError) { a.run_fire('job', fire_ms + 1000) { raise 'job failed' } }
    a.close
    b.close
    rows = OlTest.fires(conn, 'fires').to_h { |r| [r['fire_ms'], r] }
    assert_equal [fire_ms, fire_ms + 1000], rows.keys.sort
    assert_equal 0, rows[fire_ms]['status']
    assert_equal 1, rows[fire_ms + 1000]['status']
    assert_equal ran.term, rows[fire_ms]['term']
  end

  # docs/catch-up-vectors.txt: the same answers in C and every binding
  def test_catch_up_matches_the_vectors
    path = File.expand_path('../../../docs/catch-up-vectors.txt', __dir__)
    plugin = OdbcLeader::Plugin.new(OlTest::ODBC_SO)
    lines = File.readlines(path).map(&:strip).reject { |l| l.empty? || l.start_with?('#') }
    ints = ->(t) { t == '-' ? [] : t.split(',').map { |x| Integer(x) } }
    lines.each do |line|
      policy, grace, now, last, flags, times, _, want = line.split
      call = lambda {
        plugin.catch_up_select(policy, Integer(grace), Integer(now), Integer(last), ints[times],
                               present: flags == 'present')
      }
      if want == 'EINVAL'
        assert_raises(OdbcLeader::Error, line) { call.call }
      else
        assert_equal ints[want], call.call, line
      end
    end
    assert_operator lines.size, :>=, 30
  end

  # The tests' own shard oracle: FNV-1a 64 of key's UTF-8 bytes modulo
  # shards (docs/abi.md), apart from the plugin the binding asks.
  def fnv1a_shard(key, shards)
    h = key.encode(Encoding::UTF_8).each_byte.reduce(0xcbf29ce484222325) do |acc, b|
      ((acc ^ b) * 0x100000001b3) & 0xffffffffffffffff
    end
    h % shards
  end

  # docs/abi.md's vectors, asked of the plugin through a group of each
  # shard count.
  def test_shard_of_matches_the_abi_vectors
    conn = OlTest.sqlite
    plugin = OdbcLeader::Plugin.new(ODBC_SO)
    { 64 => { 'backup' => 63, 'nightly-report' => 43 },
      1000 => { 'job:42' => 480, '' => 37 },
      16_384 => { 'café' => 3465 } }.each do |shards, keys|
      inst = plugin.init("#{conn};LeaderNamespace=v#{shards};LeaderShards=#{shards}")
      keys.each do |key, want|
        assert_equal want, inst.shard_of(key), "#{key} of #{shards}"
        assert_equal want, fnv1a_shard(key, shards)
      end
    ensure
      inst&.shutdown
    end
    single = plugin.init("#{conn};LeaderNamespace=single")
    assert_equal 0, single.shard_of('backup')
  ensure
    single&.shutdown
  end

  def tick_until_leader(inst)
    OlTest.wait_for { inst.tick[:leader] }
  end

  def test_abi_1_4_recovery_pause_and_run_now
    conn = "#{OlTest.sqlite};LeaderNamespace=life;LeaderTTL=3000"
    p = OdbcLeader::Plugin.new(ODBC_SO)
    assert_operator p.abi_minor, :>=, 4
    a = p.init("#{conn};LeaderId=a")
    b = p.init("#{conn};LeaderId=b")
    tick_until_leader(a)
    fire = OlTest.now_ms / 1000 * 1000
    rc, c1 = a.claim_fire('rec', fire, 2)
    assert_equal OdbcLeader::CLAIM_RUN, rc
    assert_equal [1, 2, false, a.term, fire],
                 [c1.attempt, c1.max_attempts, c1.recovering, c1.term, c1.nominal_ms]
    assert_equal [0, nil], a.claim_fire('rec', fire, 2)
    assert_empty b.offers # b learns offers from now on
    # a stops ticking, as if killed: b takes over and is offered the fire
    tick_until_leader(b)
    assert_equal [['rec', fire, 1]], b.offers.map { |o| [o.job, o.fire_ms, o.attempt] }
    rc, c2 = b.claim_fire('rec', fire, 2)
    assert_equal OdbcLeader::CLAIM_RUN, rc
    assert_equal [2, true, b.term], [c2.attempt, c2.recovering, c2.term]
    assert_raises(OdbcLeader::Error) { a.finish_fire(c1, 0) }
    b.finish_fire(c2, 0)
    b.pause_job('p')
    assert_equal [OdbcLeader::CLAIM_PAUSED, nil], b.claim_fire('p', fire, 1)
    b.pause_job('p', false)
    key = b.trigger_job('p')
    assert_operator key, :<, 0
    OlTest.wait_for do
      b.tick
      b.offers.any? { |o| o.fire_ms == key }
    end
    rc, c3 = b.claim_fire('p', key, 1)
    assert_equal OdbcLeader::CLAIM_RUN, rc
    assert c3.triggered
    b.finish_fire(c3, 0)
  ensure
    a&.shutdown
    b&.shutdown
  end

  def test_a_group_member_claims_in_its_shards
    conn = OlTest.sqlite
    a = OdbcLeader::Leader.new(connect: conn, namespace: 'grp', shards: 4, plugin: ODBC_SO,
                               extra: 'LeaderRenewInterval=250')
    shards = []
    a.on(:shard) { |s, leads, term| shards << [s, leads, term] }
    a.start
    OlTest.wait_for { (0...4).all? { |s| a.leads?("job-#{s}") } }
    assert_equal 4, a.shards
    assert_equal 0, a.term, 'a group member has no single term'
    fire = a.claim('report', OlTest.now_ms / 1000 * 1000)
    assert_equal a.term_of('report'), fire.term
    assert_operator fire.term, :>, 0
    a.close
    refute_empty shards
  end

  def test_leader_fence_without_the_command
    want = OdbcLeader::Fence.from_command('sqlite', namespace: 'x', odbc_leader: ODBC_LEADER).predicate
    path = ENV.fetch('PATH', '')
    ENV['PATH'] = File.join(TMP, 'no-such-dir')
    conn = OlTest.sqlite
    a = OdbcLeader::Leader.new(connect: conn, namespace: 'fence', ttl_ms: 3000, plugin: ODBC_SO).start
    g = OdbcLeader::Leader.new(connect: conn, namespace: 'fenceg', shards: 4, ttl_ms: 3000,
                               plugin: ODBC_SO).start
    f = a.fence(placeholder: '$')
    assert_equal want, f.predicate
    assert_equal 'fence', f.namespace
    assert_equal [1, 'fence', 9], f.statement('DELETE FROM t WHERE id = $1', [1], 9)[1]
    assert_equal "fenceg/#{fnv1a_shard('backup', 4)}", g.fence(job: 'backup').namespace
    assert_raises(ArgumentError) { g.fence }
  ensure
    ENV['PATH'] = path
    a&.close
    g&.close
  end

  def test_fence_from_an_old_plugin
    so = ENV.fetch('OL_RUBY_ABI10', nil)
    skip 'no OL_RUBY_ABI10' unless so
    inst = OdbcLeader::Plugin.new(so).init('')
    e = assert_raises(OdbcLeader::Error) { inst.fence_sql }
    assert_match(/has no fence_sql/, e.message)
    inst.shutdown
  end

  def test_fence_from_the_command
    f = OdbcLeader::Fence.from_command('sqlite', namespace: 'jobs', odbc_leader: ODBC_LEADER)
    assert_equal 2, f.predicate.count('?')
    text, values = f.statement('UPDATE t SET x = ? WHERE id = ?;', [1, 2], 42)
    assert_equal "UPDATE t SET x = ? WHERE id = ? AND EXISTS (#{f.predicate})", text
    assert_equal [1, 2, 'jobs', 42], values
    pg = OdbcLeader::Fence.new('SELECT 1 FROM l WHERE ns = ? AND term = ?', 'jobs', placeholder: '$')
    assert_equal ' AND EXISTS (SELECT 1 FROM l WHERE ns = $3 AND term = $4)', pg.clause(3)
    assert_raises(ArgumentError) { OdbcLeader::Fence.new('SELECT 1', 'x') }
    assert_raises(RuntimeError) do
      OdbcLeader::Fence.from_command('no-such-dialect', namespace: 'x', odbc_leader: ODBC_LEADER)
    end
  end
end
