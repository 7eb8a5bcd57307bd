"""Fixtures for the decision API tests (POST /v1/check, GET /v1/check/{rule}): a real
`sluice serve --config FILE` with only its admin listener, and for the auth_request tests a real
Debian nginx in front of a Python upstream that records what reached it."""
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import free_port, sluice_binary, terminate, wait_until  # noqa: E402

# Each test uses its own keys, so budgets never carry over between tests.
CONFIG = """\
admin: 127.0.0.1:{admin}
check: 127.0.0.1:{check}
rules:
  per-user:
    limit: "fixed-window:limit=3,window=1h"
    key: "header:X-User"
  per-client:
    limit: "fixed-window:limit=5,window=1h"
    key: client_ip
  shadow:
    limit: "fixed-window:limit=1,window=1h"
    key: "header:X-User"
    action: dry-run
  paced:
    limit: "gcra:rate=10/s,burst=1"
    key: "header:X-User"
    action: delay
    max_wait: 1s
  bucket:
    limit: "token-bucket:rate=1/s,burst=10"
    key: "header:X-User"
"""


class Sluice:
    """`sluice serve --config FILE`, admin and check listeners on free ports, no gateway; stderr
    kept in a file."""

    def __init__(self, tmp_path):
        self.admin_port = free_port()
        self.check_port = free_port()  # the decision API alone, where nginx asks
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        config = tmp_path / "sluice.yaml"
        config.write_text(CONFIG.format(admin=self.admin_port, check=self.check_port))
        self.log_path = tmp_path / "sluice.stderr"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sluice_binary(), "serve", "--config", str(config)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=log)

        def healthy():
            assert self.proc.poll() is None, f"sluice exited early:\n{self.log_path.read_text()}"
            try:
                return requests.get(self.admin + "/healthz", timeout=1).ok
            except requests.ConnectionError:
                return False

        wait_until(healthy, timeout=10, what="sluice to answer /healthz")

    def post(self, body, **kwargs):
        kw = {"json": body} if isinstance(body, (dict, list)) else {"data": body}
        return requests.post(self.admin + "/v1/check", timeout=5, **kw, **kwargs)

    def get(self, rule, **params):
        return requests.get(f"{self.admin}/v1/check/{rule}", params=params, timeout=5)

    def stop(self):
        terminate(self.proc)


@pytest.fixture
def sluice(tmp_path):
    s = Sluice(tmp_path)
    yield s
    s.stop()


# ---------------------------------------------------------------- upstream and nginx

class Upstream(ThreadingHTTPServer):
    """An app behind nginx that counts the requests that reached it, by X-User or peer."""
    daemon_threads = True

    def __init__(self):
        self.hits = {}
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), UpstreamHandler)

    def hit(self, who):
        with self.lock:
            self.hits[who] = self.hits.get(who, 0) + 1


class UpstreamHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        length = int(self.headers.get("Content-Length", "0"))
        if length:
            self.rfile.read(length)
        self.server.hit(self.headers.get("X-User") or self.headers.get("X-Real-IP"))
        status = 500 if self.path.endswith("/fail") else 200
        body = f"hello {self.command} {self.path}\n".encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_PUT = do_GET


# The recipe of docs/admin-api.md ("nginx auth_request"), with the ports filled in.
NGINX_CONF = """\
worker_processes 1;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/client_body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;

  upstream app {{ server 127.0.0.1:{upstream}; }}
  upstream sluice {{ server 127.0.0.1:{check}; keepalive 16; }}

  # The key: the X-User header, or the client address when there is none.
  map $http_x_user $limit_key {{ "" $remote_addr; default $http_x_user; }}

  server {{
    listen 127.0.0.1:{port};
    proxy_set_header X-Real-IP $remote_addr;

    # Both checks and answers share these lines: sluice's verdict and headers onto the reply.
    auth_request_set $sluice_status $upstream_status;
    auth_request_set $sluice_ratelimit $upstream_http_ratelimit;
    auth_request_set $sluice_policy $upstream_http_ratelimit_policy;
    auth_request_set $sluice_retry_after $upstream_http_retry_after;
    add_header RateLimit $sluice_ratelimit;
    add_header RateLimit-Policy $sluice_policy;

    location /ip/ {{
      auth_request /_sluice/per-client;
      error_page 500 = @sluice_refused;
      proxy_pass http://app;
    }}
    location /user/ {{
      auth_request /_sluice/per-user;
      error_page 500 = @sluice_refused;
      proxy_pass http://app;
    }}
    location /open/ {{
      auth_request /_sluice/per-user;
      error_page 500 = @sluice_fail_open;
      proxy_pass http://app;
    }}

    location = /_sluice/per-client {{
      internal;
      proxy_pass http://sluice/v1/check/per-client?key=$remote_addr;
      include {tmp}/sluice_check.conf;
    }}
    location = /_sluice/per-user {{
      internal;
      proxy_pass http://sluice/v1/check/per-user?key=$limit_key;
      include {tmp}/sluice_check.conf;
    }}

    # auth_request passes 2xx, 401 and 403; any other status, 429 included, is a 500 here.
    location @sluice_refused {{
      if ($sluice_status ~ "429$") {{
        add_header RateLimit $sluice_ratelimit always;
        add_header RateLimit-Policy $sluice_policy always;
        add_header Retry-After $sluice_retry_after always;
        return 429 "Too Many Requests\\n";
      }}
      return 503 "rate limiter unavailable\\n";
    }}
    location @sluice_fail_open {{
      if ($sluice_status ~ "429$") {{
        add_header Retry-After $sluice_retry_after always;
        return 429 "Too Many Requests\\n";
      }}
      proxy_pass http://app;
    }}
  }}
}}
"""

SLUICE_CHECK_CONF = """\
proxy_method GET;
proxy_pass_request_body off;
proxy_set_header Content-Length "";
proxy_http_version 1.1;
proxy_set_header Connection "";
"""


class Nginx:
    def __init__(self, tmp_path, check_port, upstream_port):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(nginx, os.X_OK):
            pytest.fail("nginx is not installed (Debian nginx-light; scripts/install-deps.sh)")
        self.tmp = tmp_path / "nginx"
        self.tmp.mkdir()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        (self.tmp / "sluice_check.conf").write_text(SLUICE_CHECK_CONF)
        conf = self.tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=self.tmp, port=self.port, check=check_port,
                                          upstream=upstream_port))
        self.log_path = self.tmp / "stderr"
        directives = f"daemon off; pid {self.tmp}/nginx.pid; error_log stderr;"
        if os.geteuid() == 0:
            directives += " user root;"  # workers read the temp dirs the master made
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [nginx, "-p", str(self.tmp), "-e", "stderr", "-c", str(conf), "-g", directives],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)

        def up():
            assert self.proc.poll() is None, f"nginx exited:\n{self.log_path.read_text()}"
            try:
                requests.get(self.url + "/nothing", timeout=1)
                return True
            except requests.ConnectionError:
                return False

        wait_until(up, timeout=10, what="nginx to listen")

    def stop(self):
        terminate(self.proc)


@pytest.fixture
def stack(sluice, tmp_path):
    """(sluice, nginx, upstream): nginx auth_request-ing sluice in front of the upstream."""
    upstream = Upstream()
    thread = threading.Thread(target=upstream.serve_forever, daemon=True)
    thread.start()
    nginx = Nginx(tmp_path, sluice.check_port, upstream.server_address[1])
    yield sluice, nginx, upstream
    nginx.stop()
    upstream.shutdown()
    upstream.server_close()
