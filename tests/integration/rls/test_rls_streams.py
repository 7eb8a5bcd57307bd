"""HTTP/2 streams on the RLS listener (issue 16, item 2): one connection opening 100k streams,
as a raw HTTP/2 client (h2_flood.py) that acknowledges the server's SETTINGS, one that never
does, and one that resets each stream at once. gRPC 1.51 holds a client to
SETTINGS_MAX_CONCURRENT_STREAMS only once it has acknowledged them, and not at all against
resets, so before the stream gate each of these took sluice to 0.5-1.2 GB of RssAnon, which
stayed after the client left. Now the memory stays within a few MiB, comes back, and another
client's calls are answered meanwhile."""
import os
import re
import threading
import time
import urllib.request

import grpc
import pytest

from h2_flood import FloodClient
from integration_support import ServeProcess, free_port, wait_until
from rls_stubs import request

STREAMS = 100_000
PEAK_GROWTH = 64 * 2**20  # 100 open streams take about 1.2 MB; the floods took 0.5-1.2 GB
COME_BACK = 16 * 2**20    # RssAnon within this of where it was before the flood, once it ends
ENHANCE_YOUR_CALM = 0xB
MAX_CONCURRENT_STREAMS = 3  # the SETTINGS identifier
RLS_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "edge.yaml")


def rss(pid):
    """Anonymous resident memory (heap, stacks): what a flood of streams grows."""
    with open(f"/proc/{pid}/status") as f:
        return int(f.read().split("RssAnon:")[1].split()[0]) * 1024


def serve(tmp_path, config_text=None):
    port, admin = free_port(), free_port()
    args = ["--grpc", f"127.0.0.1:{port}", "--admin", f"127.0.0.1:{admin}",
            "--rls-config", RLS_CONFIG]
    if config_text is not None:
        (tmp_path / "sluice.yaml").write_text(config_text)
        args += ["--config", str(tmp_path / "sluice.yaml")]
    s = ServeProcess(tmp_path, args, r"grpc \(Envoy RLS\) listening on \S+:%d\b" % port)
    s.port, s.admin = port, admin
    return s


def cut_connections(s):
    with urllib.request.urlopen(f"http://127.0.0.1:{s.admin}/metrics", timeout=5) as r:
        text = r.read().decode()
    return float(re.search(r"^sluice_rls_connections_cut_total (\S+)$", text, re.M).group(1))


@pytest.fixture(scope="module")
def sluice(tmp_path_factory):
    s = serve(tmp_path_factory.mktemp("rls_streams"))
    yield s
    s.stop()


class OtherClient(threading.Thread):
    """A well-behaved grpcio client on its own connection, calling all the while."""

    def __init__(self, port, pb):
        super().__init__(daemon=True)
        self.port, self.pb = port, pb
        self.latencies, self.errors, self.stopping = [], [], threading.Event()

    def run(self):
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            stub = self.pb.rls_grpc.RateLimitServiceStub(ch)
            req = request(self.pb, [[("path", "/health")]])
            while not self.stopping.is_set():
                started = time.monotonic()
                try:
                    stub.ShouldRateLimit(req, timeout=10)
                    self.latencies.append(time.monotonic() - started)
                except grpc.RpcError as e:
                    self.errors.append(e.code())
                time.sleep(0.01)

    def stop(self):
        self.stopping.set()
        self.join(timeout=15)


MODES = {
    "acknowledging SETTINGS": dict(acknowledge=True, reset=False),
    "never acknowledging SETTINGS": dict(acknowledge=False, reset=False),
    "resetting each stream at once": dict(acknowledge=True, reset=True),
}


