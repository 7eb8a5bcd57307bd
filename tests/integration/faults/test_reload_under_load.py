"""Reloads under load: wrk at full speed through a route with three rules whose limits are far
above the load, while the rules change every 0.5 s, by SIGHUP (the file rewritten) and by the
admin API in turn. Every request is answered 200: no 5xx, no socket error, and no 429 (a reload
must never deny, defect 5)."""
import signal
import threading
import time

import requests

from wrk_support import WrkRun

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
upstreams:
  app:
    servers: [%s]
routes:
  - name: all
    match:
      path_prefix: /
    upstream: app
    rules: [a, b, c]
rules:
  a:
    limit: "gcra:rate=1000000/s,burst=100000"
    key: const:all
  b:
    limit: "token-bucket:rate=1000000/s,burst=100000"
    key: client_ip
  c:
    limit: "leaky-bucket:rate=1000000/s,burst=100000,nodelay=1"
    key: method
"""
RELOADS = 20  # one every 0.5 s
RATES = ("1000000/s", "2000000/s")


def test_reloads_every_half_second_under_load_fail_no_request(sluice, demo_upstream,
                                                               tmp_path):
    up = demo_upstream()
    s = sluice(CONFIG % up.address)
    path = tmp_path / "sluice.yaml"
    version = s.metric("sluice_config_version")
    done = []

    def reload_loop():
        for i in range(RELOADS):
            time.sleep(0.5)
            rate = RATES[(i // 2) % 2]
            if i % 2 == 0:  # the file, then SIGHUP
                text = path.read_text()
                old = RATES[1 - RATES.index(rate)]
                path.write_text(text.replace(f"gcra:rate={old}", f"gcra:rate={rate}"))
                s.proc.send_signal(signal.SIGHUP)
            else:  # the admin API
                r = requests.put(s.admin + "/v1/rules/b", timeout=5, json={
                    "limit": f"token-bucket:rate={rate},burst=100000", "key": ["client_ip"]})
                assert r.status_code == 200, r.text
            done.append(time.monotonic())

    wrk = WrkRun(s.url + "/", seconds=RELOADS // 2 + 2, connections=20)
    time.sleep(0.5)
    reloader = threading.Thread(target=reload_loop)
    reloader.start()
    reloader.join()
    run = wrk.result()
    reloads_ok = s.metric("sluice_config_reloads_total", result="ok")
    new_version = s.metric("sluice_config_version")
    print(f"\n{run.requests} requests under {len(done)} reloads ({reloads_ok:.0f} from the file, "
          f"version {version:.0f} -> {new_version:.0f}): statuses {run.statuses}, errors "
          f"{run.errors}, latency p99 {run.latency_p99 * 1e3:.1f} ms, max "
          f"{run.latency_max * 1e3:.1f} ms")
    assert len(done) == RELOADS
    assert reloads_ok >= RELOADS // 2
    assert new_version >= version + RELOADS
    assert run.requests > 1000, "too little load to mean anything"
    assert run.errors == {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    assert run.statuses == {200: run.requests}
