# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# test/test_helper.rb: what the minitest suites share. OL_RUBY_PLUGINS is
# the directory of the built odbc_leader.so and always_leader.so,
# OL_RUBY_ABI10 and OL_RUBY_ABI12 plugins of ABI 1.0 and 1.2
# (tests/contrib/abi10_plugin.c), OL_RUBY_ODBC_LEADER the odbc-leader
# command, OL_RUBY_TMP a scratch directory; every test runs on SQLite files
# of its own. tests/contrib/ruby.test sets them all.
#
# A test that runs longer than OL_RUBY_TEST_LIMIT seconds (default 120;
# the slowest needs about 10) hangs: the watchdog below prints every
# thread's backtrace and ends the process with status 3, so the suite
# fails with the place it hung instead of stalling. SIGUSR1 prints the
# same backtraces (build-aux/test-watchdog sends it to a hung test).
$LOAD_PATH.unshift(File.expand_path('../lib', __dir__))
require 'minitest/autorun'
require 'json'
require 'open3'
require 'timeout'
require 'tmpdir'
require 'odbc_leader'

module OlTest
  BUILD = File.expand_path('../../../_build/default', __dir__)
  PLUGINS = ENV.fetch('OL_RUBY_PLUGINS', File.join(BUILD, 'plugin/.libs'))
  ODBC_SO = File.join(PLUGINS, 'odbc_leader.so')
  ALWAYS_SO = File.join(PLUGINS, 'always_leader.so')
  ODBC_LEADER = ENV.fetch('OL_RUBY_ODBC_LEADER', File.join(BUILD, 'odbc-leader'))
  TMP = ENV['OL_RUBY_TMP'] || Dir.mktmpdir('ol-ruby-')
  @dbs = 0
  @lock = Mutex.new

  # Returns the path of a new SQLite file.
  def self.db_path
    n = @lock.synchronize { @dbs += 1 }
    File.join(TMP, "t#{Process.pid}-#{n}.db")
  end

  # Returns a connection string on a new SQLite file.
  def self.sqlite
    "Driver=SQLite3;Database=#{db_path}"
  end

  # Returns the current time in epoch ms.
  def self.now_ms
    (Time.now.to_f * 1000).round
  end

  # Returns the fire ledger of namespace ns on conn as an array of Hashes.
  def self.fires(conn, ns)
    out, err, st = Open3.capture3(ODBC_LEADER, 'fires', '-C', conn, '-n', ns, '--json',
                                  '--limit', '0')
    raise "odbc-leader fires: #{err}" unless st.success?

    out.lines.map { |l| JSON.parse(l) }
  end

  # Waits until the block is true (polling), at most secs; returns its value.
  def self.wait_for(secs = 30)
    deadline = Time.now + secs
    loop do
      v = yield
      return v if v
      raise "not reached in #{secs} s" if Time.now > deadline

      sleep 0.05
    end
  end

  LIMIT = Integer(ENV.fetch('OL_RUBY_TEST_LIMIT', '120'))
  @current = nil # [test name, monotonic start]

  # Prints every thread with its backtrace on stderr.
  def self.dump_threads(why)
    warn why
    Thread.list.each do |t|
      warn "#{t.inspect}\n  #{(t.backtrace || []).join("\n  ")}"
    end
    $stderr.flush
  end

  def self.running(name)
    @current = name && [name, Process.clock_gettime(Process::CLOCK_MONOTONIC)]
  end

  # Marks each test's start and end for the watchdog.
  module Watch
    def before_setup
      OlTest.running("#{self.class}##{name}")
      super
    end

    def after_teardown
      super
      OlTest.running(nil)
    end
  end

  def self.watch
    Thread.new do
      loop do
        sleep 1
        name, at = @current
        next unless name && Process.clock_gettime(Process::CLOCK_MONOTONIC) - at > LIMIT

        dump_threads("#{name} still runs after #{LIMIT} s (OL_RUBY_TEST_LIMIT): a hang; the threads:")
        exit!(3)
      end
    end
  end
end

Minitest::Test.prepend(OlTest::Watch)
OlTest.watch
Signal.trap('USR1') { OlTest.dump_threads('SIGUSR1: the threads:') }