@pytest.mark.parametrize("mode", MODES)
def test_100k_streams_on_one_connection_take_little_memory_and_others_are_served(
        sluice, pb, mode):
    pid = sluice.proc.pid
    other = OtherClient(sluice.port, pb)
    other.start()
    wait_until(lambda: len(other.latencies) >= 10, timeout=10, what="the other client's calls")
    base = rss(pid)
    message = request(pb, [[("remote_address", "198.51.100.7")]]).SerializeToString()
    flood = FloodClient(sluice.port, MODES[mode]["acknowledge"])
    flood.pump(0.3)  # the server's SETTINGS, and (acknowledging) the ACK
    opened, peak, started = 0, base, time.monotonic()
    while opened < STREAMS and not flood.closed and time.monotonic() - started < 20:
        opened += flood.open(5000, message, reset=MODES[mode]["reset"])
        peak = max(peak, rss(pid))
    for _ in range(10):  # what the server does with what it was sent
        flood.pump(0.1)
        peak = max(peak, rss(pid))
    flood.close()
    answered_before = len(other.latencies)
    time.sleep(0.5)
    wait_until(lambda: rss(pid) <= base + COME_BACK, timeout=5, interval=0.1,
               what=f"RssAnon back within {COME_BACK >> 20} MiB of {base / 2**20:.1f} MiB")
    after = rss(pid)
    other.stop()
    print(f"\n{mode}: {opened} streams queued in {time.monotonic() - started:.1f} s, server "
          f"closed: {flood.closed}, GOAWAY {flood.goaway}; RssAnon {base / 2**20:.1f} MiB before, peak "
          f"{peak / 2**20:.1f} MiB, {after / 2**20:.1f} MiB after; other client: "
          f"{len(other.latencies)} calls, slowest {max(other.latencies) * 1000:.0f} ms")
    assert peak - base < PEAK_GROWTH
    assert flood.closed and opened < STREAMS  # the server ended the connection
    assert flood.server_settings.get(MAX_CONCURRENT_STREAMS) == 100  # the default
    assert other.errors == []
    assert len(other.latencies) > answered_before >= 10 and max(other.latencies) < 5


def test_the_stream_cap_is_advertised_and_holds_before_the_ack_and_after(tmp_path):
    s = serve(tmp_path, "rls:\n  max_concurrent_streams: 8\n")
    try:
        # Acknowledging: gRPC holds the client to the 8 advertised (a 9th open stream ends the
        # connection).
        polite = FloodClient(s.port, acknowledge=True)
        polite.pump(0.3)
        assert polite.server_settings[MAX_CONCURRENT_STREAMS] == 8
        polite.open(8)
        polite.pump(0.3)
        assert not polite.closed
        polite.open(1)
        wait_until(lambda: polite.pump(0.05) or polite.closed, what="gRPC closing the connection")
        # Never acknowledging: 100 streams, what HTTP/2 clients assume before SETTINGS arrive,
        # even with a lower cap; the 101st ends the connection, with the reason.
        silent = FloodClient(s.port, acknowledge=False)
        silent.pump(0.3)
        silent.open(100)
        silent.pump(0.3)
        assert not silent.closed
        silent.open(1)
        wait_until(lambda: silent.pump(0.05) or silent.closed, what="the connection cut")
        assert silent.goaway == (199, ENHANCE_YOUR_CALM, "more than 100 streams before "
                                 "acknowledging SETTINGS (rls.max_concurrent_streams; never "
                                 "fewer than 100)")
        assert cut_connections(s) == 1
        # Resetting: more than 10 x 100 resets within a second end the connection.
        resetting = FloodClient(s.port, acknowledge=True)
        resetting.pump(0.3)
        resetting.open(1000, reset=True)
        resetting.pump(0.1)
        assert not resetting.closed
        resetting.open(1, reset=True)
        wait_until(lambda: resetting.pump(0.05) or resetting.closed, what="the connection cut")
        assert resetting.goaway[1:] == (ENHANCE_YOUR_CALM, "more than 1000 streams reset within a "
                                        "second (10 x rls.max_concurrent_streams; never fewer "
                                        "than 1000)")
        assert cut_connections(s) == 2
    finally:
        s.stop()
