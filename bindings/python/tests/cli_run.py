"""Run `python -m lemonmcp` as a child process, with stdout as a pipe
(run_cli) or on a pseudo-terminal (PtyRun, run_pty: stdin, stdout and stderr
are all the pty's slave side, as in an interactive shell). Every wait is
bounded; the child is killed and reaped whatever happens."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from typing import Any, Dict, List, Optional, Sequence

from conftest import PKG_ROOT, PROC_S, env_for_child


def run_cli(
    args: Sequence[str],
    *,
    stdin: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    text: bool = True,
    timeout: float = PROC_S,
) -> "subprocess.CompletedProcess[Any]":
    """`python -m lemonmcp ARGS` with stdout and stderr as pipes."""
    e = env_for_child()
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "lemonmcp", *args],
        capture_output=True,
        text=text,
        timeout=timeout,
        env=e,
        input=stdin if text or stdin is None else stdin.encode(),
        cwd=PKG_ROOT,
    )


def _controlling_tty() -> None:
    os.setsid()
    import fcntl

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyRun:
    """One command-line run on a pty. ``expect`` waits for text, ``send``
    types a line, ``finish`` waits for the exit status."""

    def __init__(self, args: Sequence[str], columns: int = 80, env_extra: Optional[dict] = None) -> None:
        self.master, slave = pty.openpty()
        # A fixed size, so that wrapping on the terminal is predictable.
        import fcntl
        import struct

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        env = env_for_child()
        env["COLUMNS"] = str(columns)
        env.update(env_extra or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lemonmcp", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=PKG_ROOT,
            # A session of its own with the pty as its controlling terminal,
            # so that ^C typed on it is a SIGINT, as in a shell.
            preexec_fn=_controlling_tty,
            close_fds=True,
        )
        os.close(slave)
        self.buf = b""
        self.seen = 0  # how far expect() has consumed

    def _read(self, timeout: float) -> bool:
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the child side is closed
            return False
        if not chunk:
            return False
        self.buf += chunk
        return True

    @property
    def text(self) -> str:
        # The terminal turns "\n" into "\r\n" on output.
        return self.buf.decode("utf-8", "replace").replace("\r\n", "\n")

    def expect(self, needle: str, timeout: float = 20.0) -> str:
        """Wait until needle appears after what was already consumed; return
        the text up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            t = self.text
            i = t.find(needle, self.seen)
            if i >= 0:
                out = t[self.seen : i + len(needle)]
                self.seen = i + len(needle)
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} not seen in time; output so far:\n{t}")
            if not self._read(min(left, 0.2)) and self.proc.poll() is not None:
                while self._read(0.05):
                    pass
                if self.text.find(needle, self.seen) < 0:
                    raise AssertionError(f"{needle!r} not seen before exit; output:\n{self.text}")

    def send(self, line: str) -> None:
        os.write(self.master, line.encode("utf-8") + b"\r")

    def interrupt(self) -> None:
        """Type ^C (a SIGINT to the foreground process group)."""
        os.write(self.master, b"\x03")

    def end_of_input(self) -> None:
        """Type ^D at the start of a line (end of input)."""
        os.write(self.master, b"\x04")

    def finish(self, timeout: float = PROC_S) -> int:
        deadline = time.monotonic() + timeout
        try:
            while self.proc.poll() is None and time.monotonic() < deadline:
                self._read(0.1)
            while self._read(0.05):
                pass
            if self.proc.poll() is None:
                raise AssertionError(f"the command line did not exit; output:\n{self.text}")
            return self.proc.returncode
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)
        try:
            os.close(self.master)
        except OSError:
            pass


def run_pty(args: Sequence[str], columns: int = 80, answers: Optional[List[str]] = None) -> "tuple[int, str]":
    """Run to the end on a pty (no interaction); (status, output)."""
    r = PtyRun(args, columns=columns)
    for a in answers or []:
        r.send(a)
    status = r.finish()
    return status, r.text
