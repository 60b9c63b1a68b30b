"""Runs a command on a pseudo-terminal (stdin, stdout and stderr), as a person at a terminal would.

Usage: drive.py STEPS_JSON DEADLINE_SECONDS -- COMMAND [ARG...]

STEPS_JSON is a list of [expected, typed] pairs: wait until the output holds `expected` (counted
from where the previous step matched) and the terminal's echo is off (the command is reading a
password), then type `typed`. A third element, "echo", types once `expected` is there whatever
the echo (a question answered in plain sight, read as a line: typed early, it waits in the
terminal's line buffer). Waiting for the echo to be off, read from the terminal's settings,
makes the test independent of timing: what is typed can never be echoed because it came early.

Prints one JSON object: {"code": exit code, "output": all the command wrote (UTF-8, undecodable
bytes replaced), "echo_after": whether echo was on again once the command ended}. Exits 3 when a
step or the command's end does not come before the deadline (and kills the command).
"""

import json
import os
import pty
import select
import signal
import sys
import termios
import time


def main():
    steps = json.loads(sys.argv[1])
    deadline = time.monotonic() + float(sys.argv[2])
    assert sys.argv[3] == "--"
    argv = sys.argv[4:]

    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)

    output = bytearray()
    ended = False

    def fail(why):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"timeout": why, "output": output.decode("utf-8", "replace")}))
        sys.exit(3)

    def read(timeout):
        """Reads what is there; False once the command closed the terminal."""
        nonlocal ended
        if ended:
            return False
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: every end of the terminal's slave side is closed
                data = b""
            if not data:
                ended = True
                return False
            output.extend(data)
        return True

    def echo_on():
        # On Linux the master side reports the terminal's (slave side's) settings.
        return bool(termios.tcgetattr(fd)[3] & termios.ECHO)

    seen = 0
    for step in steps:
        expected, typed = step[0], step[1]
        any_echo = len(step) > 2 and step[2] == "echo"
        want = expected.encode()
        while True:
            at = output.find(want, seen)
            if at >= 0 and (any_echo or not echo_on()):
                seen = at + len(want)
                break
            if time.monotonic() > deadline:
                fail("waiting for %r with the echo off" % expected)
            if not read(0.02) and at < 0:
                fail("the command ended before %r" % expected)
        os.write(fd, typed.encode())

    while read(0.1):
        if time.monotonic() > deadline:
            fail("waiting for the command to end")
    echo_after = echo_on()
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    code = os.waitstatus_to_exitcode(status)
    sys.stdout.write(
        json.dumps(
            {
                "code": code,
                "output": output.decode("utf-8", "replace"),
                "echo_after": echo_after,
            }
        )
    )


main()
