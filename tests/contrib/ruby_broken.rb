# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# ruby_broken.rb: broken variants of the Ruby gem (contrib/ruby), which the
# fire checker must fail. Not shipped in the gem. Loaded before
# contrib/ruby/examples/rufus with RUBYOPT=-r/ABS/PATH/tests/contrib/ruby_broken.rb
# (scheduler_fires.py --kind exec --env RUBYOPT=... --env ODBC_LEADER_BROKEN=...);
# ODBC_LEADER_BROKEN selects one:
#   nogate  every process runs every fire: no leadership gate, no claim,
#           no finish;
#   every   the job is a rufus `every` NOT snapped to the epoch grid: timed
#           from each process's start, as plain rufus does, so each process
#           names a fire by its own time (unaligned fire_ms, a slot run by
#           several processes). It adds --kind every to the command line.
# ODBC_LEADER_RUBY_LIB is the gem's lib (default: contrib/ruby/lib of this
# source tree); the example must be the same tree's, or the gem loads twice.
lib = ENV['ODBC_LEADER_RUBY_LIB'] || File.expand_path('../../contrib/ruby/lib', __dir__)
$LOAD_PATH.unshift(lib)
require 'odbc_leader'
require 'odbc_leader/rufus'

case ENV.fetch('ODBC_LEADER_BROKEN', nil)
when 'nogate'
  OdbcLeader::Leader.prepend(Module.new do
    def leads?(_job)
      !@inst.nil?
    end

    def claim(job, fire_ms, _max_attempts = 1)
      OdbcLeader::Fire.new(job: job.to_s, fire_ms: Integer(fire_ms), term: term)
    end

    def finish(_fire, _status = 0)
      nil
    end
  end)
when 'every'
  OdbcLeader::Rufus::Scheduler.prepend(Module.new do
    # No first_at: rufus times the job from this process's start.
    def every_grid(_name, _t, _opts)
      nil
    end

    # The fire times of such a job, as rufus computes them here.
    def do_schedule(*args)
      r = super
      jobs.each do |j|
        next unless j.is_a?(::Rufus::Scheduler::EveryJob)

        @ol_every[j] ||= [OdbcLeader::Runner.ms(j.next_time), (j.frequency * 1000).round]
      end
      r
    end
  end)
  ARGV.push('--kind', 'every')
else
  raise "ruby_broken.rb: ODBC_LEADER_BROKEN=#{ENV.fetch('ODBC_LEADER_BROKEN', nil)}: use nogate or every"
end
