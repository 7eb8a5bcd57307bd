"""The overload harness and the collapse it exists to show (issue 21), on a reduced schedule:
an upstream of C = 4 workers and S = 10 ms (capacity 400/s) under 0.5x, 1x and 3x for 2, 2 and
3 s, deadline T = 200 ms. Goodput is 2xx answered within T per second, over a step's seconds
after its first."""
import pytest

STEPS = [(200, 2), (400, 2), (1200, 3)]


def test_the_generator_keeps_its_rate_when_the_server_cannot(upstream, lab, load_bin):
    # One worker at 500 ms serves 2 a second; 100 a second are still offered and sent, each
    # fails at its 200 ms deadline, and connections grow to carry them (about 100 x 0.2 s).
    up = upstream(workers=1, service_ms=500, jitter_ms=0)
    rows = lab.run_load(load_bin, up.port, [(100, 2)])
    assert [r["offered"] for r in rows] == [100, 100]
    assert [r["sent"] for r in rows] == [100, 100]
    assert all(r["ok"] == 0 and r["timeouts"] == 100 for r in rows), rows
    assert all(r["unsent"] == 0 and r["errors"] == 0 for r in rows), rows
    assert 15 <= rows[0]["conns"] <= 40, rows  # open when the first second was counted


def test_the_generator_counts_every_answer_below_capacity(upstream, lab, load_bin):
    up = upstream()
    rows = lab.run_load(load_bin, up.port, [(200, 2)])
    assert sum(r["ok"] for r in rows) >= 0.98 * 400, rows
    assert all(9 <= r["p50_ms"] <= 60 for r in rows), rows  # S = 10 ms, plus the machine's noise
    assert up.control()["served"] >= 392


def test_the_control_path_changes_service_time_and_workers(upstream):
    up = upstream()
    assert up.control(service_ms=20, workers=2)["workers"] == 2
    state = up.control()
    assert (state["workers"], state["service_ms"]) == (2, 20.0)


def test_without_a_limiter_goodput_at_3x_collapses(upstream, lab, load_bin):
    up = upstream()
    half, one, three = lab.per_step(lab.run_load(load_bin, up.port, STEPS), STEPS)
    assert half["goodput"] >= 190, half  # below capacity everything is served in time
    # 1200/s into 400/s: the queue grows 800 a second, passes T within a quarter second, and the
    # workers then serve only requests whose clients have gone.
    assert three["goodput"] < 0.2 * 400, three
    assert three["timeouts"] > 0.8 * 1200, three


def test_nginx_limit_conn_at_the_worker_count_keeps_goodput_near_capacity(upstream, lab,
                                                                          load_bin, tmp_path):
    up = upstream()
    nginx = lab.Proxy("nginx", str(tmp_path), up.port, limit=4)
    try:
        half, one, three = lab.per_step(lab.run_load(load_bin, nginx.port, STEPS), STEPS)
    finally:
        nginx.stop()
    # Refusing past 4 in flight keeps the queue empty: what is admitted is served in time.
    assert three["goodput"] >= 0.7 * 400, three
    assert three["other"] >= 0.5 * 1200, three  # the 503s
    assert three["timeouts"] < 0.05 * 1200, three


def test_the_generator_adds_the_headers_it_is_given(lab, load_bin):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen = []

    class Recorder(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            seen.append(self.headers.get("X-Priority"))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", lab.free_port()), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        rows = lab.run_load(load_bin, server.server_port, [(20, 1)], headers=["X-Priority: 1"])
    finally:
        server.shutdown()
    assert rows[0]["ok"] == 20, rows
    assert seen == ["1"] * 20


LOCAL = ["--url", "http://127.0.0.1:1/"]


@pytest.mark.parametrize("args, message", [
    (LOCAL + ["--schedule", "100"], "schedule step '100' is not RATE:DURATION"),
    (LOCAL + ["--schedule", "100:3x"], "bad duration unit in '3x'"),
    (LOCAL + ["--schedule", "100:1s", "--header", "NoColon"],
     "--header 'NoColon' is not 'Name: value'"),
    (["--schedule", "100:1s", "--url", "http://10.0.0.1:80/"], "only 127.0.0.1 or localhost"),
    (LOCAL + ["--schedule", "100:1s", "--max-conns", "0"], "--max-conns"),
])
def test_the_generator_refuses_bad_arguments_naming_them(load_bin, args, message):
    import subprocess
    cmd = [load_bin] + args
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    assert done.returncode == 2, done
    assert message in done.stderr, done.stderr


def test_the_control_path_refuses_bad_values(upstream):
    import urllib.error
    import urllib.request
    up = upstream()
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(f"http://127.0.0.1:{up.port}/_control?workers=0", timeout=5)
    assert bad.value.code == 400
    assert b"workers 1-4096" in bad.value.read()
    assert up.control()["workers"] == 4
