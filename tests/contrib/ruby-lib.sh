# SPDX-License-Identifier: MIT
# ruby-lib.sh: what the Ruby integration's fire tests share, sourced after
# tests/contrib/exec-fires.sh. Sets RUFUS, the example
# (contrib/ruby/examples/rufus, run from the source tree), or skips (fails
# with OL_REQUIRE_CONTRIB) without ruby, ruby-ffi or rufus-scheduler.
command -v ruby >/dev/null 2>&1 ||
    ol_contrib_need "no ruby: install ruby (./dev does)"
ruby -e 'require "ffi"; require "rufus-scheduler"' 2>/dev/null ||
    ol_contrib_need "ruby lacks ffi or rufus-scheduler: install ruby-ffi and" \
        "ruby-rufus-scheduler (./dev does)"
RUFUS=$(cd "${srcdir:-.}/contrib/ruby/examples" && pwd)/rufus
