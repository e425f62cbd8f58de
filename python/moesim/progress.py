"""The default progress display of ``search``: a bar in a notebook, a redrawn line on a terminal, nothing
otherwise (pipes, CI logs, tests). Like the command line's, it appears only once the search has run a second."""

import os
import sys
import time


def _in_notebook():
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


class Bar:
    """A callable ``(done, total)`` drawing ``search  1200/5000  24.0%  ETA 0:03``; ``close()`` ends it."""

    def __init__(self, label="search", quiet_s=1.0, redraw_s=0.1, stream=None):
        self.label, self.quiet_s, self.redraw_s = label, quiet_s, redraw_s
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.next_draw = self.start + quiet_s
        self.notebook = _in_notebook()
        self.handle = None
        self.drawn = False
        self.last = None

    @classmethod
    def default(cls, label="search"):
        """A bar where one can be seen (notebook or terminal), else None. MOESIM_PROGRESS=0 turns it off and =1
        draws it anywhere, as for the command line's bars (core/progress.hpp)."""
        setting = os.environ.get("MOESIM_PROGRESS")
        if setting == "0":
            return None
        notebook = _in_notebook()
        terminal = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        return cls(label) if notebook or terminal or setting == "1" else None

    def line(self, done, total):
        elapsed = time.monotonic() - self.start
        pct = 100.0 * done / total if total else 100.0
        eta = (total - done) * elapsed / done if done else 0.0
        return f"{self.label}  {done}/{total}  {pct:.1f}%  ETA {int(eta) // 60}:{int(eta) % 60:02d}"

    def __call__(self, done, total):
        self.last = (done, total)
        now = time.monotonic()
        if now < self.next_draw:
            return
        self.next_draw = now + self.redraw_s
        self._draw(self.line(done, total))

    def _draw(self, text):
        self.drawn = True
        if self.notebook:
            from IPython.display import display

            if self.handle is None:
                self.handle = display({"text/plain": text}, raw=True, display_id=True)
            else:
                self.handle.update({"text/plain": text}, raw=True)
        else:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()

    def close(self):
        if self.drawn and self.last:
            self._draw(self.line(*self.last))
            if not self.notebook:
                self.stream.write("\n")
                self.stream.flush()
