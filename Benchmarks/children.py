"""Child processes with time-stamped output lines, shared by the benchmark and soak scripts.

Every time is time.monotonic(), taken as a line arrives; logs show seconds since T0 (import).
"""

import os
import signal
import subprocess
import threading
import time

T0 = time.monotonic()
_CHILDREN = []  # running children, stopped by stop_all_children() on the way out


class Lines:
    """Reads one pipe in a thread; keeps (monotonic arrival time, line) and logs them."""

    def __init__(self, stream, log_path):
        self.items = []
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self._log_path = log_path
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream):
        with open(self._log_path, "a") as out:
            for raw in iter(stream.readline, b""):
                t = time.monotonic()
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                out.write("%9.3f %s\n" % (t - T0, line))
                out.flush()
                with self.cond:
                    self.items.append((t, line))
                    self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def snapshot(self):
        with self.lock:
            return list(self.items)

    def count(self):
        with self.lock:
            return len(self.items)

    def wait_for(self, predicate, timeout, alive, since=0):
        """Waits until a line (from index `since` on) matches `predicate` (True), or `timeout`
        passes / `alive()` is False (False). `predicate` runs under the lock: no Lines calls in it."""
        deadline = time.monotonic() + timeout
        seen = since
        with self.cond:
            while True:
                for _t, line in self.items[seen:]:
                    if predicate(line):
                        return True
                seen = len(self.items)
                left = deadline - time.monotonic()
                if left <= 0 or not alive():
                    return False
                self.cond.wait(min(left, 0.1))

    def join(self, timeout=2.0):
        self._thread.join(timeout)


class Child:
    def __init__(self, name, cmd, log_dir):
        self.name = name
        self.cmd = cmd
        self.started = time.monotonic()
        # Own session: a Ctrl-C in the terminal reaches only this script, which stops the child.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        _CHILDREN.append(self)
        self.out = Lines(self.proc.stdout, os.path.join(log_dir, name + ".stdout"))
        self.err = Lines(self.proc.stderr, os.path.join(log_dir, name + ".stderr"))
        self.exit = None
        self.exited_at = None
        self.stopping = False     # set before we stop it on purpose

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.poll() is None

    def poll(self):
        if self.exit is None:
            code = self.proc.poll()
            if code is not None:
                self.exit = code
                self.exited_at = time.monotonic()
        return self.exit

    def stop(self, sig=signal.SIGINT, grace=10.0):
        """Sends `sig` (graceful stop), then SIGTERM, then SIGKILL. Returns the exit status and
        the signal that ended it."""
        self.stopping = True
        used = None
        for s, wait in ((sig, grace), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
            if self.poll() is not None:
                break
            used = s
            try:
                self.proc.send_signal(s)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            self.poll()
        self.out.join()
        self.err.join()
        if self in _CHILDREN:
            _CHILDREN.remove(self)
        return self.exit, used

    def stderr_tail(self, n=5):
        return [line for _t, line in self.err.snapshot()[-n:]]


def stop_all_children():
    for child in reversed(list(_CHILDREN)):
        try:
            child.stop(grace=5.0)
        except Exception:  # keep stopping the others
            pass


def describe_exit(code):
    if code is None:
        return "running"
    if code < 0:
        try:
            return "killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "exit %d" % code
