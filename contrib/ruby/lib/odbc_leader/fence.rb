# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/fence.rb: fenced writes in a job's own SQL
# (docs/fencing.md). A leader that was paused may write after another host
# took over; the fence moves the check into the write: the statement applies
# only while the fire's term still holds, by the database clock. The
# predicate is the dialect's; it needs the lease table in the database the
# job writes to. Leader#fence builds one from the plugin (no odbc-leader
# command needed); Fence.from_command asks `odbc-leader fence --bare`, for
# a process without a Leader.
require 'open3'

module OdbcLeader
  # The fence of namespace (in a group: "NAMESPACE/SHARD", see for_fire) for
  # predicate, the SELECT that goes inside EXISTS ( ... ) with two `?`
  # placeholders (namespace, then term). placeholder is '?' (sqlite3,
  # mysql2, ODBC) or '$' (pg's $1, $2, ...).
  class Fence
    STYLES = ['?', '$'].freeze

    attr_reader :predicate, :namespace, :placeholder

    def initialize(predicate, namespace, placeholder: '?')
      n = predicate.count('?')
      raise ArgumentError, "a fence predicate has two ? placeholders (namespace, term); got #{n}" unless n == 2
      raise ArgumentError, "placeholder #{placeholder}: use '?' or '$'" unless STYLES.include?(placeholder)

      @predicate = predicate.strip
      @namespace = namespace
      @placeholder = placeholder
    end

    # Returns the Fence of dialect (sqlite, postgresql, mariadb or a dialect
    # file) as `odbc-leader fence --bare` prints it. odbc_leader is the
    # command. Raises RuntimeError with the command's message when it fails.
    def self.from_command(dialect, namespace:, placeholder: '?', prefix: nil,
                          odbc_leader: 'odbc-leader')
      args = [odbc_leader, 'fence', '--bare', '--dialect', dialect]
      args.push('--prefix', prefix) if prefix
      out, err, status = Open3.capture3(*args)
      raise "#{odbc_leader} fence failed: #{err.strip}" unless status.success?

      new(out, namespace, placeholder: placeholder)
    rescue SystemCallError => e
      raise "#{odbc_leader} fence failed: #{e.message}"
    end

    # Returns " AND EXISTS (predicate)" with its placeholders; first_param
    # numbers them for '$' (the number of the statement's own parameters + 1).
    def clause(first_param = 1)
      i = first_param - 1
      text = @placeholder == '$' ? @predicate.gsub('?') { "$#{i += 1}" } : @predicate
      " AND EXISTS (#{text})"
    end

    # Returns the predicate's parameters for a fire's term: [namespace, term].
    def params(term)
      [@namespace, Integer(term)]
    end

    # Returns [text, values]: sql (an UPDATE or DELETE whose WHERE clause
    # ends the statement, or an INSERT ... SELECT ... WHERE) with the fence
    # appended, and its parameters after values. Run it with the job's
    # client; 0 rows changed means the term no longer holds (or no row
    # matched).
    def statement(sql, values, term)
      text = sql.strip.sub(/;\z/, '') + clause(values.length + 1)
      [text, [*values, *params(term)]]
    end

    # Returns the Fence of a fire's namespace: namespace itself, or in a
    # group of leader's, "namespace/shard" of the fire's job.
    def for_fire(leader, fire)
      ns = leader.shards.positive? ? "#{@namespace}/#{leader.shard_of(fire.job)}" : @namespace
      Fence.new(@predicate, ns, placeholder: @placeholder)
    end
  end

  # Returns Fence.from_command(dialect, **options).
  def self.fence(dialect, **options)
    Fence.from_command(dialect, **options)
  end
end
