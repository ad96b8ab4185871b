# SPDX-License-Identifier: MIT
# frozen_string_literal: true

# lib/odbc_leader/version.rb: the gem's version, the project's (configure.ac
# AC_INIT, build-aux/version.sh); tests/contrib/ruby.test checks they agree.
module OdbcLeader
  VERSION = '0.1.0'
end
