"""wrk, the HTTP load generator, driven by the integration tests through wrk_tally.lua, which
counts every response by status: the only way to know that a run of hundreds of thousands of
requests had no 5xx and no spurious 429 (wrk alone reports only "non-2xx or 3xx").

    run = WrkRun(url, seconds=10, connections=16).result()
    run.statuses == {200: run.requests}; run.errors; run.latency_max
"""
import os
import re
import signal
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


class WrkRun:
    """wrk with wrk_tally.lua, started at once; result() waits for it and parses its report:
    statuses {code: count}, errors {kind: count}, latency_max and latency_p99 (seconds)."""

    def __init__(self, url, seconds, connections=16, close_every=0, stop_after=0):
        self.proc = subprocess.Popen(
            ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s",
             os.path.join(HERE, "wrk_tally.lua"), url, "--", str(close_every), str(stop_after)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def result(self, timeout=180):
        out = self.proc.communicate(timeout=timeout)[0]
        assert self.proc.returncode == 0, out
        self.report = out
        self.statuses = {int(c): int(n) for c, n in re.findall(r"^status (\d+) (\d+)$", out, re.M)}
        errors = re.search(r"^errors connect (\d+) read (\d+) write (\d+) timeout (\d+)$", out,
                           re.M)
        self.errors = dict(zip(("connect", "read", "write", "timeout"),
                               map(int, errors.groups())))
        latency = re.search(r"^latency max_us (\d+) p99_us (\d+)$", out, re.M)
        self.latency_max, self.latency_p99 = (int(v) / 1e6 for v in latency.groups())
        self.requests = sum(self.statuses.values())
        return self

    def stop(self):
        """Ends the run early (wrk reports what it did so far)."""
        self.proc.send_signal(signal.SIGINT)
