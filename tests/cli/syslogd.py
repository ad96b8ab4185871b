# SPDX-License-Identifier: MIT
"""syslogd.py: a one-shot syslog receiver for tests/cli/syslog.test.

    python3 syslogd.py SOCKET OUT CMD [ARGS...]

Binds a Unix datagram socket at SOCKET (the path syslog(3) writes to,
normally /dev/log, so run it in a private mount namespace), runs CMD with
this process's stdin, stdout and stderr, then writes to OUT the line
"pid N" (CMD's pid) followed by every datagram received, one per line
(newlines inside a message written as \\n), and exits with CMD's status.
syslog(3) sends each message before it returns, so once CMD has exited
all of its messages are queued on the socket.
"""

import os
import socket
import subprocess
import sys


def main():
    path, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    os.chmod(path, 0o666)
    proc = subprocess.Popen(cmd)
    child = proc.wait()
    sock.setblocking(False)
    with open(out, "w") as f:
        f.write("pid %d\n" % proc.pid)
        while True:
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                break
            text = data.decode("utf-8", errors="replace").rstrip("\0")
            f.write(text.replace("\n", "\\n") + "\n")
    sock.close()
    os.unlink(path)
    sys.exit(child if child >= 0 else 128 - child)


if __name__ == "__main__":
    main()
