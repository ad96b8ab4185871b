# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# odbc-leader.gemspec: the odbc-leader gem (contrib/ruby): leader election
# and exactly-once scheduled fires for Ruby over odbc-leader's plugin, with
# ruby-ffi; rufus-scheduler is optional (require 'odbc_leader/rufus').
# `gem build odbc-leader.gemspec` makes it; docs/ruby.md is the guide.
require_relative 'lib/odbc_leader/version'

Gem::Specification.new do |s|
  s.name = 'odbc-leader'
  s.version = OdbcLeader::VERSION
  s.summary = 'Leader election and exactly-once scheduled fires for Ruby, on your SQL database through ODBC'
  s.description = 'A ruby-ffi binding of odbc-leader\'s scheduler plugin (odbc_leader.so): ' \
                  'a Leader that campaigns on its own thread, claims of fires in the fire ledger, ' \
                  'fenced writes, and a Rufus::Scheduler whose every fire runs on one host.'
  s.license = 'MIT'
  s.authors = ['odbc-leader contributors']
  s.required_ruby_version = '>= 3.0'
  s.files = %w[README.md odbc-leader.gemspec lib/odbc_leader.rb examples/rufus] +
            %w[version errors plugin leader runner fence rufus].map { |f| "lib/odbc_leader/#{f}.rb" }
  s.require_paths = ['lib']
  s.add_runtime_dependency 'ffi', '>= 1.15'
  s.add_development_dependency 'minitest', '>= 5'
  s.add_development_dependency 'rufus-scheduler', '>= 3.8'
  s.metadata = { 'rubygems_mfa_required' => 'true' }
end
