"""`redis:` changed on reload without a restart (docs/distributed.md, "Reload"): a new url (and
password) takes effect at SIGHUP, the state then lives in the new Redis; a `redis:` section
added by a reload makes the store a loop had none of; a reload that keeps the settings keeps the
connection. Until the reload, decisions went to the old Redis."""
import signal

import requests

from deploy_support import AuthRedis
from integration_support import wait_until  # on sys.path through conftest
from redis_support import RedisServer

HEAD = """\
listen: 127.0.0.1:{gateway}
admin: 127.0.0.1:{admin}
workers: 1
write_back: false
"""
REST = """\
routes:
  - name: r
    match: {{path_prefix: /}}
    respond: {{status: 200}}
    rules: [three]
rules:
  three:
    limit: fixed-window:limit=3,window=1m
    key: const:k
"""
KEY = "sluice:{three:k}:fixed-window"
PASSWORD = "a-password-for-the-new-redis"


def codes(g, n):
    with requests.Session() as s:
        return [s.get(g.url + "/", timeout=5).status_code for _ in range(n)]


def reload(g, path, text):
    before = g.stderr().count("sluice: config reloaded")
    path.write_text(text)
    g.proc.send_signal(signal.SIGHUP)
    wait_until(lambda: g.stderr().count("sluice: config reloaded") > before, what="the reload")


def test_a_new_url_and_password_take_effect_on_reload(tmp_path, gateways):
    old = RedisServer(tmp_path)
    new = AuthRedis(tmp_path, PASSWORD, extra=["--requirepass", PASSWORD])
    secret = tmp_path / "secret"
    secret.write_text(PASSWORD)
    try:
        redis_old = "redis:\n  url: {redis}\n  storage: redis\n"
        g = gateways(HEAD + redis_old + REST, old.url)
        assert codes(g, 2) == [200, 200]
        assert old.client().exists(KEY) == 1
        connects = old.client().info("stats")["total_connections_received"]

        # The same settings again (another field changed): the connection stays.
        reload(g, tmp_path / "sluice0" / "sluice.yaml",
               (HEAD + redis_old + REST).replace("window=1m", "window=2m").format(
                   gateway=g.gateway_port, admin=g.admin_port, redis=old.url))
        assert codes(g, 1) == [200]
        assert old.client().info("stats")["total_connections_received"] == connects
        assert g.metric("sluice_redis_reconfigures_total") == 0

        # A new Redis, which wants a password: at the reload, decisions move there.
        reload(g, tmp_path / "sluice0" / "sluice.yaml",
               (HEAD + f"redis:\n  url: {new.url}\n  password_file: {secret}\n  storage: redis\n"
                + REST).format(gateway=g.gateway_port, admin=g.admin_port, redis=""))
        assert codes(g, 4) == [200, 200, 200, 429]  # a fresh count in the new Redis
        assert new.client().exists(KEY) == 1
        # The gateway's loop moved at its first decision after the reload (an idle loop, the
        # admin listener's, moves at its own next one).
        assert g.metric("sluice_redis_reconfigures_total") >= 1
        assert g.metric("sluice_redis_client_refused_connects_total") == 0
        assert PASSWORD not in g.stderr()
    finally:
        old.stop()
        new.stop()


def test_a_redis_section_added_by_a_reload_makes_the_store(tmp_path, gateways):
    rs = RedisServer(tmp_path)
    try:
        g = gateways(HEAD + REST, "")
        assert codes(g, 4) == [200, 200, 200, 429]  # local
        reload(g, tmp_path / "sluice0" / "sluice.yaml",
               (HEAD + f"redis:\n  url: {rs.url}\n  storage: redis\n" + REST).format(
                   gateway=g.gateway_port, admin=g.admin_port, redis=""))
        assert codes(g, 4) == [200, 200, 200, 429]  # a fresh count, in Redis
        assert rs.client().exists(KEY) == 1
        assert g.metric("sluice_redis_answers_total", source="redis") == 4
    finally:
        rs.stop()
