"""Ending the test's own server and worker processes without leaking their pipes.

``Popen.wait`` leaves ``proc.stdout`` open; the pipe was then closed by the garbage collector in
whatever test ran next, as an "unclosed file" ResourceWarning blamed on that test.
"""

from __future__ import annotations

import signal
import subprocess
import threading


def finish(proc: subprocess.Popen[str], sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
    """Send ``sig`` to ``proc`` if it still runs, wait (killing it after ``timeout`` s), close its pipes.

    Returns the exit status.  A test's reader thread may still be blocked in ``proc.stdout.read()``
    until the pipe's last writer is gone; the pipes are closed by a helper thread (a close waits for
    that read), joined for a few seconds, so that a straggling grandchild cannot hang the test.
    """
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close() -> None:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()

    closer = threading.Thread(target=close, daemon=True)
    closer.start()
    closer.join(timeout=5)
    return proc.returncode
