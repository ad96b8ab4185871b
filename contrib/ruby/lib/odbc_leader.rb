# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader.rb: the odbc-leader gem: leader election and exactly-once
# scheduled fires for Ruby, on your SQL database through ODBC, over
# odbc-leader's plugin (odbc_leader.so) with ruby-ffi. This file loads the
# binding (Plugin, Instance), Leader, the errors and Fence; the
# rufus-scheduler integration is `require 'odbc_leader/rufus'` (it needs the
# rufus-scheduler gem). docs/ruby.md is the guide.
require_relative 'odbc_leader/version'
require_relative 'odbc_leader/errors'
require_relative 'odbc_leader/plugin'
require_relative 'odbc_leader/leader'
require_relative 'odbc_leader/runner'
require_relative 'odbc_leader/fence'
