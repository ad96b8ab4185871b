# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# test/config_test.rb: a namespace reaches the library as one value,
# whatever it holds: the gem quotes it as the library's parser reads it
# (braces, '}' doubled), so it can neither add nor change a key.
require_relative 'test_helper'

class ConfigTest < Minitest::Test
  include OlTest

  # The library refuses these bytes in a namespace; its message names the
  # byte and where it is in the value, so the whole value got there. A
  # namespace cut at the ';' would have set LeaderTTL, one braced on its
  # own would swallow the keys after it, and blanks would be trimmed.
  def test_namespace_is_one_value
    cases = {
      'a;LeaderTTL=60000' => "character ';' at byte 2 ",
      '{x' => "character '{' at byte 1 ",
      '{a};LeaderTTL=60000' => "character '{' at byte 1 ",
      'a}' => "character '}' at byte 2 ",
      ' ns' => "character '\\x20' at byte 1 ",
      'ns ' => "character '\\x20' at byte 3 "
    }
    wrong = cases.filter_map do |ns, want|
      leader = OdbcLeader::Leader.new(connect: OlTest.sqlite, namespace: ns, ttl_ms: 3000,
                                      plugin: ODBC_SO, log: ->(_l, _m) {})
      begin
        leader.start
        "  #{ns.inspect}: taken, the Leader started"
      rescue OdbcLeader::Error => e
        "  #{ns.inspect}: #{e.message}" unless e.message.include?("LeaderNamespace: #{want}") &&
                                               e.error_class == :config
      ensure
        leader.close
      end
    end
    flunk("namespaces not refused as one value:\n#{wrong.join("\n")}") unless wrong.empty?
  end

  def test_valid_names_pass_as_they_are
    leader = OdbcLeader::Leader.new(connect: OlTest.sqlite, namespace: 'a.b-c:d/e@f_1', ttl_ms: 3000,
                                    plugin: ODBC_SO, log: ->(_l, _m) {})
    leader.start
    OlTest.wait_for { leader.leader? }
    assert_equal 'a.b-c:d/e@f_1', OdbcLeader.quote('a.b-c:d/e@f_1')
    assert_includes leader.inspect, 'namespace="a.b-c:d/e@f_1"'
  ensure
    leader&.close
  end
end
