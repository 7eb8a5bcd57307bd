"""Spoofed client addresses: X-Forwarded-For, Forwarded and X-Real-IP from a peer that is not a
trusted proxy are ignored (the key is the peer, whatever the client claims); from a trusted
proxy, the right-most address that is not itself trusted is the client, so what a client writes
at the left of the chain never changes its key. Each case is read from the access log (the
address the rules saw) and from the limit (2 per hour per client address)."""
import pytest
import requests

from gateway_conftest import wait_until

CONFIG = """\
listen: 127.0.0.1:{{gateway}}
admin: 127.0.0.1:{{admin}}
workers: 1
access_log: "{{access_log}}"
{trusted}
routes:
  - name: all
    match:
      path_prefix: /
    respond:
      status: 200
      body: "ok\\n"
    rules: [per-client]
rules:
  per-client:
    limit: "fixed-window:limit=2,window=1h"
    key: client_ip
"""
TRUSTED = "trusted_proxies: [127.0.0.1, 10.0.0.0/8]"


def send(s, headers_list):
    """One request per headers dict; returns ([status], [client address logged])."""
    before = len(s.access_lines())
    codes = [requests.get(s.url + "/", headers=h, timeout=5).status_code for h in headers_list]
    lines = wait_until(lambda: (len(s.access_lines()) >= before + len(headers_list)
                                and s.access_lines()[before:]), what="the access log lines")
    return codes, [line.split(" ")[1] for line in lines]


def spoofs(header, values):
    return [{header: v} for v in values]


@pytest.mark.parametrize("header, values", [
    ("X-Forwarded-For", ["203.0.113.1", "203.0.113.2, 198.51.100.2", "10.0.0.9", "::1"]),
    ("Forwarded", ["for=203.0.113.1", "for=203.0.113.2, for=198.51.100.2", 'for="[2001:db8::1]"',
                   "for=10.0.0.9"]),
    ("X-Real-IP", ["203.0.113.1", "203.0.113.2", "198.51.100.3", "10.0.0.9"]),
], ids=["x-forwarded-for", "forwarded", "x-real-ip"])
def test_addresses_claimed_by_an_untrusted_peer_are_ignored(sluice, header, values):
    s = sluice(CONFIG.format(trusted=""))
    codes, clients = send(s, spoofs(header, values))
    assert clients == ["127.0.0.1"] * 4
    assert codes == [200, 200, 429, 429], "every claim shares the peer's one budget"


def test_behind_a_trusted_proxy_the_right_most_untrusted_address_is_the_client(sluice):
    s = sluice(CONFIG.format(trusted=TRUSTED))
    # The client 203.0.113.5 writes whatever it likes at the left; the proxies 10.0.0.2 and
    # the peer (127.0.0.1) are trusted, so the client is the address they received it from.
    codes, clients = send(s, [
        {"X-Forwarded-For": "6.6.6.6, 203.0.113.5, 10.0.0.2"},
        {"X-Forwarded-For": "7.7.7.7, 203.0.113.5, 10.0.0.2"},
        {"X-Forwarded-For": "203.0.113.5"},
        {"X-Forwarded-For": "6.6.6.6"},
    ])
    assert clients == ["203.0.113.5"] * 3 + ["6.6.6.6"]
    assert codes == [200, 200, 429, 200]
    codes, clients = send(s, [
        {"Forwarded": "for=6.6.6.6, for=203.0.113.7, for=10.0.0.3"},
        {"Forwarded": 'for=9.9.9.9;proto=https, for=203.0.113.7;by=10.0.0.3, for=10.0.0.3'},
        {"Forwarded": "for=203.0.113.7"},
    ])
    assert clients == ["203.0.113.7"] * 3
    assert codes == [200, 200, 429]
    # A chain of trusted hops only: its left-most address is the client as far as anyone knows.
    _, clients = send(s, [{"X-Forwarded-For": "10.0.0.1, 10.0.0.2"}])
    assert clients == ["10.0.0.1"]


def test_behind_a_trusted_proxy_x_real_ip_names_the_client(sluice):
    # nginx's realip module with `real_ip_header X-Real-IP`: one address, set by the proxy
    # (read when neither X-Forwarded-For nor Forwarded is sent).
    s = sluice(CONFIG.format(trusted=TRUSTED))
    codes, clients = send(s, [{"X-Real-IP": "203.0.113.9"}] * 3)
    assert clients == ["203.0.113.9"] * 3
    assert codes == [200, 200, 429]
