# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# test/fence_pg.rb: the fence helper on a real PostgreSQL with the pg gem
# (Debian's ruby-pg), its predicate from the leader's plugin (Leader#fence). OL_RUBY_PG_CONNECT is the server's ODBC connection
# string, OL_RUBY_PG_URL its libpq URL, and the variables of test_helper.rb;
# tests/contrib/ruby-pg.test runs it. Not a *_test.rb: ruby.test runs those
# without a server.
require_relative 'test_helper'
require 'pg'

class FencePgTest < Minitest::Test
  CONNECT = ENV.fetch('OL_RUBY_PG_CONNECT')
  URL = ENV.fetch('OL_RUBY_PG_URL')

  # Returns the rows the fenced INSERT wrote (1 applied, 0 fenced out).
  def write(pg, fence, key, term)
    text, values = fence.statement('INSERT INTO fenced (k, term) SELECT $1::int, $2::bigint WHERE TRUE',
                                   [key, term], term)
    pg.exec_params(text, values).cmd_tuples
  end

  def leader(namespace)
    OdbcLeader::Leader.new(connect: "#{CONNECT};LeaderRenewInterval=250;LeaderSafetyMargin=150",
                           namespace: namespace, ttl_ms: 2000, plugin: OlTest::ODBC_SO).start
  end

  def test_a_fenced_write_applies_in_the_current_term_only
    ns = 'fence-ruby'
    pg = PG.connect(URL)
    pg.exec('CREATE TABLE fenced (k INT PRIMARY KEY, term BIGINT)')
    a = leader(ns)
    assert a.leader?, 'the first candidate leads'
    fence = a.fence(placeholder: '$') # the plugin's predicate: no odbc-leader needed
    written = nil
    fire = a.run_fire('report', OlTest.now_ms / 1000 * 1000) do |f|
      written = write(pg, fence, 1, f.term)
    end
    refute_nil fire, 'the leader claims its fire'
    assert_equal 1, written, "the leader's write applies"
    old_term = fire.term
    a.close # resigns: the term is over
    assert_equal 0, write(pg, fence, 2, old_term), 'a write of an ended term is fenced out'
    b = leader(ns)
    assert_operator b.term, :>, old_term, 'the next leader has a greater term'
    assert_equal 0, write(pg, fence, 3, old_term), 'the old term stays fenced out'
    assert_equal 1, write(pg, fence, 4, b.term), "the new leader's write applies"
    b.close
    assert_equal [1, 4], pg.exec('SELECT k FROM fenced ORDER BY k').map { |r| r['k'].to_i }
  ensure
    pg&.close
  end
end
