"""Every `sluice simulate` error: exit status 2 and exactly one stderr line naming the argument
(`--limit`, `--bucket`, ...) or the scenario's `FILE:LINE`, and the problem, as replay does."""
import os

import pytest

from conftest import assert_usage_error
from simulate_support import simulate

GOOD = """\
duration: 2s
sources:
  - name: a
    shape: steady
    rate: 5/s
"""


def fails(sluice_bin, names, patterns, *args, cwd=None):
    p = simulate(sluice_bin, *args, cwd=cwd)
    p.stderr, p.stdout = p.stderr.encode(), p.stdout.encode()
    line = assert_usage_error(p, names, *patterns)
    assert line.startswith("sluice simulate: "), line
    assert p.stdout == b"", p.stdout
    return line


@pytest.mark.parametrize("spec, patterns", [
    ("foo:rate=1/s", ["foo", "algorithm"]),
    ("token-bucket:rate=1/s", ["burst", "missing|required"]),
    ("token-bucket:rate=0/s,burst=1", ["rate"]),
    ("concurrency:limit=3", ["concurrency", "cannot be replayed"]),
])
def test_a_bad_limit_spec_names_the_limit(sluice_bin, spec, patterns):
    fails(sluice_bin, "--limit", patterns, "--scenario", "steady", "--limit", spec)


def test_a_window_in_wait_mode_is_refused_whether_given_or_suggested(sluice_bin):
    fails(sluice_bin, "--limit", ["fixed-window", "reject mode only"], "--scenario", "steady",
          "--mode", "wait", "--limit", "fixed-window:limit=1,window=1s")
    # The boundary scenario's own first limit is a fixed window, on its line 4.
    fails(sluice_bin, "scenario boundary:4", ["fixed-window", "reject mode only"],
          "--scenario", "boundary", "--mode", "wait")


