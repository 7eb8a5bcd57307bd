#!/usr/bin/python3
"""Independent reference models of the `sluice replay` algorithms whose peers cannot run here.

    /usr/bin/python3 tools/refmodels/models.py --limit SPEC [--mode reject|wait] [--max-wait D] < trace.csv

Written from docs/references.md and the algorithm table of DESIGN.md only (not from
Sluice's sources), so that a disagreement with `sluice replay` points at one side or the
other. Integer arithmetic wherever the reference is integer; floats only where the
reference itself computes in IEEE doubles (redis-cell's emission interval, Sentinel's
count and cost), reproduced with the same operation order.

| ALGORITHM       | reference modelled                                                 |
|-----------------|--------------------------------------------------------------------|
| leaky-bucket    | nginx 1.22 limit_req, single zone (account=1), references.md §1     |
| gcra            | redis-cell rate_limit, references.md §2; wait mode per DESIGN.md    |
| queue           | Sentinel ThrottlingController, references.md §3                     |
| fixed-window    | DESIGN.md table formula                                             |
| sliding-log     | DESIGN.md table formula                                             |
| sliding-window  | DESIGN.md table formula, compared exactly (no rounding)            |

Each model has `decide(t_us, key, cost) -> (allowed, delay_us, remaining, retry_after_us)`;
-1 marks a `remaining`/`retry_after_us` the model does not compute (both are informative).
"""
import argparse
import collections
import math
import os
import sys
from fractions import Fraction

# The SPEC grammar (durations, rates, param=value lists) is shared with the peer generator.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "refgen"))
from gen_goldens import UNITS_NS as NS, duration_ns, parse_spec, rate  # noqa: E402

JAVA_LONG_MAX = 2**63 - 1
JAVA_LONG_MIN = -2**63


