"""Fixtures for the admin API tests: a real `sluice serve` on free 127.0.0.1 ports, with its
config in a temp file, and helpers to drive its gateway and admin listeners."""
import os
import socket
import subprocess
import sys

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import free_port, sluice_binary, terminate, wait_until  # noqa: E402

# Every rule and route the tests rely on. The route answers locally, so no upstream is needed;
# each test uses its own X-User values, so limits never carry over between tests.
CONFIG = """\
# Admin API test config (comments are not kept by write-back).
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
write_back: {write_back}
routes:
  - name: api
    match: {{path_prefix: /}}
    respond: {{status: 200, body: "hello\\n"}}
    rules: [per-user]
rules:
  per-user:
    limit: "fixed-window:limit=3,window=1h"
    key: "header:X-User"
  spare:
    limit: "token-bucket:rate=10/s,burst=5"
    key: client_ip
"""


class Sluice:
    """One `sluice serve --config FILE` process; stderr goes to a file the tests can read."""

    def __init__(self, config_path, gateway_port, admin_port, extra_args=()):
        self.config_path = config_path
        self.gateway = f"http://127.0.0.1:{gateway_port}"
        self.admin = f"http://127.0.0.1:{admin_port}"
        self.extra_args = list(extra_args)
        self.log_path = str(config_path) + ".stderr"
        self.proc = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sluice_binary(), "serve", "--config", str(self.config_path), *self.extra_args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)

        def ready():
            assert self.proc.poll() is None, f"sluice exited early:\n{self.stderr()}"
            try:
                return requests.get(self.admin + "/healthz", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(ready, timeout=10, what="sluice to answer /healthz")
        return self

    def stop(self):
        if self.proc is None:
            return
        terminate(self.proc)
        self.log.close()
        self.proc = None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stderr(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def raw(self, data, read_all=True, timeout=5):
        """Sends `data` as bytes on a new admin connection; returns all it answers (until the
        server closes), or b"" with read_all=False."""
        host, port = self.admin.split("//")[1].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=timeout) as s:
            s.sendall(data)
            chunks = []
            while read_all:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)

    # --- admin API ---
    def rules(self):
        r = requests.get(self.admin + "/v1/rules", timeout=5)
        assert r.status_code == 200, r.text
        return {rule["name"]: rule for rule in r.json()}

    def rule(self, name):
        return requests.get(self.admin + "/v1/rules/" + name, timeout=5)

    def put(self, name, body):
        if isinstance(body, dict):
            return requests.put(self.admin + "/v1/rules/" + name, json=body, timeout=5)
        return requests.put(self.admin + "/v1/rules/" + name, data=body, timeout=5)

    def delete(self, name):
        return requests.delete(self.admin + "/v1/rules/" + name, timeout=5)

    def validate(self, body, **params):
        return requests.post(self.admin + "/v1/rules:validate", data=body, params=params,
                             timeout=5)

    def metrics(self):
        r = requests.get(self.admin + "/metrics", timeout=5)
        assert r.status_code == 200, r.text
        return r

    # --- gateway ---
    def allowed(self, user, attempts):
        """How many of `attempts` requests as X-User `user` got through (200; 429 otherwise)."""
        passed = 0
        with requests.Session() as s:
            for _ in range(attempts):
                r = s.get(self.gateway + "/hello", headers={"X-User": user}, timeout=5)
                assert r.status_code in (200, 429), (r.status_code, r.text)
                passed += r.status_code == 200
        return passed


@pytest.fixture
def serve_config(tmp_path):
    """serve_config(text_of, extra_args=()) -> a started Sluice, stopped at teardown, whose
    config is text_of(gateway_port, admin_port); extra_args is a list, or a function of the
    same two ports."""
    started = []

    def serve(text_of, extra_args=()):
        gateway, admin = free_port(), free_port()
        path = tmp_path / ("sluice.yaml" if not started else f"sluice{len(started)}.yaml")
        path.write_text(text_of(gateway, admin))
        extra = extra_args(gateway, admin) if callable(extra_args) else extra_args
        s = Sluice(path, gateway, admin, extra).start()
        started.append(s)
        return s

    yield serve
    for s in started:
        s.stop()


@pytest.fixture
def make_sluice(serve_config):
    """make_sluice(write_back=True, admin_flag=False) -> a started Sluice with CONFIG."""

    def make(write_back=True, admin_flag=False):
        flag = "true" if write_back else "false"
        if not admin_flag:
            return serve_config(lambda g, a: CONFIG.format(gateway=g, admin=a, write_back=flag))
        # The file names another (unused) port and `--admin` overrides it.
        return serve_config(
            lambda g, a: CONFIG.format(gateway=g, admin=free_port(), write_back=flag),
            lambda g, a: ["--admin", f"127.0.0.1:{a}"])

    return make


@pytest.fixture
def sluice(make_sluice):
    return make_sluice()


@pytest.fixture
def sluice_bin():
    return sluice_binary()