def test_a_bad_suggested_limit_in_a_file_names_its_line(sluice_bin, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("limits:\n  - token-bucket:rate=1/s,burst=2\n  - gcra:rate=1/s\n" +
                    GOOD.replace("duration: 2s\n", ""))
    fails(sluice_bin, f"{path}:3", ["gcra", "burst"], "--scenario", str(path))


BAD_FILES = [
    # (id, scenario text, line named, patterns)
    ("yaml-syntax", "sources: [\n  {name: a\n", 3, ["YAML"]),
    ("not-a-map", "- a\n- b\n", 1, ["map"]),
    ("no-sources", "duration: 10s\n", 1, ["sources"]),
    ("empty-sources", "sources: []\n", 1, ["sources"]),
    ("unknown-top-field", "sorces: []\n", 1, ["unknown field 'sorces'", "accepted"]),
    ("field-twice", "duration: 1s\nduration: 2s\n" + GOOD.replace("duration: 2s\n", ""), 2,
     ["duration", "twice"]),
    ("bad-duration", GOOD.replace("duration: 2s", "duration: 2"), 1, ["duration", "unit"]),
    ("zero-duration", GOOD.replace("duration: 2s", "duration: 0s"), 1, ["duration", "more than 0"]),
    ("bad-bucket", "bucket: soon\n" + GOOD, 1, ["bucket"]),
    ("source-not-a-map", "sources:\n  - steady\n", 2, ["item 1", "map"]),
    ("no-shape", "sources:\n  - name: a\n    rate: 1/s\n", 2, ["shape"]),
    ("unknown-shape", GOOD.replace("shape: steady", "shape: wavy"), 4,
     ["wavy", "steady, poisson, burst"]),
    ("field-of-another-shape", GOOD + "    count: 3\n", 6, ["count", "does not apply|unknown"]),
    ("bad-rate", GOOD.replace("rate: 5/s", "rate: 5"), 5, ["rate"]),
    ("missing-rate", GOOD.replace("    rate: 5/s\n", ""), 3, ["rate", "required"]),
    ("burst-without-count", "sources:\n  - shape: burst\n    at: 1s\n", 2, ["count", "required"]),
    ("boundary-gap-past-at", "sources:\n  - shape: boundary\n    count: 2\n    at: 1ms\n"
     "    gap: 2ms\n", 2, ["gap"]),
    ("count-zero", "sources:\n  - shape: burst\n    count: 0\n", 3, ["count", "outside"]),
    ("too-many-keys", GOOD + "    keys: 1000001\n", 6, ["keys", "1000000"]),
    ("negative-cost", GOOD + "    cost: -1\n", 6, ["cost"]),
    ("end-before-start", GOOD + "    start: 2s\n    end: 1s\n", 3, ["end", "start"]),
    ("key-with-comma", GOOD + "    key: a,b\n", 6, ["key", "comma"]),
    ("diurnal-low-above-high", "sources:\n  - shape: diurnal\n    low: 9/s\n    high: 3/s\n", 2,
     ["low", "high"]),
    ("same-name-twice", GOOD + "  - name: a\n    shape: poisson\n    rate: 1/s\n", 6,
     ["'a'", "twice"]),
    ("too-many-sources", "sources:\n" + "".join(
        f"  - {{name: s{i}, shape: steady, rate: 1/s}}\n" for i in range(33)), 2, ["33", "32"]),
    ("limits-not-a-list", "limits: token-bucket:rate=1/s,burst=1\n" + GOOD, 1, ["limits"]),
    ("description-a-map", "description: {a: 1}\n" + GOOD, 1, ["description"]),
]


@pytest.mark.parametrize("text, line, patterns", [b[1:] for b in BAD_FILES],
                         ids=[b[0] for b in BAD_FILES])
def test_a_bad_scenario_file_names_the_file_and_line(sluice_bin, tmp_path, text, line, patterns):
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    fails(sluice_bin, f"{path}:{line}", patterns, "--scenario", str(path))


def test_a_scenario_file_over_a_mebibyte_is_refused_unread(sluice_bin, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(GOOD + "#" * (1 << 20) + "\n")
    fails(sluice_bin, "--scenario", ["larger than 1 MiB"], "--scenario", str(path))


def test_deeply_nested_yaml_is_refused_without_a_crash(sluice_bin, tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 100000 + "\n")
    # yaml-cpp marks where its parser stands when it gives up: the end of the one line.
    fails(sluice_bin, (f"{path}:1", f"{path}:2"), ["YAML", "nested", "levels"], "--scenario",
          str(path))


def test_an_unknown_scenario_names_the_built_ins_or_the_missing_file(sluice_bin, tmp_path):
    fails(sluice_bin, "--scenario", ["'bursty'", "built-in", "steady, burst, boundary"],
          "--scenario", "bursty")
    fails(sluice_bin, "--scenario", ["No such file"], "--scenario", str(tmp_path / "no.yaml"))
    fails(sluice_bin, "--scenario", ["required"], "--limit", "gcra:rate=1/s,burst=1")
    fails(sluice_bin, "--print-scenario", ["'nope'"], "--print-scenario", "nope")


@pytest.mark.parametrize("args, names, patterns", [
    (["--duration", "10"], "--duration", ["unit"]),
    (["--duration", "0s"], "--duration", ["more than 0"]),
    (["--bucket", "0ms"], "--bucket", ["more than 0"]),
    (["--bucket", "1us"], "--bucket", ["counters", "larger --bucket"]),
    (["--duration", "100000h"], "--duration", ["about 7.2e\\+09 requests", "1000000000"]),
    (["--mode", "queue"], "--mode", ["'queue'", "reject, wait"]),
    (["--max-wait", "1s"], "--max-wait", ["--mode wait"]),
    (["--mode", "wait", "--max-wait", "soon"], "--max-wait", ["soon"]),
    (["--seed", "x"], "--seed", ["'x'"]),
    (["--progress", "loud"], "--progress", ["auto, always, never"]),
    (["--plot", "pie"], "--plot", ["cumulative, rate"]),
    (["--limit", "gcra:rate=1/s,burst=1"] * 17, "--limit", ["17", "at most 16"]),
])
def test_a_bad_flag_names_the_flag(sluice_bin, args, names, patterns):
    fails(sluice_bin, names, patterns, "--scenario", "steady", *args)


@pytest.mark.parametrize("flag", ["--out", "--csv", "--trace", "--svg"])
def test_an_output_that_cannot_be_written_fails_before_the_run(sluice_bin, tmp_path, flag):
    where = str(tmp_path / "no-such-dir" / "x")
    fails(sluice_bin, flag, ["cannot write", "No such file"], "--scenario", "steady", flag, where)
    assert not os.path.exists(tmp_path / "no-such-dir")


def test_a_scenario_file_that_is_not_utf8_names_the_line(sluice_bin, tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(GOOD.replace("name: a", "name: caf\xe9").encode("latin-1"))
    fails(sluice_bin, f"{path}:3", ["not valid UTF-8", "0xE9", "offset 13"], "--scenario",
          str(path))
