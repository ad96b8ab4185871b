# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/errors.rb: the errors of the binding. An OdbcLeader::Error
# carries the plugin's negative code, the class the plugin gives it (what to
# do: :transient keep going, :config alert an operator, :fatal alert a
# developer) and, when the driver failed, its SQLSTATE, native code and
# message (never a password).
module OdbcLeader
  # LEADER_PLUGIN_CLASS_* values as symbols.
  CLASSES = { 1 => :transient, 2 => :config, 3 => :fatal }.freeze

  # Returns :transient, :config or :fatal for a LEADER_PLUGIN_CLASS_* value,
  # nil for 0 or an unknown one.
  def self.class_of(n)
    CLASSES[n]
  end

  # A failed plugin call. code is the plugin's negative code; strerror its
  # static message; error_class :transient, :config, :fatal or nil (a plugin
  # older than ABI 1.2); sqlstate ("" when the driver was not involved) and
  # native are the driver's.
  class Error < StandardError
    attr_reader :code, :strerror, :error_class, :sqlstate, :native
    # The tick's advice after a failed tick: when to tick again (ms), or nil.
    attr_accessor :next_tick_ms

    def initialize(message = nil, code: 0, strerror: nil, error_class: nil,
                   sqlstate: '', native: 0)
      super(message || strerror || 'odbc-leader error')
      @code = code
      @strerror = strerror || self.message
      @error_class = error_class
      @sqlstate = sqlstate || ''
      @native = native || 0
      @next_tick_ms = nil
    end
  end

  # A claim by an instance that does not lead (LEADER_PLUGIN_ENOTLEADER): do
  # not run the fire.
  class NotLeaderError < Error; end

  # A claim computed by another schedule than the one its job's fires are
  # recorded under (LEADER_PLUGIN_ESCHEDULE, docs/schedules.md): another time
  # zone, expression or engine. Do not run the fire; the message names both.
  class ScheduleError < Error; end
end
