"""The config lifecycle belongs to `sluice serve`, not to the admin listener: with `admin: off`
nothing listens for the admin API, and SIGHUP and an edit of the file still reload the rules
(the issue of the seams: reload used to live inside the admin listener)."""
import signal
import subprocess
import time

import requests

from integration_support import free_port, sluice_binary, terminate, wait_until

CONFIG = """\
listen: 127.0.0.1:{gateway}
admin: off
check: 127.0.0.1:{check}
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "hello\\n"}}
    rules: [one]
rules:
  one:
    limit: "fixed-window:limit=1,window=1h"
    key: "header:X-User"
    status: {status}
"""


def start(tmp_path, status):
    ports = {"gateway": free_port(), "check": free_port()}
    path = tmp_path / "sluice.yaml"
    path.write_text(CONFIG.format(status=status, **ports))
    log = open(tmp_path / "stderr", "wb")
    proc = subprocess.Popen([sluice_binary(), "serve", "--config", str(path)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{ports['gateway']}"

    def up():
        assert proc.poll() is None, (tmp_path / "stderr").read_text()
        try:
            return requests.get(url + "/", headers={"X-User": "probe"}, timeout=1).ok
        except requests.ConnectionError:
            return False

    wait_until(up, timeout=10, what="the gateway")
    return proc, path, url, ports, log


def denial_status(url, user):
    """The status of `user`'s second request (its first passes: 1 per hour)."""
    assert requests.get(url + "/", headers={"X-User": user}, timeout=5).status_code == 200
    return requests.get(url + "/", headers={"X-User": user}, timeout=5).status_code


def test_sighup_and_a_file_edit_reload_with_no_admin_listener(tmp_path):
    proc, path, url, ports, log = start(tmp_path, 429)
    try:
        stderr = (tmp_path / "stderr").read_text()
        assert "admin listening" not in stderr and "check listening" in stderr, stderr
        assert denial_status(url, "a") == 429

        path.write_text(path.read_text().replace("status: 429", "status: 503"))
        proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "config reloaded" in (tmp_path / "stderr").read_text(), timeout=5,
                   what="the SIGHUP reload")
        assert denial_status(url, "b") == 503

        # No signal: the file watch sees the edit within about a second.
        time.sleep(1.1)  # a new mtime second, whatever the file system's granularity
        path.write_text(path.read_text().replace("status: 503", "status: 418"))
        wait_until(lambda: denial_status(url, f"c{time.monotonic_ns()}") == 418, timeout=5,
                   what="the file watch to reload")
        # The decision API still answers on its own listener.
        r = requests.post(f"http://127.0.0.1:{ports['check']}/v1/check", timeout=5,
                          json={"rule": "one", "key": "z"})
        assert r.status_code == 200 and r.json()["allowed"] is True, r.text
    finally:
        terminate(proc)
        log.close()
