# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# test/printable_test.rb: no password in any printable form of the gem's
# objects. Every object that holds or reaches the connection string (Leader
# before, during and after its run, its Instance, the rufus scheduler, the
# errors of a refused start) is printed the ways a Ruby program prints
# things: inspect (p), to_s (puts, interpolation), pp, format's %s and %p,
# to_json, to_yaml (Rails' debug), a Logger; and every instance variable reachable from it is
# searched. None may hold the password; a Leader shows what names it
# (namespace, plugin, shards, state), nothing of its connection string.
require_relative 'test_helper'
require 'json'
require 'logger'
require 'pp'
require 'stringio'
require 'yaml'
require 'odbc_leader/rufus'

class PrintableTest < Minitest::Test
  include OlTest

  # Two passwords: a braced one with a ';' in it (a form that shows a piece
  # of the connection string cut at ';' would show its second half) and one
  # under a lower-case key.
  SECRETS = %w[Sup3r S3cr3t An0therPw].freeze

  # Returns a connection string with both passwords on SQLite file db
  # (a new one by default).
  def connect(db = OlTest.db_path)
    "Driver=SQLite3;Database=#{db};UID=ol;PWD={Sup3r;S3cr3t};password = An0therPw"
  end

  # Fails when shown (a Leader's printed form) holds a piece of the
  # connection string on db or the Leader* keys made from it.
  def assert_nothing_of_connect(shown, db)
    ['Driver', 'SQLite3', db, 'UID', 'PWD', 'Pwd', 'password', 'LeaderNamespace', 'LeaderTTL'].each do |part|
      refute_includes shown, part, "the connection string is shown (#{part})"
    end
  end

  # Returns every String reachable from obj through instance variables,
  # Arrays, Hashes, Structs and exception causes.
  def reachable_strings(obj, bound = 100_000)
    seen = {}.compare_by_identity
    out = []
    todo = [obj]
    until todo.empty? || seen.size > bound
      v = todo.pop
      next out << v if v.is_a?(String)
      next if [NilClass, TrueClass, FalseClass, Numeric, Symbol].any? { |c| v.is_a?(c) } || seen[v]

      seen[v] = true
      case v
      when Hash then v.each { |k, x| todo.push(k, x) }
      when Array, Struct then todo.concat(v.to_a)
      end
      if v.is_a?(Exception)
        todo << v.message
        todo << v.cause
      end
      v.instance_variables.each { |iv| todo << v.instance_variable_get(iv) }
    end
    out
  end

  # Returns every printable form of obj, { how => text }.
  def forms(obj)
    pp_out = +''
    PP.pp(obj, pp_out)
    log_out = StringIO.new
    logger = Logger.new(log_out)
    logger.info(obj)
    logger.info("leader: #{obj}")
    logger.error(obj) if obj.is_a?(Exception)
    {
      'inspect' => obj.inspect, 'to_s' => obj.to_s, 'interpolation' => "#{obj}",
      'pp' => pp_out, 'format' => format('%s %p', obj, obj), 'to_json' => obj.to_json,
      'to_yaml' => begin
        obj.to_yaml
      rescue StandardError => e
        "to_yaml raised #{e.class}"
      end,
      'full_message' => obj.is_a?(Exception) ? obj.full_message : '',
      'Logger' => log_out.string, 'reachable' => reachable_strings(obj).join("\n")
    }
  end

  # Fails when a printable form of obj (named what) holds a password.
  def assert_no_password(what, obj)
    leaks = forms(obj).filter_map do |how, text|
      s = SECRETS.find { |x| text.include?(x) }
      next unless s

      at = text.index(s)
      "  #{how} shows #{s}: ...#{text[[at - 30, 0].max, 50]}..."
    end
    flunk("#{what}: the password is printed\n#{leaks.join("\n")}") unless leaks.empty?
  end

  def test_leader_and_what_holds_it_print_no_password
    logged = []
    db = OlTest.db_path
    leader = OdbcLeader::Leader.new(connect: connect(db), namespace: 'pw', ttl_ms: 3000, plugin: ODBC_SO,
                                    extra: 'Pwd=An0therPw', log: ->(_l, m) { logged << m })
    assert_no_password('Leader (not started)', leader)
    [leader.inspect, leader.to_yaml].each { |shown| assert_nothing_of_connect(shown, db) }
    leader.start
    sched = OdbcLeader::Rufus::Scheduler.new(leader: leader)
    begin
      OlTest.wait_for { leader.leader? }
      assert_no_password('Leader (leading)', leader)
      shown = leader.inspect
      assert_nothing_of_connect(shown, db)
      ['namespace="pw"', "plugin=#{ODBC_SO.inspect}", 'leader=true'].each do |want|
        assert_includes shown, want
      end
      assert_no_password('Instance', leader.instance_variable_get(:@inst))
      assert_no_password('Rufus::Scheduler', sched)
      assert_no_password('an Array of leaders', [leader, { leader: leader }])
    ensure
      sched.shutdown(wait: true)
      leader.close
    end
    assert_no_password('Leader (closed)', leader)
    assert_no_password('its log lines', logged)
  end

  def test_refused_start_prints_no_password
    cases = {
      'a bad key' => "#{connect};LeaderBogus=1",
      'no database' => 'Driver=SQLite3;Database=/nonexistent/dir/x.db;PWD={Sup3r;S3cr3t};Password=An0therPw'
    }
    cases.each do |what, conn|
      leader = OdbcLeader::Leader.new(connect: conn, namespace: 'pw', plugin: ODBC_SO, log: ->(_l, _m) {})
      e = assert_raises(OdbcLeader::Error) { leader.start }
      assert_no_password("#{what}: the error", e)
      assert_no_password("#{what}: the Leader", leader)
      leader.close
    end
  end
end
