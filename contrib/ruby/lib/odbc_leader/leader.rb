# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/leader.rb: Leader, a candidate that campaigns on its own:
# it ticks its plugin instance on a thread of its own as the plugin asks,
# calls the blocks registered for leadership events, and claims and finishes
# fires in the fire ledger so that each fire of a job runs on one host at
# most. With shards it is a member of a sharded group (docs/groups.md): each
# job belongs to a shard, each shard is led by one member under a term of
# its own.
require 'open3'
require_relative 'plugin'
require_relative 'fence'

module OdbcLeader
  PLUGIN_ENV = 'ODBC_LEADER_PLUGIN'
  PLUGIN_NAME = 'odbc_leader.so'
  # Where `make install` puts the plugin ($(pkglibdir)) for the usual
  # prefixes, after what pkg-config says.
  PKGLIBDIRS = %w[/usr/local/lib/odbc-leader /usr/lib/odbc-leader
                  /usr/lib/x86_64-linux-gnu/odbc-leader
                  /usr/lib/aarch64-linux-gnu/odbc-leader].freeze

  # One fire of a job: its name, its nominal time (epoch ms, the same on
  # every host; a run-now's key, below 0), the term that claimed it (the
  # fencing token), its attempt (1, or n + 1 when attempt n's host died
  # before its end: recovering, as Quartz's isRecovering) and triggered (a
  # run-now of `odbc-leader jobs trigger`).
  Fire = Struct.new(:job, :fire_ms, :term, :attempt, :recovering, :triggered,
                    keyword_init: true) do
    # A first attempt of a scheduled fire unless told otherwise.
    def initialize(job:, fire_ms:, term:, attempt: 1, recovering: false, triggered: false)
      super
    end
  end

  # The term led and how long its trust window still runs (ms), read at once.
  Leadership = Struct.new(:term, :valid_for_ms)

  FIRE_KEY = :odbc_leader_fire
  private_constant :FIRE_KEY

  # Returns the Fire the calling code runs (set by Leader#run_fire and the
  # rufus integration), or nil outside a fire. Fiber-local.
  def self.current_fire
    Thread.current[FIRE_KEY]
  end

  # Runs the block with current_fire set to fire; returns the block's value.
  def self.with_fire(fire)
    saved = Thread.current[FIRE_KEY]
    Thread.current[FIRE_KEY] = fire
    yield fire
  ensure
    Thread.current[FIRE_KEY] = saved
  end

  # Returns the pkglibdir of an installed odbcleader.pc, or nil.
  def self.pkgconfig_dir
    out, status = Open3.capture2('pkg-config', '--variable=pkglibdir', 'odbcleader',
                                 err: File::NULL)
    status.success? && !out.strip.empty? ? out.strip : nil
  rescue SystemCallError
    nil
  end

  # Returns the plugin's path in docs/abi.md's order ("Finding the
  # plugin"): file when given, else env ($ODBC_LEADER_PLUGIN), else the
  # installed pkglibdir (pkglibdir.call asks pkg-config, then the usual
  # prefixes); exists.call(p) says whether p is a file. Raises
  # ArgumentError naming every place it looked. Pure: find_plugin gives it
  # the host's.
  def self.resolve_plugin(file, env, pkglibdir, exists)
    if file && !file.empty?
      raise ArgumentError, "odbc-leader plugin #{file}: no such file" unless exists.call(file)

      return file
    end
    if env && !env.empty?
      raise ArgumentError, "odbc-leader plugin #{env} (from $#{PLUGIN_ENV}): no such file" unless exists.call(env)

      return env
    end
    tried = [pkglibdir.call, *PKGLIBDIRS].compact.map { |d| File.join(d, PLUGIN_NAME) }
    found = tried.find { |p| exists.call(p) }
    return found if found

    raise ArgumentError, 'odbc-leader plugin not found: pass plugin:, set ' \
                         "$#{PLUGIN_ENV}, or install odbc-leader (tried #{tried.join(', ')})"
  end

  # Returns the path of odbc_leader.so: file when given, else
  # $ODBC_LEADER_PLUGIN, else the installed pkglibdir (pkg-config's, then
  # the usual prefixes). Raises ArgumentError naming every place it looked.
  def self.find_plugin(file = nil)
    resolve_plugin(file, ENV.fetch(PLUGIN_ENV, nil), method(:pkgconfig_dir), File.method(:exist?))
  end

  # Returns value as the library's parser (src/config.c) reads it back as
  # one value: as it is, or in braces with '}' doubled when it holds ';',
  # '{', '}' or blanks at either end.
  def self.quote(value)
    s = value.to_s
    return s unless s.match?(/[;{}\0]|\A[ \t\r\n\v\f]|[ \t\r\n\v\f]\z/)

    "{#{s.gsub('}', '}}')}}"
  end

  # Returns the plugin's configuration: the connection string with the
  # Leader* keys (the namespace quoted: one value, whatever it holds).
  def self.config_string(connect:, namespace: nil, ttl_ms: nil, shards: nil, extra: nil)
    parts = [connect.to_s.sub(/;+\z/, '')]
    parts << "LeaderNamespace=#{quote(namespace)}" unless namespace.nil?
    parts << "LeaderTTL=#{Integer(ttl_ms)}" unless ttl_ms.nil?
    parts << "LeaderShards=#{Integer(shards)}" unless shards.nil?
    parts << extra.to_s.gsub(/\A;+|;+\z/, '') if extra
    parts.reject(&:empty?).join(';')
  end

  # One candidate. connect is an ODBC connection string or "DSN=name";
  # namespace, ttl_ms, shards (a member of a group of that many shards),
  # extra (more Leader* keys), plugin (the .so, see find_plugin), log
  # (->(level, message), syslog levels; default: warnings and errors on
  # stderr). Events, registered with on: :elected (term), :lost (the term
  # that was led), :change (leader, term, leader_id), :shard (shard, leader,
  # term) in a group, :tick_error (the Error; ticking goes on), :offers
  # (an Array of Plugin Offer, after a tick that left fires offered to this
  # leader: run-now requests and interrupted fires with attempts left; an
  # offer comes again at each tick until it is claimed). The blocks
  # run on the ticking thread while the plugin waits for them: keep them
  # short and call no I/O method of this Leader from them.
  #
  # The configuration string, which may hold a password, is kept out of
  # reach of inspect, pp, to_yaml and instance_variables: #inspect shows the
  # namespace, the plugin, the shards and the state, nothing of the
  # connection string.
  class Leader
    EVENTS = %i[elected lost change shard tick_error offers].freeze

    attr_reader :plugin_path, :plugin, :namespace, :shards, :last_error

    def initialize(connect:, namespace: nil, ttl_ms: nil, shards: nil, extra: nil,
                   plugin: nil, log: nil)
      raise ArgumentError, 'Leader: connect: is required' if connect.nil? || connect.to_s.empty?

      @plugin_path = OdbcLeader.find_plugin(plugin)
      @plugin = Plugin.new(@plugin_path)
      config = OdbcLeader.config_string(connect: connect, namespace: namespace,
                                        ttl_ms: ttl_ms, shards: shards, extra: extra)
      @create = ->(**callbacks) { @plugin.init(config, **callbacks) }
      @namespace = namespace
      @log = log || ->(level, msg) { warn("odbc-leader: #{msg}") if level <= 4 }
      @listeners = Hash.new { |h, k| h[k] = [] }
      @inst = nil
      @shards = 0
      @last_error = nil
      @leading = false
      @term = 0
      @state = Mutex.new # guards @stopping, @inflight
      @wake = ConditionVariable.new
      @stopping = false
      @inflight = 0
      @thread = nil
    end

    # Returns the Leader as p and pp show it: its namespace, its plugin and
    # its state; nothing of the connection string.
    def inspect
      "#<#{self.class.name} namespace=#{@namespace.inspect} plugin=#{@plugin_path.inspect} " \
        "shards=#{@shards} leader=#{leader?} term=#{term}>"
    end

    # to_yaml (and Rails' debug) show what inspect shows.
    def encode_with(coder)
      coder.represent_scalar(nil, inspect)
    end

    # Calls block on event (one of EVENTS); returns the block (for off).
    def on(event, &block)
      raise ArgumentError, "unknown event #{event.inspect} (#{EVENTS.join(', ')})" unless EVENTS.include?(event)

      @listeners[event] += [block] # a new array: emit may be iterating
      block
    end

    # Removes a block on registered for event; returns it, or nil.
    def off(event, block)
      found = @listeners[event].include?(block)
      @listeners[event] = @listeners[event].reject { |b| b.equal?(block) }
      found ? block : nil
    end

    # Logs message at a syslog level through the log callable.
    def log(level, message)
      @log.call(level, message)
    end

    # Creates the instance, ticks once (on the calling thread), then keeps
    # ticking on a thread of its own. Returns self; raises Error when the
    # configuration or the database is refused (the message names the
    # problem).
    def start
      return self if @inst || @stopping

      @inst = @create.call(log: @log,
                           on_change: ->(l, t, id) { on_change(l, t, id) },
                           on_shard_change: ->(s, l, t) { emit(:shard, s, l, t) })
      @shards = @inst.shards
      delay = tick_once
      @thread = Thread.new { tick_loop(delay) }
      @thread.name = 'odbc-leader tick' if @thread.respond_to?(:name=)
      self
    end

    # Stops ticking, waits for the fires under way (run_fire, track), then
    # shuts the instance down: a leader resigns, so another candidate takes
    # over at once. Idempotent; returns nil.
    def close
      @state.synchronize do
        @stopping = true
        @wake.broadcast
      end
      @thread.join if @thread && @thread != Thread.current
      @state.synchronize { @wake.wait(@state) while @inflight.positive? }
      @inst&.shutdown
      nil
    end
    alias stop close

    # Returns true once close was called.
    def closed?
      @stopping
    end

    # ---- state, no I/O ----

    # Returns true while this candidate leads (a group: any shard).
    def leader?
      !@inst.nil? && @inst.leader?
    end

    # Returns the term led, 0 when not (a group: 0, see term_of).
    def term
      @inst.nil? ? 0 : @inst.term
    end

    # Returns a Leadership (term, valid_for_ms) read at once.
    def leadership
      Leadership.new(*(@inst.nil? ? [0, 0] : @inst.leadership))
    end

    # Returns this candidate's id, as the lease and the ledger name it.
    def candidate_id
      @inst.candidate_id
    end

    # Returns the shard of job in the group, as the plugin computes it (0
    # without shards, or before start).
    def shard_of(job)
      @inst.nil? ? 0 : @inst.shard_of(job)
    end

    # Returns true while this host may run job: it leads job's shard (a
    # group) or leads (one namespace).
    def leads?(job)
      return false if @inst.nil?
      return @inst.leader? if @shards.zero?

      !@inst.shard_leadership(shard_of(job))[0].zero?
    end

    # Returns the term under which this host runs job (its shard's in a
    # group); 0 when it does not lead it.
    def term_of(job)
      return 0 if @inst.nil?
      return @inst.term if @shards.zero?

      @inst.shard_leadership(shard_of(job))[0]
    end

    # Returns a Fence for this host's writes, from the plugin's predicate for
    # its own dialect (ABI 1.5: no odbc-leader command needed). namespace:
    # this leader's by default; in a group give job: the fence is its shard's
    # (NAMESPACE/SHARD). placeholder: '?' or '$'.
    def fence(job: nil, namespace: @namespace, placeholder: '?')
      raise ArgumentError, 'fence: give namespace: (the leader was made without one)' if namespace.nil?

      unless @shards.zero?
        raise ArgumentError, "fence: a group's fence is its job's shard's: give job:" if job.nil?

        namespace = "#{namespace}/#{shard_of(job)}"
      end
      Fence.new(@inst.fence_sql, namespace, placeholder: placeholder)
    end

    # ---- fires ----

    # Claims fire fire_ms (epoch ms, its nominal time, the same on every
    # host) of job for the term led. Returns the Fire to run, as the
    # database recorded it (the term it is fenced in, its attempt), or nil
    # when it is not this host's to run (claimed before by anyone, its job
    # paused: recorded skipped, this host does not lead job, or it computes
    # job's fires by another schedule than the recorded one: set_schedule,
    # logged).
    # max_attempts above 1 opts the fire into recovery: the next leader gets
    # it offered (:offers) if this host dies before finish. Raises Error
    # when the outcome is unknown (do not run it).
    def claim(job, fire_ms, max_attempts = 1)
      return nil if @stopping || !leads?(job)

      return claim_before_1_4(job, fire_ms) unless @plugin.has?(:claim_fire)

      rc, c = @inst.claim_fire(job, fire_ms, max_attempts)
      log(6, "#{job} at #{fire_ms} not run: the job is paused") if rc == CLAIM_PAUSED
      return nil if c.nil?

      Fire.new(job: c.job, fire_ms: c.fire_ms, term: c.term, attempt: c.attempt,
               recovering: c.recovering, triggered: c.triggered)
    rescue NotLeaderError
      nil
    rescue ScheduleError => e
      log(3, "#{job} at #{fire_ms} not run: #{e.message}")
      nil
    end

    # Says how this host computes job's nominal fire times
    # (docs/schedules.md): expr in the scheduler's own terms (nil forgets
    # it), tz the IANA zone it computes in (nil: the host's; '': none, for
    # fixed intervals), engine the scheduler and its DST rule. The first
    # claim records it for job; a claim from a host that computes it
    # otherwise (another zone) is refused, logged and not run. Returns true,
    # or false for a plugin before ABI 1.6 (which cannot check); raises
    # Error for a bad zone or part.
    def set_schedule(job, expr, tz = nil, engine = '')
      return false unless @plugin.has?(:set_schedule)

      @inst.set_schedule(job, expr, tz, engine)
      true
    end

    # Returns, of job's fire times (epoch ms, ascending, as this host's
    # engine computes them; present: the newest is the fire due now),
    # those to claim after an election, an outage or a pause, decided by
    # the library's catch-up policy (docs/catch-up.md): no older than
    # grace_ms on the database clock, by policy ('skip', 'latest' (later
    # than the ledger's latest fire of the job), 'all' or 'all:CAP'). A
    # job with no fire in the ledger catches up nothing. With a plugin
    # before ABI 1.7: those within the grace by this host's clock. Raises
    # Error.
    def catch_up(job, times, policy, grace_ms, present: false)
      unless @plugin.has?(:catch_up)
        floor = (Time.now.to_r * 1000) - grace_ms
        return times.select { |t| t >= floor }
      end
      @inst.catch_up(job, policy, grace_ms, times, present: present)
    end

    # Records the outcome of a claimed fire (status 0: success) for its
    # term; raises Error when a later term took the fire again (this host
    # was paused past its lease) or it could not be recorded. Returns nil.
    def finish(fire, status = 0)
      return @inst.finish(fire.job, fire.fire_ms, status) unless @plugin.has?(:finish_fire)

      @inst.finish_fire(Claim.new(job: fire.job, fire_ms: fire.fire_ms, term: fire.term), status)
    end

    # Claims the fire and, when this host is to run it, runs the block with
    # the Fire (and current_fire set), then records its outcome (status 1
    # when the block raised, and the exception is raised again). Returns the
    # Fire that ran, or nil.
    def run_fire(job, fire_ms)
      track do
        fire = claim(job, fire_ms)
        next nil if fire.nil?

        run_claimed(fire) { yield fire }
        fire
      end
    end

    # Runs the block for a fire this host claimed with current_fire set,
    # then finishes it (status 1 when the block raised: raised again; a
    # failed finish is logged). Returns the block's value.
    def run_claimed(fire)
      status = 1
      result = OdbcLeader.with_fire(fire) { yield fire }
      status = 0
      result
    ensure
      begin
        finish(fire, status)
      rescue Error => e
        @last_error = e
        log(4, "recording the outcome of #{fire.job} at #{fire.fire_ms} failed: #{e.message}")
      end
    end

    # Makes close wait for the block (a fire under way) before it shuts the
    # instance down; returns the block's value.
    def track
      @state.synchronize { @inflight += 1 }
      begin
        yield
      ensure
        @state.synchronize do
          @inflight -= 1
          @wake.broadcast
        end
      end
    end

    private

    def emit(event, *args)
      @listeners[event].each do |blk|
        blk.call(*args)
      rescue StandardError => e
        log(3, "#{event} listener raised #{e.class}: #{e.message}")
      end
    end

    def on_change(leader, term, leader_id)
      emit(:change, leader, term, leader_id)
      was = @leading
      @leading = leader
      if leader && !was
        @term = term
        emit(:elected, term)
      elsif !leader && was
        emit(:lost, @term)
      end
    end

    # A plugin before ABI 1.4: claim, with the term read before it.
    def claim_before_1_4(job, fire_ms)
      term = term_of(job)
      return nil unless @inst.claim(job, fire_ms)

      Fire.new(job: job.to_s, fire_ms: Integer(fire_ms), term: term, attempt: 1,
               recovering: false, triggered: false)
    end

    # One tick, then the offers it left (for :offers); returns the delay
    # (ms) before the next one.
    def tick_once
      delay = @inst.tick[:next_tick_ms]
      unless @listeners[:offers].empty?
        offers = @inst.offers
        emit(:offers, offers) unless offers.empty?
      end
      delay
    rescue Error => e
      @last_error = e
      emit(:tick_error, e)
      e.next_tick_ms || 1000
    end

    def tick_loop(delay)
      loop do
        @state.synchronize do
          deadline = monotonic + (delay / 1000.0)
          until @stopping
            left = deadline - monotonic
            break if left <= 0

            @wake.wait(@state, left)
          end
        end
        break if @stopping

        delay = begin
          tick_once
        rescue StandardError => e # a log callable that raised: keep ticking
          log(3, "tick: #{e.class}: #{e.message}")
          1000
        end
      end
    end

    def monotonic
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
