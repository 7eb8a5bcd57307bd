"""Shared fixtures for the CLI tests: the sluice binary under test and a replay runner."""
import os
import re
import subprocess

import pytest


@pytest.fixture(scope="session")
def sluice_bin():
    path = os.environ.get("SLUICE_BIN")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "release", "sluice")
    assert os.access(path, os.X_OK), f"sluice binary not found at {path} (set SLUICE_BIN)"
    return path


@pytest.fixture
def replay(sluice_bin):
    """replay(trace_text, *args) -> CompletedProcess with bytes stdout/stderr."""

    def run(trace, *args):
        data = trace.encode() if isinstance(trace, str) else trace
        return subprocess.run([sluice_bin, "replay", *args], input=data,
                              capture_output=True, timeout=120)

    return run


def parse_decisions(stdout):
    """stdout bytes -> [(t_us, key_bytes, cost, allowed, delay_us, remaining, retry_after_us)].

    Every line must end in a newline and hold exactly the seven contract fields."""
    assert stdout == b"" or stdout.endswith(b"\n"), stdout[-80:]
    rows = []
    for line in stdout.split(b"\n")[:-1]:
        f = line.split(b",")
        assert len(f) == 7, line
        rows.append((int(f[0]), f[1], *(int(x) for x in f[2:])))
    return rows


@pytest.fixture
def decide(replay):
    """decide(trace, *args) -> parsed decisions of a run that must succeed (exit 0, no stderr)."""

    def run(trace, *args):
        p = replay(trace, *args)
        assert p.returncode == 0, p.stderr
        assert p.stderr == b""
        return parse_decisions(p.stdout)

    return run


@pytest.fixture
def allowed(decide):
    """allowed(trace, *args) -> the `allowed` column as a list of 0/1."""
    return lambda trace, *args: [row[3] for row in decide(trace, *args)]


def assert_usage_error(p, names, *problem_patterns):
    """The error contract: exit 2, exactly one stderr line naming `names` (an argument such as
    `--limit`, or `line N` as a whole word; a tuple means any one of them) and matching every
    regex in problem_patterns. Returns the stderr line as text."""
    assert p.returncode == 2, (p.returncode, p.stderr, p.stdout[-200:])
    err = p.stderr.decode("utf-8", errors="replace")
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    alternatives = (names,) if isinstance(names, str) else names
    assert any(re.search(re.escape(n) + r"(?![\w-])", err) for n in alternatives), \
        f"none of {alternatives!r} named in {err!r}"
    for pat in problem_patterns:
        assert re.search(pat, err, re.IGNORECASE), f"{pat!r} not in {err!r}"
    return err


@pytest.fixture
def fails(replay):
    """fails(trace, names, problem_patterns, *args) -> (stderr line, stdout bytes) of a run
    that must end with the error contract (see assert_usage_error)."""

    def run(trace, names, problem_patterns, *args):
        p = replay(trace, *args)
        return assert_usage_error(p, names, *problem_patterns), p.stdout

    return run


def run_measured(sluice_bin, trace, out, *args):
    """Runs `sluice replay` as a fresh child; returns (exit status, its own max RSS in KB)."""
    with open(trace, "rb") as fin, open(out, "wb") as fout:
        p = subprocess.Popen([sluice_bin, "replay", *args], stdin=fin, stdout=fout,
                             stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stderr.close()
    return p.returncode, usage.ru_maxrss
