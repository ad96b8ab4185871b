# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/plugin.rb: the ruby-ffi binding of the scheduler-plugin ABI
# (plugin/leader_plugin.h). Plugin loads a .so and reads its function table
# up to the struct_size the plugin was built with; Instance is one candidate
# made by init(). The calls that may do I/O (init, tick, claim, finish,
# shutdown) are called with blocking: true, so they release the GVL and other
# Ruby threads run meanwhile, and an Instance runs them one at a time, in
# the order they were called (a FairLock): the plugin's instances are not
# thread-safe. The calls without I/O
# (leader?, term, leadership, shard_leadership, candidate_id, shards) take no
# lock, as the ABI allows from any thread. The logic stays in C.
require 'ffi'
require_relative 'errors'

module OdbcLeader
  ABI_MAJOR = 1 # LEADER_PLUGIN_ABI_MAJOR
  ABI_MINOR = 8 # LEADER_PLUGIN_ABI_MINOR
  EABI = -1000 # LEADER_PLUGIN_EABI
  ENOTLEADER = -1001 # LEADER_PLUGIN_ENOTLEADER (ABI 1.1)
  # LEADER_PLUGIN_ESCHEDULE (ABI 1.6): a claim computed by another schedule
  # than the one its job's fires are recorded under (docs/schedules.md)
  ESCHEDULE = -1002
  RESIGN_REQUESTED = 2 # LEADER_PLUGIN_RESIGN_REQUESTED
  CLAIM_RUN = 1 # LEADER_PLUGIN_CLAIM_RUN (ABI 1.4)
  CLAIM_PAUSED = 2 # LEADER_PLUGIN_CLAIM_PAUSED (ABI 1.4)
  OFFERS_MAX = 64 # offers reads at most this many
  ERRLEN = 1024 # init's message buffer
  MSGLEN = 512 # last_error's message buffer

  # struct leader_host, member for member.
  class HostStruct < FFI::Struct
    layout :struct_size, :uint32,
           :ctx, :pointer,
           :log, :pointer,
           :on_change, :pointer,
           :on_shard_change, :pointer # ABI 1.3
  end

  # struct leader_plugin: every function pointer as a pointer, turned into
  # an FFI::Function only once struct_size says the plugin has it.
  class TableStruct < FFI::Struct
    layout :struct_size, :uint32,
           :abi_major, :uint16,
           :abi_minor, :uint16,
           :name, :pointer,
           :version, :pointer,
           :init, :pointer,
           :tick, :pointer,
           :is_leader, :pointer,
           :shutdown, :pointer,
           :term, :pointer,
           :strerror, :pointer,
           :claim, :pointer, # ABI 1.1
           :finish, :pointer,
           :leadership, :pointer,
           :candidate_id, :pointer, # ABI 1.2
           :error_class, :pointer,
           :last_error, :pointer,
           :shards, :pointer, # ABI 1.3
           :shard_of, :pointer,
           :shard_leadership, :pointer,
           :claim_fire, :pointer, # ABI 1.4
           :finish_fire, :pointer,
           :offers, :pointer,
           :pause_job, :pointer,
           :trigger_job, :pointer,
           :fence_sql, :pointer, # ABI 1.5
           :set_schedule, :pointer, # ABI 1.6
           :local_zone, :pointer,
           :catch_up, :pointer, # ABI 1.7
           :catch_up_select, :pointer,
           :second_pass, :pointer, # ABI 1.8
           :first_pass_next, :pointer
  end

  # ABI 1.4: struct leader_plugin_claim, a claim as the database recorded it.
  class ClaimStruct < FFI::Struct
    layout :struct_size, :uint32,
           :attempt, :int32,
           :max_attempts, :int32,
           :recovering, :int32,
           :triggered, :int32,
           :term, :int64,
           :nominal_ms, :int64
  end

  # ABI 1.4: struct leader_plugin_offer, a fire offered to the leader.
  class OfferStruct < FFI::Struct
    layout :fire_ms, :int64,
           :attempt, :int32,
           :max_attempts, :int32,
           :job, [:char, 129]
  end

  # A fire claimed to run (ABI 1.4): attempt (1, or n + 1 when attempt n was
  # interrupted), max_attempts, recovering, triggered (a run-now), term (the
  # fencing token; finish_fire uses it) and nominal_ms.
  Claim = Struct.new(:job, :fire_ms, :attempt, :max_attempts, :recovering,
                     :triggered, :term, :nominal_ms, keyword_init: true)
  # A fire offered to the leader: a run-now (fire_ms below 0) or an
  # interrupted attempt its job may run again.
  Offer = Struct.new(:job, :fire_ms, :attempt, :max_attempts, keyword_init: true)

  # Each member's C signature: [return type, argument types, blocking].
  # blocking: true for the calls that may do I/O (they release the GVL).
  PROTOS = {
    init: [:int, %i[string pointer pointer pointer size_t], true],
    tick: [:int, %i[pointer pointer], true],
    is_leader: [:int, [:pointer], false],
    shutdown: [:void, [:pointer], true],
    term: [:int64, [:pointer], false],
    strerror: [:string, [:int], false],
    claim: [:int, %i[pointer string int64], true],
    finish: [:int, %i[pointer string int64 int], true],
    leadership: [:int64, %i[pointer pointer], false],
    candidate_id: [:string, [:pointer], false],
    error_class: [:int, [:int], false],
    last_error: [:int, %i[pointer pointer pointer pointer pointer size_t], false],
    shards: [:uint32, [:pointer], false],
    shard_of: [:uint32, %i[pointer string], false],
    shard_leadership: [:int64, %i[pointer uint32 pointer], false],
    claim_fire: [:int, %i[pointer string int64 int pointer], true],
    finish_fire: [:int, %i[pointer string int64 int64 int], true],
    offers: [:int, %i[pointer pointer int], false],
    pause_job: [:int, %i[pointer string int], true],
    trigger_job: [:int, %i[pointer string pointer], true],
    fence_sql: [:int, %i[pointer pointer size_t], false],
    set_schedule: [:int, %i[pointer string string string string], false],
    local_zone: [:int, %i[pointer size_t], false],
    catch_up: [:int, %i[pointer string string int64 int pointer size_t pointer], true],
    catch_up_select: [:int, %i[string int64 int int64 int64 pointer size_t pointer], false],
    second_pass: [:int, %i[pointer pointer pointer int64], false],
    first_pass_next: [:int, %i[pointer pointer pointer int64 pointer], false]
  }.freeze

  # Calls the block with times as a C array of int64, its length and a
  # size_t for the first index; returns the times it selected (the
  # block's count from the first). Raises Error for a negative count.
  def self.catch_up_call(times)
    times = times.map { |t| Integer(t) }
    arr = FFI::MemoryPointer.new(:int64, [times.size, 1].max)
    arr.write_array_of_int64(times) unless times.empty?
    first = FFI::MemoryPointer.new(:size_t)
    n = yield arr, times.size, first
    raise Error.new('catch-up refused', code: n) if n.negative?

    times[first.read(:size_t), n]
  end

  # The struct_size of a 1.0 table: it ends where claim (ABI 1.1) begins.
  SIZE_1_0 = TableStruct.offset_of(:claim)

  # A loaded plugin and its function table. Plugin.new(path) calls
  # leader_plugin_entry(abi_major); a plugin of another major version
  # refuses with EABI, raised as OdbcLeader::Error. abi_major is a parameter
  # only so that tests can check that refusal. A library is never unloaded.
  class Plugin
    attr_reader :path, :struct_size, :abi_major, :abi_minor, :name, :version

    def initialize(path, abi_major: ABI_MAJOR)
      @path = path
      begin
        @lib = FFI::DynamicLibrary.open(path, FFI::DynamicLibrary::RTLD_NOW |
                                              FFI::DynamicLibrary::RTLD_LOCAL)
      rescue LoadError => e
        raise Error.new("#{path}: cannot load: #{e.message}", code: EABI,
                                                               strerror: 'cannot load the plugin')
      end
      sym = @lib.find_function('leader_plugin_entry')
      raise Error.new("#{path}: no leader_plugin_entry: not a plugin", code: EABI) unless sym

      entry = FFI::Function.new(:int, %i[uint16 pointer], sym)
      out = FFI::MemoryPointer.new(:pointer)
      rc = entry.call(abi_major, out)
      table = out.read_pointer
      if rc != 0 || table.null?
        raise Error.new("#{path}: ABI major #{abi_major} refused (#{rc})",
                        code: rc.zero? ? EABI : rc,
                        strerror: 'unsupported plugin ABI major version')
      end
      @table = TableStruct.new(table)
      @struct_size = @table[:struct_size]
      if @struct_size < SIZE_1_0
        raise Error.new("#{path}: struct leader_plugin too small (#{@struct_size} bytes)",
                        code: EABI)
      end
      @abi_major = @table[:abi_major]
      @abi_minor = @table[:abi_minor]
      @name = c_string(@table[:name])
      @version = c_string(@table[:version])
      @fns = {}
      @fns_lock = Mutex.new
    end

    # Returns true when the table has member (a Symbol naming a member of
    # struct leader_plugin, such as :claim) and it is set: struct_size covers
    # it, as LEADER_PLUGIN_HAS checks in C. Reads nothing past struct_size.
    def has?(member)
      member = member.to_sym
      return false unless PROTOS.key?(member)
      return false if @struct_size < TableStruct.offset_of(member) + FFI::Pointer.size

      !@table[member].null?
    end

    # Returns the callable member (an FFI::Function); raises Error EABI when
    # the plugin does not have it.
    def fn(member)
      member = member.to_sym
      @fns[member] || @fns_lock.synchronize do
        @fns[member] ||= begin
          unless has?(member)
            raise Error.new("#{@path}: plugin #{@name} (ABI #{@abi_major}.#{@abi_minor}) " \
                            "has no #{member}", code: EABI,
                                                strerror: 'unsupported plugin ABI version')
          end
          ret, args, blocking = PROTOS.fetch(member)
          FFI::Function.new(ret, args, @table[member], blocking: blocking)
        end
      end
    end

    # ABI 1.6: the IANA name of the host's time zone as the C library
    # computes local time (TZ, else /etc/localtime), 'UTC' for its aliases.
    # Raises Error when it has none.
    def local_zone
      buf = FFI::MemoryPointer.new(:char, 128)
      rc = fn(:local_zone).call(buf, 128)
      raise Error.new("the host's time zone has no IANA name: set TZ", code: rc) if rc.negative?

      buf.read_string
    end

    # Returns the plugin's static message for one of its negative codes.
    def strerror(code)
      fn(:strerror).call(code) || 'unknown error'
    end

    # ABI 1.7: the catch-up policy (docs/catch-up.md) with the database
    # clock now_ms and the ledger's latest nominal time last_ms given, no
    # I/O: of times (ascending; present: the newest is the fire due now),
    # those to claim, oldest first. Raises Error for a policy text or times
    # the plugin refuses.
    def catch_up_select(policy, grace_ms, now_ms, last_ms, times, present: false)
      OdbcLeader.catch_up_call(times) do |arr, n, first|
        fn(:catch_up_select).call(policy.to_s, grace_ms, present ? 1 : 0, now_ms, last_ms,
                                  arr, n, first)
      end
    rescue Error => e
      raise Error.new(strerror(e.code), code: e.code)
    end

    # ABI 1.8: the first-pass rule (docs/schedules.md) with the engine's
    # next (a callable: the first fire time after ms, or nil) and same_wall
    # (true when instants a and b show one wall time in the job's zone).
    # second_pass?(t): true when fire time t is the second pass of a
    # repeated wall time, not to be run; first_pass_next(ms): next kept to
    # the first pass, or nil. An exception of a callback is raised after.
    def second_pass?(next_fn, same_wall, t)
      first_pass(:second_pass, next_fn, same_wall, t) == 1
    end

    def first_pass_next(next_fn, same_wall, ms)
      out = FFI::MemoryPointer.new(:int64)
      first_pass(:first_pass_next, next_fn, same_wall, ms, out) == 1 ? out.read(:int64) : nil
    end

    # Calls member with the callbacks as C functions; returns its result.
    def first_pass(member, next_fn, same_wall, time, *rest)
      raised = nil
      guard = lambda do |none, &blk|
        lambda do |*args|
          raised ? none : blk.call(*args)
        rescue StandardError => e
          raised = e
          none
        end
      end
      nf = FFI::Function.new(:int64, %i[pointer int64], &guard.call(-1) { |_, ms| next_fn.call(ms) || -1 })
      sw = FFI::Function.new(:int, %i[pointer int64 int64],
                             &guard.call(0) { |_, a, b| same_wall.call(a, b) ? 1 : 0 })
      rc = fn(member).call(nf, sw, nil, time, *rest)
      raise raised if raised
      raise Error.new(strerror(rc), code: rc) if rc.negative?

      rc
    end
    private :first_pass

    # Returns :transient, :config or :fatal for one of the plugin's negative
    # codes (ABI 1.2; nil before, or for a code that is not an error).
    def error_class(code)
      return nil unless has?(:error_class)

      OdbcLeader.class_of(fn(:error_class).call(code))
    end

    # Returns a new Instance of config (see Instance#initialize).
    def init(config, **callbacks)
      Instance.new(self, config, **callbacks)
    end

    private

    def c_string(ptr)
      ptr.null? ? nil : ptr.read_string
    end
  end

  # A lock that serves its waiters in the order they came (a ticket lock).
  # A Mutex is not: a follower's tick that blocks in the plugin, returns
  # and is called again at once re-takes a Mutex before a woken waiter
  # runs, so a claim (or close's error report) from another thread could
  # wait for ever. Not reentrant: a thread that holds it and asks again
  # gets ThreadError, as from a Mutex. A waiter interrupted (Thread#raise,
  # Timeout, Thread#kill) gives its turn up.
  class FairLock
    def initialize
      @mutex = Mutex.new
      @turn = ConditionVariable.new
      @next = 0 # the next ticket to hand out
      @serving = 0 # the ticket that may hold the lock
      @gone = {} # tickets whose waiter gave up
      @owner = nil
    end

    # Runs the block holding the lock; returns its value.
    def synchronize
      take
      begin
        yield
      ensure
        @mutex.synchronize do
          @owner = nil
          advance
        end
      end
    end

    private

    def take
      @mutex.synchronize do
        raise ThreadError, 'deadlock; recursive locking' if @owner == Thread.current

        ticket = @next
        @next += 1
        taken = false
        begin
          @turn.wait(@mutex) until @serving == ticket
          @owner = Thread.current
          taken = true
        ensure # an exception, or Thread#kill, which no rescue sees
          @serving == ticket ? advance : @gone[ticket] = true unless taken
        end
      end
    end

    # Passes the turn to the next ticket still waited for. Holds @mutex.
    def advance
      @serving += 1
      @serving += 1 while @gone.delete(@serving)
      @turn.broadcast
    end
  end

  # One plugin instance: a candidate of one election namespace, or a member
  # of a sharded group. The I/O calls run one at a time, first come first
  # served (a FairLock, not reentrant: do not call them from a callback); shutdown ends the instance
  # (a leader resigns) and frees what it holds.
  class Instance
    attr_reader :plugin

    # Creates the instance of config (a String). Callbacks (each optional):
    # log: ->(level, message) (syslog levels), on_change: ->(leader, term,
    # leader_id), on_shard_change: ->(shard, leader, term). The plugin calls
    # them on the thread that called tick (or shutdown) while it waits for
    # them, so a shard's stop is handled before the shard is handed over. An
    # exception a callback raises is kept and raised by the call that made
    # the plugin call it (it never unwinds through C). Raises Error with the
    # plugin's message when init fails.
    def initialize(plugin, config, log: nil, on_change: nil, on_shard_change: nil)
      @plugin = plugin
      @lock = FairLock.new
      @closed = false
      @pending = nil
      @inst = nil
      # The callbacks and the host struct live as long as this object, so
      # the garbage collector frees neither while the plugin holds them.
      @callbacks = []
      @host = HostStruct.new(FFI::MemoryPointer.new(HostStruct.size))
      @host[:struct_size] = HostStruct.size
      @host[:ctx] = FFI::Pointer::NULL
      @host[:log] = callback(log, :void, %i[pointer int string]) do |f, _ctx, level, msg|
        f.call(level, msg || '')
      end
      @host[:on_change] = callback(on_change, :void, %i[pointer int int64 string]) do |f, _c, l, t, id|
        f.call(l != 0, t, id)
      end
      @host[:on_shard_change] = callback(on_shard_change, :void,
                                         %i[pointer uint32 int int64]) do |f, _c, shard, l, t|
        f.call(shard, l != 0, t)
      end
      out = FFI::MemoryPointer.new(:pointer)
      err = FFI::MemoryPointer.new(:char, ERRLEN)
      rc = @lock.synchronize { plugin.fn(:init).call(config.to_s, @host, out, err, ERRLEN) }
      if rc.negative? || out.read_pointer.null?
        strerror = plugin.strerror(rc)
        msg = err.read_string
        @closed = true
        @pending = nil
        raise Error.new(msg.empty? ? strerror : msg, code: rc, strerror: strerror,
                                                     error_class: plugin.error_class(rc))
      end
      @inst = out.read_pointer
      rethrow
    end

    # Returns true once shutdown was called.
    def closed?
      @closed
    end

    # One election step. Returns { leader:, next_tick_ms:, resign_requested: };
    # raises Error (with next_tick_ms: tick again after it) when the plugin
    # failed.
    def tick
      next_ms = FFI::MemoryPointer.new(:uint32)
      next_ms.write_uint32(1000)
      rc = io { |inst| @plugin.fn(:tick).call(inst, next_ms) }
      if rc.negative?
        e = error(rc)
        e.next_tick_ms = next_ms.read_uint32
        raise e
      end
      { leader: rc >= 1, next_tick_ms: next_ms.read_uint32,
        resign_requested: rc == RESIGN_REQUESTED }
    end

    # Claims fire fire_ms (epoch ms, the nominal time) of job for the term
    # led (in a group, the term of job's shard). Returns true (run it) or
    # false (claimed before, by anyone, in any term); raises NotLeaderError
    # when this instance does not lead, Error otherwise (the outcome is then
    # unknown: do not run it).
    def claim(job, fire_ms = 0)
      f = @plugin.fn(:claim)
      rc = io { |inst| f.call(inst, job.to_s, Integer(fire_ms)) }
      raise claim_error(rc) if rc.negative?

      rc == 1
    end

    # Records the outcome (0 success, else an exit status or -signal) of a
    # fire this instance claimed; idempotent. Returns nil.
    def finish(job, fire_ms = 0, status = 0)
      f = @plugin.fn(:finish)
      rc = io { |inst| f.call(inst, job.to_s, Integer(fire_ms), Integer(status)) }
      raise error(rc) if rc.negative?

      nil
    end

    # ---- ABI 1.4: the fire lifecycle (docs/lifecycle.md) ----

    # claim that says what it got: [CLAIM_RUN, Claim] to run it, [0, nil]
    # claimed before, or [CLAIM_PAUSED, nil]. max_attempts above 1 opts the
    # job into recovery. Raises NotLeaderError or LeaderPluginError.
    def claim_fire(job, fire_ms, max_attempts = 1)
      f = @plugin.fn(:claim_fire)
      c = ClaimStruct.new
      c[:struct_size] = ClaimStruct.size
      rc = io { |inst| f.call(inst, job.to_s, Integer(fire_ms), Integer(max_attempts), c.pointer) }
      raise claim_error(rc) if rc.negative?
      return [rc, nil] unless rc == CLAIM_RUN

      [rc, Claim.new(job: job.to_s, fire_ms: Integer(fire_ms), attempt: c[:attempt],
                     max_attempts: c[:max_attempts], recovering: c[:recovering] != 0,
                     triggered: c[:triggered] != 0, term: c[:term], nominal_ms: c[:nominal_ms])]
    end

    # Records the outcome of the attempt claim_fire returned; raises when a
    # later term took the fire again. Returns nil.
    def finish_fire(claim, status = 0)
      f = @plugin.fn(:finish_fire)
      rc = io { |inst| f.call(inst, claim.job, claim.fire_ms, claim.term, Integer(status)) }
      raise error(rc) if rc.negative?

      nil
    end

    # The fires offered to this leader as its ticks learned them (an Array
    # of Offer; [] for an older plugin). No I/O; waits for a call under way.
    def offers
      inst = @inst
      return [] if @closed || inst.nil? || !@plugin.has?(:offers)

      buf = FFI::MemoryPointer.new(OfferStruct, OFFERS_MAX)
      # no I/O, but it reads what tick writes: never at the same time
      n = @lock.synchronize { @plugin.fn(:offers).call(inst, buf, OFFERS_MAX) }
      raise error(n) if n.negative?

      Array.new([n, OFFERS_MAX].min) do |i|
        o = OfferStruct.new(buf + (i * OfferStruct.size))
        Offer.new(job: o[:job].to_ptr.read_string, fire_ms: o[:fire_ms],
                  attempt: o[:attempt], max_attempts: o[:max_attempts])
      end
    end

    # Pauses (or resumes, paused false) job on every host, durably.
    def pause_job(job, paused = true)
      f = @plugin.fn(:pause_job)
      rc = io { |inst| f.call(inst, job.to_s, paused ? 1 : 0) }
      raise error(rc) if rc.negative?

      nil
    end

    # Asks the leader to run job once now; returns the run-now's key (below 0).
    def trigger_job(job)
      f = @plugin.fn(:trigger_job)
      key = FFI::MemoryPointer.new(:int64)
      rc = io { |inst| f.call(inst, job.to_s, key) }
      raise error(rc) if rc.negative?

      key.read_int64
    end

    # ABI 1.5: the fence predicate of the instance's dialect (the SELECT
    # inside EXISTS ( ... ), ? for the namespace and then the term). No I/O,
    # but never beside a tick (a reconnect may load the dialect again).
    # Raises Error (EABI before 1.5).
    def fence_sql
      f = @plugin.fn(:fence_sql)
      text = io do |inst|
        n = f.call(inst, nil, 0)
        buf = FFI::MemoryPointer.new(:char, n + 1) unless n.negative?
        n = f.call(inst, buf, n + 1) unless n.negative?
        n.negative? ? n : buf.read_string
      end
      raise error(text) if text.is_a?(Integer)

      text
    end

    # ABI 1.6: says how this host computes the nominal times of job's fires
    # (docs/schedules.md): expr in the engine's own syntax (nil forgets it),
    # tz the IANA zone it computes in (nil: the host's; '': none, for
    # intervals), engine its name and DST rule. A later claim computed by
    # another schedule than the job's recorded one raises ScheduleError. No
    # I/O. Raises Error (a bad zone or part, named). Returns nil.
    def set_schedule(job, expr, tz = nil, engine = '')
      f = @plugin.fn(:set_schedule)
      rc = io { |inst| f.call(inst, job.to_s, expr&.to_s, tz&.to_s, engine.to_s) }
      raise error(rc) if rc.negative?

      nil
    end

    # ABI 1.7: the catch-up policy (docs/catch-up.md): of job's fire times
    # (ascending, as this host's engine computes them; present: the newest
    # is the fire due now), those to claim, oldest first, decided by the
    # plugin from the ledger's latest fire of the job and the database
    # clock. One round trip. Raises Error.
    def catch_up(job, policy, grace_ms, times, present: false)
      f = @plugin.fn(:catch_up)
      OdbcLeader.catch_up_call(times) do |arr, n, first|
        rc = io { |inst| f.call(inst, job.to_s, policy.to_s, grace_ms, present ? 1 : 0, arr, n, first) }
        raise error(rc) if rc.negative?

        rc
      end
    end

    # Resigns if leader, leaves the election, frees the instance; a second
    # call does nothing. Returns nil.
    def shutdown
      @lock.synchronize do
        return nil if @closed

        @closed = true
        begin
          @plugin.fn(:shutdown).call(@inst)
        ensure
          @inst = nil
          @callbacks = [] # the plugin holds none of them any more
        end
      end
      rethrow
      nil
    end

    # Returns true while this instance leads (a group: any shard). No I/O.
    def leader?
      inst = @inst
      !inst.nil? && !@closed && @plugin.fn(:is_leader).call(inst) != 0
    end

    # Returns the term (fencing token) led, 0 when not leader. No I/O.
    def term
      inst = @inst
      @closed || inst.nil? ? 0 : @plugin.fn(:term).call(inst)
    end

    # Returns [term, valid_for_ms] read at once; term 0 when not leader.
    def leadership
      f = @plugin.fn(:leadership)
      inst = @inst
      return [0, 0] if @closed || inst.nil?

      valid = FFI::MemoryPointer.new(:uint32)
      t = f.call(inst, valid)
      [t, t.zero? ? 0 : valid.read_uint32]
    end

    # Returns this instance's candidate id (ABI 1.2). No I/O.
    def candidate_id
      @plugin.fn(:candidate_id).call(live)
    end

    # Returns the shard count of a group member, 0 otherwise (or before 1.3).
    def shards
      inst = @inst
      return 0 if @closed || inst.nil? || !@plugin.has?(:shards)

      @plugin.fn(:shards).call(inst)
    end

    # Returns the shard of key in this instance's group, as the plugin's
    # shard_of computes it (FNV-1a 64 of its UTF-8 bytes, docs/abi.md); 0
    # without a group or once shut down.
    def shard_of(key)
      return 0 if shards.zero?

      @plugin.fn(:shard_of).call(@inst, key.to_s.encode(Encoding::UTF_8))
    end

    # Returns [term, valid_for_ms] of shard as this member leads it. No I/O.
    def shard_leadership(shard)
      f = @plugin.fn(:shard_leadership)
      inst = @inst
      return [0, 0] if @closed || inst.nil?

      valid = FFI::MemoryPointer.new(:uint32)
      t = f.call(inst, shard, valid)
      [t, t.zero? ? 0 : valid.read_uint32]
    end

    # Returns the instance's last error (ABI 1.2) as { code:, error_class:,
    # sqlstate:, native:, message: }, code 0 when no call failed yet; nil for
    # an older plugin. Call it on the thread that ticks, or between calls.
    def last_error
      inst = @inst
      return nil if @closed || inst.nil? || !@plugin.has?(:last_error)

      cls = FFI::MemoryPointer.new(:int)
      native = FFI::MemoryPointer.new(:long)
      state = FFI::MemoryPointer.new(:char, 6)
      msg = FFI::MemoryPointer.new(:char, MSGLEN)
      code = @plugin.fn(:last_error).call(inst, cls, state, native, msg, MSGLEN)
      { code: code, error_class: OdbcLeader.class_of(cls.read_int),
        sqlstate: state.read_string, native: native.read_long, message: msg.read_string }
    end

    private

    # Returns an FFI::Function calling user (a callable) through adapt, or
    # NULL when user is nil; keeps it referenced as long as this instance.
    def callback(user, ret, args, &adapt)
      return FFI::Pointer::NULL if user.nil?

      f = FFI::Function.new(ret, args) do |*a|
        adapt.call(user, *a)
      rescue Exception => e # rubocop:disable Lint/RescueException -- never unwind through C
        @pending ||= e
      end
      @callbacks << f
      f
    end

    def live
      raise Error.new('the instance was shut down', code: EABI) if @closed || @inst.nil?

      @inst
    end

    # Runs the block with the live instance under the lock; returns its
    # value, after raising what a callback raised meanwhile.
    def io
      rc = @lock.synchronize { yield live }
      rethrow
      rc
    end

    def rethrow
      e = @pending
      @pending = nil
      raise e if e
    end

    # Returns an Error (of cls) for code rc with this instance's last error.
    # The error a claim's negative rc means.
    def claim_error(rc)
      return error(rc, NotLeaderError) if rc == ENOTLEADER
      return error(rc, ScheduleError) if rc == ESCHEDULE

      error(rc)
    end

    def error(rc, cls = Error)
      strerror = @plugin.strerror(rc)
      last = @lock.synchronize { last_error }
      same = last && last[:code] == rc
      msg = strerror
      if same && !last[:message].empty? && last[:message] != strerror
        msg = last[:message].include?(strerror) ? last[:message] : "#{strerror}: #{last[:message]}"
      end
      cls.new(msg, code: rc, strerror: strerror,
                   error_class: same && last[:error_class] ? last[:error_class] : @plugin.error_class(rc),
                   sqlstate: same ? last[:sqlstate] : '', native: same ? last[:native] : 0)
    end
  end
end
