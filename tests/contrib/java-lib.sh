# SPDX-License-Identifier: MIT
# java-lib.sh: what the Java integration's fire tests share, sourced after
# tests/contrib/exec-fires.sh. Sets QUARTZ, the example wrapper that make
# generates in the build tree (contrib/java/examples/quartz), or skips
# (fails with OL_REQUIRE_CONTRIB) without the JDK and Debian's jars.
command -v java >/dev/null 2>&1 ||
    ol_contrib_need "no java: install openjdk-17-jdk-headless (./dev does)"
QUARTZ=$(cd "${top_builddir:-.}" && pwd)/contrib/java/examples/quartz
[ -x "$QUARTZ" ] ||
    ol_contrib_need "no $QUARTZ: configure found no JDK or no Quartz/JNA jars"
