"""Examples of odbc_leader's integrations, runnable with python3 -m."""
