"""Progress lines of long runs, on stderr so tables on stdout stay clean:

  experiments: [3/7] query (E3), elapsed 4m12s, about 20m left

The time left is the typical duration of the steps not yet done, scaled by
how this run compares with the typical durations of the steps done (a
loaded machine is slower at every step), or without typical durations the
mean of the steps done times the steps left.
"""
import sys
import threading
import time


def duration(seconds):
    """'45s', '4m12s' or '1h05m'."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    def __init__(self, tool, total, typical=None, stream=None):
        """typical: the typical seconds of each step, in the order run."""
        self.tool, self.total, self.done = tool, total, 0
        self.typical = typical
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.lock = threading.Lock()  # end() may be called from worker threads

    def elapsed(self):
        return time.monotonic() - self.started

    def left(self):
        """Estimated seconds left, or None before anything can be said."""
        elapsed = self.elapsed()
        if self.typical:
            done, rest = sum(self.typical[:self.done]), sum(self.typical[self.done:])
            return rest * (elapsed / done if done > 0 else 1.0)
        if self.done == 0:
            return None
        return elapsed / self.done * (self.total - self.done)

    def _print(self, number, what):
        left = self.left()
        tail = f", about {duration(left)} left" if left is not None and self.done < self.total \
            else ""
        print(f"{self.tool}: [{number}/{self.total}] {what}, elapsed "
              f"{duration(self.elapsed())}{tail}", file=self.stream, flush=True)

    def begin(self, what):
        """The line of a step about to run; advance() when it has."""
        self._print(self.done + 1, what)

    def advance(self):
        self.done += 1

    def end(self, what):
        """The line of a step just done (steps that run side by side)."""
        with self.lock:
            self.done += 1
            self._print(self.done, what)
