"""SIGTERM under load: 50 clients keep requests in flight at an upstream that takes 0.6 s to
answer. On SIGTERM sluice stops accepting, and every request the upstream had already received
is answered 200 to its client before sluice exits with status 0."""
import signal
import threading
import time

import requests

from gateway_conftest import accepts_connections, gateway_config

CLIENTS = 50


def test_sigterm_under_load_completes_every_request_in_flight(sluice, raw_upstream):
    up = raw_upstream()
    s = sluice(gateway_config([up.address]))
    results = {}  # path -> (status (0: failed at the HTTP level), when it was answered)
    lock = threading.Lock()
    stopping = threading.Event()

    def client(c):
        with requests.Session() as session:
            i = 0
            while not stopping.is_set():
                path = f"/c{c}/r{i}"
                i += 1
                try:
                    r = session.get(s.url + path, headers={"X-Behaviour": "slow:600"}, timeout=10)
                    status = r.status_code
                except requests.RequestException:
                    status = 0
                with lock:
                    results[path] = (status, time.monotonic())
                if status == 0:
                    return  # the gateway is going: no new connections

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    time.sleep(1.5)  # each client has a request at the upstream
    with up.lock:
        at_upstream = {head.split(b" ")[1].decode() for head, _ in up.requests}
    signalled = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    stopping.set()
    time.sleep(0.2)
    refused = not accepts_connections(s.gateway_port)
    code = s.proc.wait(timeout=10)
    exited = time.monotonic() - signalled
    for t in threads:
        t.join(10)

    # At the upstream and not yet answered when the signal came: in flight.
    in_flight = {p: results.get(p, (None, 0))[0] for p in at_upstream
                 if results.get(p, (None, signalled))[1] >= signalled}
    print(f"\n{len(in_flight)} requests in flight at the upstream at SIGTERM, answered "
          f"{sorted(set(in_flight.values()), key=str)}; sluice exited {exited:.2f} s after the "
          f"signal with {code}")
    assert code == 0, s.stderr()
    assert refused, "no new connection after SIGTERM"
    assert len(in_flight) >= 0.8 * CLIENTS, "the load: (almost) every client had one in flight"
    assert set(in_flight.values()) == {200}, {p: v for p, v in in_flight.items() if v != 200}
    # It waited for them (0.6 s each at most) and not much longer.
    assert exited < 5.0
