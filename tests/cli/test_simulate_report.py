"""What `sluice simulate` writes besides the CSV: the summary on stdout, the HTML report (one
self-contained page, one <svg> per plot, nothing fetched from anywhere), the standalone SVGs,
the progress bar, the built-in scenarios, its --help example and its completion."""
import os
import pty
import re
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from simulate_support import Series, read_rows, simulate
from test_help import complete

PLOTS = ("admitted", "delay", "fairness")
VOID = {"meta", "br", "hr", "img", "input", "link"}


class Balance(HTMLParser):
    """Fails on a tag closed out of order, or left open at the end."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open, self.problems, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:]} at {self.getpos()}")
        else:
            self.open.pop()


def report(sluice_bin, tmp_path, *args):
    out = tmp_path / "report.html"
    p = simulate(sluice_bin, *args, "--out", str(out))
    assert p.returncode == 0, p.stderr
    return p, out.read_text()


def test_the_report_is_one_self_contained_page_with_one_svg_per_plot(sluice_bin, tmp_path):
    _, html = report(sluice_bin, tmp_path, "--scenario", "flood")
    assert html.startswith("<!DOCTYPE html>\n") and html.endswith("</html>\n")
    b = Balance()
    b.feed(html)
    b.close()
    assert b.problems == [] and b.open == [], (b.problems, b.open)
    figures = [a.get("id") for tag, a in b.tags if tag == "figure"]
    assert figures == list(PLOTS)
    assert html.count("<svg") == html.count("</svg>") == len(PLOTS)
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):
        ET.fromstring(svg)  # each plot is well-formed XML
    # Nothing to fetch: no URL, no script, no stylesheet or image from elsewhere.
    assert not re.search(r"https?:|//[a-z]|<script|<link|<img|<iframe|@import|url\(", html, re.I)
    # The three limits of the flood scenario, in the summary table and in each panel.
    for limit in ("token-bucket:rate=5/s,burst=10", "fixed-window:limit=5,window=1s",
                  "sliding-log:limit=5,window=1s"):
        assert html.count(f"<code>{limit}</code>") == 2  # the summary and the fairness tables
        assert f"{limit}: admitted" in html  # its panel's title


def test_text_from_a_scenario_file_is_escaped_in_the_report(sluice_bin, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text('description: "<script>alert(1)</script> & co"\nduration: 1s\n'
                    'limits:\n  - gcra:rate=1/s,burst=1\n'
                    'sources:\n  - {name: "<b>x</b>", shape: steady, rate: 2/s}\n')
    _, html = report(sluice_bin, tmp_path, "--scenario", str(path))
    assert "<script" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_the_svg_files_are_standalone_svg_documents(sluice_bin, tmp_path):
    prefix = tmp_path / "burst"
    p = simulate(sluice_bin, "--scenario", "burst", "--svg", str(prefix))
    assert p.returncode == 0, p.stderr
    for plot in PLOTS:
        root = ET.parse(f"{prefix}-{plot}.svg").getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
        assert root.find("{http://www.w3.org/2000/svg}title") is not None


def test_the_summary_on_stdout_has_a_line_per_limit(sluice_bin):
    p = simulate(sluice_bin, "--scenario", "boundary")
    assert p.returncode == 0 and p.stderr == ""
    lines = p.stdout.splitlines()
    assert lines[0] == ("scenario boundary: 200 requests in 10s from 1 source, bucket 50ms, "
                        "seed 1, reject mode")
    assert lines[1].split()[:5] == ["limit", "offered", "admitted", "denied", "share"]
    rows = {line.split()[0]: line.split()[1:5] for line in lines[2:]}
    assert rows == {
        "fixed-window:limit=10,window=1s": ["200", "100", "100", "50.0%"],
        "sliding-window:limit=10,window=1s": ["200", "50", "150", "25.0%"],
        "sliding-log:limit=10,window=1s": ["200", "50", "150", "25.0%"],
        "token-bucket:rate=10/s,burst=10": ["200", "50", "150", "25.0%"],
    }


def test_the_help_example_prints_what_it_shows(sluice_bin, tmp_path):
    help_text = subprocess.run([sluice_bin, "simulate", "--help"], capture_output=True,
                               text=True, timeout=30).stdout
    example = help_text.split("\nExample:\n", 1)[1]
    lines = example.splitlines()
    command = (lines[0] + lines[1]).replace("\\", " ").strip()
    shown = [line.strip().removesuffix("...").rstrip() for line in lines[2:6]]
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(sluice_bin)) + ":" +
               os.environ["PATH"])
    p = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert len(out) == 4
    for want, got in zip(shown, out):
        assert got.startswith(want), (want, got)
    assert (tmp_path / "report.html").exists() and (tmp_path / "series.csv").exists()


def test_the_progress_bar_goes_to_stderr_only_when_asked_or_on_a_terminal(sluice_bin):
    always = simulate(sluice_bin, "--scenario", "flood", "--progress", "always")
    assert always.returncode == 0
    assert re.search(r"\[#{30}\] 100% of 10s\n$", always.stderr), always.stderr
    for quiet in (["--progress", "never"], []):  # auto: stderr is a pipe here
        p = simulate(sluice_bin, "--scenario", "flood", *quiet)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert p.stdout == always.stdout


def test_on_a_terminal_the_progress_bar_is_erased_when_the_run_ends(sluice_bin):
    main, tty = pty.openpty()
    p = subprocess.Popen([sluice_bin, "simulate", "--scenario", "steady", "--progress",
                          "always"], stdout=subprocess.PIPE, stderr=tty)
    os.close(tty)
    err = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        err += chunk
    out, _ = p.communicate(timeout=60)
    os.close(main)
    assert p.returncode == 0 and out.startswith(b"scenario steady:")
    assert b"100% of 10s" in err
    assert re.search(rb"\r +\r$", err), err[-80:]  # blanked, the cursor back at the start
    assert b"\n" not in err


def test_each_built_in_prints_as_a_file_that_runs_the_same(sluice_bin, tmp_path):
    listed = simulate(sluice_bin, "--list-scenarios").stdout.splitlines()
    names = [line.split()[0] for line in listed if "(the collapse model: no YAML)" not in line]
    assert names == ["steady", "burst", "boundary", "poisson", "diurnal", "flood"]
    for name in names:
        text = simulate(sluice_bin, "--print-scenario", name).stdout
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        by_name, by_file = tmp_path / "a.csv", tmp_path / "b.csv"
        assert simulate(sluice_bin, "--scenario", name, "--csv", str(by_name)).returncode == 0
        assert simulate(sluice_bin, "--scenario", str(path), "--csv", str(by_file)).returncode == 0
        assert by_name.read_bytes() == by_file.read_bytes(), name
        assert Series(read_rows(by_name)).buckets >= 100
    assert sorted(complete(["sluice", "simulate", "--scenario", ""], cwd=tmp_path)) == sorted(
        names + [f"{n}.yaml" for n in names])


def test_wait_mode_reports_delays_and_when_requests_proceed(sluice_bin, tmp_path):
    out = tmp_path / "s.csv"
    p = simulate(sluice_bin, "--scenario", "burst", "--mode", "wait", "--max-wait", "1s",
                 "--limit", "token-bucket:rate=10/s,burst=20", "--csv", str(out))
    assert p.returncode == 0, p.stderr
    row = p.stdout.splitlines()[2].split()
    # The 10 quiet ones; at the burst 20 at once and 10 more queued, 100 ms apart, up to 1 s;
    # then the 20/s finds the queue 1 s long, so one in two goes (79 of its 160).
    assert row[:3] == ["token-bucket:rate=10/s,burst=20", "220", "119"], row
    assert row[-1] == "1s"  # the longest wait is the max-wait
    s = Series(read_rows(out))
    assert s.total("token-bucket:rate=10/s,burst=20", "passed") == 119
    assert s.most_in_any("token-bucket:rate=10/s,burst=20", "passed", 1_000_000) <= 20 + 10


def seconds(text):
    """A delay as the summary prints it ("0", "750us", "12.5ms", "4.9s") in seconds."""
    for unit, scale in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * scale
    return float(text)


def delay_columns(sluice_bin, tmp_path, count, rate):
    """p50, p90, p99 and max of a burst of `count` at t=0 through a leaky bucket that admits
    them all and lets one go every 1/rate: the k-th (from 0) waits k/rate exactly."""
    path = tmp_path / "burst.yaml"
    path.write_text(f"duration: 1s\nsources:\n  - {{shape: burst, count: {count}}}\n")
    p = simulate(sluice_bin, "--scenario", str(path), "--limit",
                 f"leaky-bucket:rate={rate}/s,burst={count - 1}")
    assert p.returncode == 0, p.stderr
    row = p.stdout.splitlines()[2].split()
    assert row[2] == str(count)
    return [seconds(v) for v in row[-4:]]


def test_delay_percentiles_are_exact_up_to_65536_requests_then_within_2_percent(sluice_bin,
                                                                               tmp_path):
    # 100 requests, delays 0, 0.1, ..., 9.9 s: the 50th is 4.9 s, the 90th 8.9, the 99th 9.8.
    assert delay_columns(sluice_bin, tmp_path, 100, 10) == [4.9, 8.9, 9.8, 9.9]
    # 70,000, delays 0 .. 69.999 s in ms: counted in buckets, each percentile rounded up by at
    # most 1.6% (and printed to three figures); the largest is exact.
    got = delay_columns(sluice_bin, tmp_path, 70000, 1000)
    for value, true in zip(got[:3], (34.999, 62.999, 69.299)):
        assert true * 0.998 <= value <= true * 1.016 * 1.002, (value, true)
    assert got[3] == 70  # 69.999 s, to three figures
