# SPDX-License-Identifier: MIT
# java-lib.sh: what the Java tests share, sourced after
# tests/integration/lib.sh. Sets QUARTZ, the example wrapper that make
# generates in the build tree (contrib/java/examples/quartz), JAVA_JARS, the
# directory of Debian's jars it uses, and JAVA_TEST_CP, the classpath of
# the JUnit tests (make check compiles them into contrib/java/test-classes);
# or skips (fails with OL_REQUIRE_CONTRIB) without the JDK and the jars.
command -v java >/dev/null 2>&1 ||
    ol_contrib_need "no java: install openjdk-17-jdk-headless (./dev does)"
QUARTZ=$(cd "${top_builddir:-.}" && pwd)/contrib/java/examples/quartz
[ -x "$QUARTZ" ] ||
    ol_contrib_need "no $QUARTZ: configure found no JDK or no Quartz/JNA jars"
JAVA_JARS=$(sed -n "s|^jars='\(.*\)'$|\1|p" "$QUARTZ")
java_build=$(cd "${top_builddir:-.}/contrib/java" && pwd)
[ -d "$java_build/test-classes/org" ] ||
    ol_fail "no $java_build/test-classes (make check builds them)"
JAVA_TEST_CP="$java_build/classes:$java_build/test-classes:$JAVA_JARS/jna.jar"
JAVA_TEST_CP="$JAVA_TEST_CP:$JAVA_JARS/quartz2.jar:$JAVA_JARS/slf4j-api.jar"
JAVA_TEST_CP="$JAVA_TEST_CP:$JAVA_JARS/slf4j-nop.jar"
