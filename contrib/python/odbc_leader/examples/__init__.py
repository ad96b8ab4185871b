# SPDX-License-Identifier: MIT
"""Examples of odbc_leader's integrations, runnable with python3 -m."""