def ceil_div(a, b):
    return -(-a // b)


def trunc_div(a, b):
    """Integer division truncating toward zero (C, Rust)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def java_round(x):
    """Java Math.round(double): nearest long, ties toward +inf, saturating; exact (no x+0.5 error)."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return JAVA_LONG_MAX if x > 0 else JAVA_LONG_MIN
    return max(JAVA_LONG_MIN, min(JAVA_LONG_MAX, math.floor(Fraction(x) + Fraction(1, 2))))


# --------------------------------------------------------------------------- leaky-bucket
class LeakyBucket:
    """nginx limit_req (references.md §1), one zone, so `account` is always 1.

    rate in milli-requests/s truncated (100/m -> 1666); now = t cut to whole ms; a new key's
    node stores excess 0 and is never checked against burst (whatever the cost); otherwise
    excess = max(0, excess - rate*ms//1000 + 1000*cost), reject (nothing written) when
    excess > burst, else store it and `if (ms) last = now`. delay = (excess - delay)*1000//rate ms
    when excess > delay, else 0. The mode does not apply (leaky-bucket delays by its own params).
    """

    def __init__(self, kv, mode, max_wait_ns):
        count, period_ns = rate(kv["rate"])
        self.rate = count * 1000 * NS["s"] // period_ns         # milli-requests per second
        if self.rate <= 0:
            raise ValueError("rate below 1 milli-request per second")
        self.burst = int(kv.get("burst", "0")) * 1000
        if kv.get("nodelay") == "1":
            self.delay = (2**63 - 1) // 1000 * 1000              # NGX_MAX_INT_T_VALUE / 1000 * 1000
        else:
            self.delay = int(kv.get("delay", "0")) * 1000
        self.nodes = {}                                          # key -> [excess, last_ms]

    def decide(self, t_us, key, cost):
        now = t_us // 1000
        node = self.nodes.get(key)
        if node is None:
            self.nodes[key] = [0, now]
            excess = 0
        else:
            ms = now - node[1]                                   # trace time never decreases
            excess = max(0, node[0] - self.rate * ms // 1000 + 1000 * cost)
            if excess > self.burst:
                return 0, 0, -1, -1
            node[0] = excess
            if ms != 0:
                node[1] = now
        if excess <= self.delay:
            return 1, 0, -1, 0
        return 1, (excess - self.delay) * 1000 // self.rate * 1000, -1, 0


# --------------------------------------------------------------------------- gcra
class Gcra:
    """redis-cell (references.md §2) with virtual ns time and no key expiry.

    interval = trunc(float(period_ns) / count); DVT = interval*(burst+1);
    new_tat = max(now, tat) + interval*cost; reject mode: limited iff now < new_tat - DVT
    (nothing written). Wait mode (DESIGN.md): a reservation, delay = max(0, new_tat - DVT - now),
    allowed iff cost <= burst+1 and delay <= max-wait; delay_us rounded up.
    """

    def __init__(self, kv, mode, max_wait_ns):
        count, period_ns = rate(kv["rate"])
        burst = int(kv["burst"])
        self.interval = int(float(period_ns) / float(count))
        self.dvt = self.interval * (burst + 1)
        self.wait = mode == "wait"
        self.max_wait_ns = max_wait_ns
        self.tat = {}

    def _remaining(self, ttl):
        nxt = self.dvt - ttl
        if nxt > -self.interval:
            return trunc_div(trunc_div(nxt, 1000), trunc_div(self.interval, 1000))
        return 0

    def decide(self, t_us, key, cost):
        now = t_us * 1000
        tat = self.tat.get(key, now)
        increment = self.interval * cost
        new_tat = (now if now > tat else tat) + increment
        diff = now - (new_tat - self.dvt)
        if self.wait:
            delay = max(0, -diff)
            ok = increment <= self.dvt and (self.max_wait_ns is None or delay <= self.max_wait_ns)
        else:
            delay = 0
            ok = diff >= 0
        if not ok:
            retry = ceil_div(-diff, 1000) if increment <= self.dvt else -1
            return 0, 0, self._remaining(tat - now), retry
        self.tat[key] = new_tat
        return 1, ceil_div(delay, 1000), self._remaining(new_tat - now), 0


# --------------------------------------------------------------------------- queue
class Queue:
    """Sentinel ThrottlingController (references.md §3), statDurationMs = 1000.

    count = N / period_seconds (double); ns clock when round(count) == 0, 1000 % round(count)
    != 0 or count/1000 > 1, else the ms clock (t cut to whole ms). A key's first request
    passes at once (latest := now): Sentinel's latestPassedTime starts at -1 on an epoch
    clock, so its users never see that request wait, whatever the trace's virtual time.
    cost = Math.round(1000[*1e6] * acquire / count). Pass at once when
    cost + latest <= now (latest := now); else wait = cost + latest - now, reject when
    wait > max-wait, else latest += cost and the request waits latest - now.
    The trace's one virtual time serves every clock read. The mode does not apply.
    """

    def __init__(self, kv, mode, max_wait_ns):
        count, period_ns = rate(kv["rate"])
        self.count = float(count * NS["s"]) / float(period_ns)  # one rounding, = N / period_s
        r = java_round(self.count)
        self.use_ns = r == 0 or 1000 % r != 0 or self.count / 1000 > 1
        self.max_wait_ns = duration_ns(kv.get("max-wait", "500ms"))
        self.latest = {}

    def decide(self, t_us, key, cost):
        if self.use_ns:
            now = t_us * 1000
            unit_ns = 1
            c = java_round(1.0 * 1_000_000 * 1000 * cost / self.count)
        else:
            now = t_us // 1000
            unit_ns = 1_000_000
            c = java_round(1.0 * 1000 * cost / self.count)
        latest = self.latest.get(key)
        if latest is None or c + latest <= now:
            self.latest[key] = now
            return 1, 0, -1, 0
        wait = c + latest - now
        if wait * unit_ns > self.max_wait_ns:
            return 0, 0, -1, ceil_div(wait * unit_ns - self.max_wait_ns, 1000)
        self.latest[key] = latest + c
        return 1, ceil_div(wait * unit_ns, 1000), -1, 0


# --------------------------------------------------------------------------- windows
class FixedWindow:
    """Windows [k*window, (k+1)*window) from t=0; allowed iff count + cost <= limit."""

    def __init__(self, kv, mode, max_wait_ns):
        self.limit = int(kv["limit"])
        self.window = duration_ns(kv["window"])
        self.state = {}                                          # key -> [window index, count]

    def decide(self, t_us, key, cost):
        now = t_us * 1000
        w = now // self.window
        st = self.state.setdefault(key, [w, 0])
        if st[0] != w:
            st[:] = [w, 0]
        if st[1] + cost > self.limit:
            retry = ceil_div((w + 1) * self.window - now, 1000) if cost <= self.limit else -1
            return 0, 0, self.limit - st[1], retry
        st[1] += cost
        return 1, 0, self.limit - st[1], 0


class SlidingLog:
    """Allowed iff the cost of allowed requests in (t - window, t] plus cost <= limit."""

    def __init__(self, kv, mode, max_wait_ns):
        self.limit = int(kv["limit"])
        self.window = duration_ns(kv["window"])
        self.logs = collections.defaultdict(collections.deque)   # key -> deque[(t_ns, cost)]

    def decide(self, t_us, key, cost):
        now = t_us * 1000
        log = self.logs[key]
        while log and log[0][0] <= now - self.window:
            log.popleft()
        used = sum(c for _, c in log)
        if used + cost > self.limit:
            return 0, 0, self.limit - used, -1
        log.append((now, cost))
        return 1, 0, self.limit - used - cost, 0


class SlidingWindow:
    """prev*(window - t mod window)/window + curr + cost <= limit, compared exactly."""

    def __init__(self, kv, mode, max_wait_ns):
        self.limit = int(kv["limit"])
        self.window = duration_ns(kv["window"])
        self.state = {}                                          # key -> [window index, curr, prev]

    def decide(self, t_us, key, cost):
        now = t_us * 1000
        w, into = divmod(now, self.window)
        st = self.state.setdefault(key, [w, 0, 0])
        if st[0] != w:
            st[:] = [w, 0, st[1] if st[0] == w - 1 else 0]
        weighted = st[2] * (self.window - into)                  # prev's share, times window
        if weighted + (st[1] + cost) * self.window > self.limit * self.window:
            return 0, 0, -1, -1
        st[1] += cost
        return 1, 0, -1, 0


MODELS = {"leaky-bucket": LeakyBucket, "gcra": Gcra, "queue": Queue,
          "fixed-window": FixedWindow, "sliding-log": SlidingLog, "sliding-window": SlidingWindow}


def make(spec, mode="reject", max_wait_ns=None):
    algo, kv = parse_spec(spec)
    return MODELS[algo](kv, mode, max_wait_ns)


def replay(model, lines):
    """Yields the `sluice replay` output line (bytes, no newline) for each request line."""
    for raw in lines:
        line = raw.rstrip(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or line.startswith(b"#"):
            continue
        fields = line.split(b",")
        t, key = int(fields[0]), fields[1]
        cost = int(fields[2]) if len(fields) > 2 else 1
        allowed, delay, remaining, retry = model.decide(t, key, cost)
        yield b"%d,%s,%d,%d,%d,%d,%d" % (t, key, cost, allowed, delay, remaining, retry)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", required=True)
    ap.add_argument("--mode", default="reject", choices=["reject", "wait"])
    ap.add_argument("--max-wait")
    a = ap.parse_args()
    model = make(a.limit, a.mode, duration_ns(a.max_wait) if a.max_wait else None)
    out = sys.stdout.buffer
    for line in replay(model, sys.stdin.buffer):
        out.write(line + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
