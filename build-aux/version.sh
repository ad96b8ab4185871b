#!/bin/sh
# SPDX-License-Identifier: MIT
# version.sh: prints the version that ODBC_LEADER_VERSION in
# src/odbc_leader.h names, without a newline; configure.ac's AC_INIT takes
# it from here, so the public header is the version's one home.
# Usage: build-aux/version.sh [SRCDIR]
sed -n 's/^#define ODBC_LEADER_VERSION "\(.*\)"$/\1/p' \
    "${1:-.}/src/odbc_leader.h" | tr -d '\n'
