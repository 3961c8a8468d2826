#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal and answers one question the way a user would.

    answer-on-pty.py --question TEXT --answer KEYS [--timeout SECONDS] -- COMMAND [ARGS...]

Everything the command writes is copied to stdout. When TEXT first appears in that output
(ANSI sequences removed), KEYS and then Enter are typed. Exit status: the command's own;
3 when it ended without TEXT ever appearing; 124 when it outlived the timeout (it is killed).
Used by scripts/azd-e2e.sh for `azd down` without --force.
"""

import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--question", required=True)
    parser.add_argument("--answer", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")

    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    # A real terminal has a size; prompt libraries lay out their questions by it.
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))

    question = args.question.encode()
    seen = b""
    answered = False
    deadline = time.monotonic() + args.timeout
    while True:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            print(f"\nanswer-on-pty: killed after {args.timeout:.0f} s", file=sys.stderr)
            return 124
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the command closed the terminal (it exited)
            break
        if not data:
            break
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        if not answered:
            seen = (seen + data)[-65536:]
            if question in ANSI.sub(b"", seen).replace(b"\r", b""):
                time.sleep(0.2)  # let the prompt finish drawing before typing
                os.write(fd, args.answer.encode() + b"\r")
                answered = True
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if not answered:
        print(f"\nanswer-on-pty: the question {args.question!r} never appeared", file=sys.stderr)
        return 3
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
