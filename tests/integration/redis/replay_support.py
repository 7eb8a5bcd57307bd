"""Running `sluice replay` twice, through the local store and through Redis, and saying where
the two outputs part: the golden MANIFEST's entries, generated traces, and a report of the
first differing lines."""
import collections
import concurrent.futures
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import sluice_binary  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "golden")
JOBS = 4
SHOWN = 5

Entry = collections.namedtuple("Entry", "name trace args")


def manifest():
    """Every MANIFEST line `golden_file trace_file ARGS...` as an Entry (trace: its path)."""
    entries = []
    with open(os.path.join(GOLDEN, "MANIFEST"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                entries.append(Entry(parts[0], os.path.join(GOLDEN, parts[1]), parts[2:]))
    assert entries, "tests/golden/MANIFEST lists no entries"
    return entries


def family(args):
    """The algorithm of the first --limit in `args` (token-bucket, gcra, ...)."""
    return args[args.index("--limit") + 1].split(":", 1)[0]


def replay(args, trace, store=None, timeout=60):
    """`sluice replay ARGS... [--store STORE]` with `trace` (bytes, or a path) on stdin."""
    cmd = [sluice_binary(), "replay", *args]
    if store is not None:
        cmd += ["--store", store]
    if isinstance(trace, bytes):
        return subprocess.run(cmd, input=trace, capture_output=True, timeout=timeout)
    with open(trace, "rb") as f:
        return subprocess.run(cmd, stdin=f, capture_output=True, timeout=timeout)


def first_differences(expected, actual, shown=SHOWN):
    """The first `shown` lines where two outputs differ, as text for a failure message."""
    a, b = expected.split(b"\n"), actual.split(b"\n")
    out = []
    for n in range(max(len(a), len(b))):
        x = a[n] if n < len(a) else b"<none>"
        y = b[n] if n < len(b) else b"<none>"
        if x != y:
            out.append(f"  output line {n + 1}: local {x.decode(errors='replace')!r}"
                       f"  redis {y.decode(errors='replace')!r}")
            if len(out) == shown:
                break
    return "\n".join(out)


def compare(args, trace, store, name=None):
    """Runs the replay locally and through `store`; None if both exit 0 with the same stdout
    and no stderr, else a description of the disagreement."""
    local = replay(args, trace)
    remote = replay(args, trace, store)
    name = name or " ".join(args)
    if local.returncode != 0:
        return f"{name}: the local replay failed ({local.returncode}): " \
               f"{local.stderr.decode(errors='replace').strip()}"
    if remote.returncode != 0 or remote.stderr:
        report = f"{name}: --store {store} exited {remote.returncode}: " \
                 f"{remote.stderr.decode(errors='replace').strip()}"
        if remote.stdout and not local.stdout.startswith(remote.stdout):
            report += "\n" + first_differences(local.stdout, remote.stdout)
        return report
    if remote.stdout != local.stdout:
        return f"{name}: outputs differ\n" + first_differences(local.stdout, remote.stdout)
    return None


def compare_all_by_name(cases, store):
    """compare() for every (name, args, trace) in `cases`, JOBS at a time: {name: result}."""
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        results = pool.map(lambda c: compare(c[1], c[2], store, c[0]), cases)
        return dict(zip((c[0] for c in cases), results))


def compare_all(cases, store):
    """compare() for every (name, args, trace) in `cases`, JOBS at a time; returns the
    disagreements (empty when every case agrees)."""
    return [r for r in compare_all_by_name(cases, store).values() if r is not None]


def long_trace(lines, keys, seed, day_gaps=3, hot=8):
    """A trace of `lines` requests (costs 1..3) over `keys` keys, half of them on `hot` keys
    that run into their limits; a few seconds of dense traffic at a time, separated by
    `day_gaps` gaps of one to three days."""
    rng = random.Random(seed)
    gaps = set(rng.sample(range(1, lines), day_gaps))
    t = 0
    out = []
    for i in range(lines):
        if i in gaps:
            t += rng.randint(86_400, 3 * 86_400) * 1_000_000 + rng.randint(0, 999_999)
        else:
            t += rng.choice((0, 0, rng.randint(1, 400), rng.randint(1, 5000)))
        key = f"hot{rng.randrange(hot)}" if rng.random() < 0.5 else f"u{rng.randrange(keys)}"
        out.append(f"{t},{key},{rng.randint(1, 3)}\n")
    return "".join(out).encode()


class StreamedReplay:
    """`sluice replay ARGS... --store STORE` whose trace the test writes bit by bit (feed()),
    so that it can act on Redis between two stretches of the trace. The replay reads its input
    64 KiB at a time: a stretch is decided once that much more has arrived, or at close()."""

    def __init__(self, args, store, directory):
        self.out_path = os.path.join(str(directory), "replay.stdout")
        self.err_path = os.path.join(str(directory), "replay.stderr")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([sluice_binary(), "replay", *args, "--store", store],
                                         stdin=subprocess.PIPE, stdout=out, stderr=err)
        self.fed = 0

    def feed(self, data):
        """Writes `data`; False if the replay has stopped reading (it exited)."""
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False
        self.fed += len(data)
        return True

    def finish(self, timeout=20):
        """Closes the input and waits; (exit status, stdout, stderr)."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the replay did not end within {timeout}s of its input")
        with open(self.out_path, "rb") as out, open(self.err_path, "rb") as err:
            return self.proc.returncode, out.read(), err.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

