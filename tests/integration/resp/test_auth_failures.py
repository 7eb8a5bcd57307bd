"""Failed AUTHs cost the client who sends them (docs/resp.md#auth-failures): a connection is
closed after resp.max_auth_failures, every failure is counted (INFO stats, /metrics) and said
on stderr at most once a second with the peer's address, and a peer address that keeps
failing is refused without its password being looked at, across reconnects. check-config
warns on a password shorter than 16 bytes."""
import re
import subprocess
import time

import pytest
import redis

from conftest import Raw, Sluice, command
from integration_support import sluice_binary, wait_until

PASSWORD = "correct-horse-battery"  # 21 bytes
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
NOT_CHECKED = b"-ERR AUTH not checked: too many failed AUTHs from 127.0.0.1"


def guarded(tmp_path, extra=""):
    """sluice with a RESP password and `extra` resp fields."""
    (tmp_path / "secret").write_text(PASSWORD + "\n")
    return Sluice(tmp_path, config=f'resp:\n  password_file: "{tmp_path}/secret"\n{extra}')


def replies(out):
    """The reply lines of `out` (every reply here is one line)."""
    return [line + b"\r\n" for line in out.split(b"\r\n")[:-1]]


def fail_on_new_connection(port, count, source="127.0.0.1"):
    """Pipelines `count` wrong AUTHs on a fresh connection; returns (replies, closed)."""
    c = Raw(port, source)
    try:
        c.send(command("AUTH", "wrong") * count)
        out, closed = c.read_until(lambda b: False, timeout=1.0)
        return replies(out), closed
    finally:
        c.close()


def test_a_connection_is_closed_after_max_auth_failures_with_an_error_saying_so(tmp_path):
    with guarded(tmp_path, "  max_auth_failures: 5\n") as s:
        # 8 pipelined: 4 answered WRONGPASS, the 5th says the close, the last 3 are not read.
        got, closed = fail_on_new_connection(s.port, 8)
        assert closed
        assert got[:4] == [WRONGPASS] * 4
        assert got[4] == (b"-WRONGPASS invalid username-password pair or user is disabled. "
                          b"Now closing the connection after 5 failed AUTHs "
                          b"(resp.max_auth_failures).\r\n")
        assert len(got) == 5
        # What redis-py shows its user at the last one.
        c = redis.Redis(port=s.port, socket_timeout=5)
        for _ in range(4):
            with pytest.raises(redis.ResponseError, match="WRONGPASS invalid username-password"):
                c.execute_command("AUTH", "wrong")
        with pytest.raises(redis.ResponseError, match=r"closing the connection after 5 failed"):
            c.execute_command("AUTH", "wrong")
        # Fewer failures than the cap, then the right password: the connection stays.
        ok = Raw(s.port)
        out = ok.exchange(command("AUTH", "wrong") * 4 + command("AUTH", PASSWORD) + b"PING\r\n",
                          WRONGPASS * 4 + b"+OK\r\n+PONG\r\n")
        assert out == WRONGPASS * 4 + b"+OK\r\n+PONG\r\n"
        ok.close()


def test_the_default_cap_is_10_failures_and_hello_auth_counts_too(tmp_path):
    with guarded(tmp_path) as s:
        c = Raw(s.port)
        c.send(command("HELLO", "2", "AUTH", "default", "wrong") * 3 +
               command("AUTH", "wrong") * 20)
        out, closed = c.read_until(lambda b: False, timeout=1.0)
        got = replies(out)
        assert closed and len(got) == 10
        assert got[:9] == [WRONGPASS] * 9 and b"after 10 failed AUTHs" in got[9]
        c.close()


def test_failures_are_counted_in_metrics_and_info(tmp_path):
    with guarded(tmp_path) as s:
        assert s.metric('sluice_resp_auth_failures_total{reason="wrong"}') == 0
        got, _ = fail_on_new_connection(s.port, 3)
        assert got == [WRONGPASS] * 3
        got, closed = fail_on_new_connection(s.port, 10)  # the 10th closes it
        assert closed
        assert s.metric('sluice_resp_auth_failures_total{reason="wrong"}') == 13
        assert s.metric('sluice_resp_auth_failures_total{reason="refused"}') == 0
        assert s.metric("sluice_resp_auth_closed_total") == 1
        c = redis.Redis(port=s.port, password=PASSWORD, socket_timeout=5)
        stats = c.info("stats")
        assert stats["acl_access_denied_auth"] == 13
        assert c.info("sluice")["auth_connections_closed"] == 1


LINE = re.compile(r"sluice: resp: AUTH failed from 127\.0\.0\.1:(\d+) as user 'default': "
                  r"(.*) \((\d+) more since the last such line\)")


def test_the_failure_line_names_the_peer_and_comes_at_most_once_a_second(tmp_path):
    with guarded(tmp_path) as s:
        start = time.monotonic()
        c = Raw(s.port)
        c.send(command("AUTH", "wrong") * 5)
        assert c.read_until(lambda b: b.count(b"\r\n") == 5)[0] == WRONGPASS * 5
        first_port = c.sock.getsockname()[1]
        c.close()
        for _ in range(30):  # 300 more, each connection closed at its 10th
            fail_on_new_connection(s.port, 10)
        elapsed = time.monotonic() - start
        lines = [LINE.search(l) for l in s.stderr().splitlines() if "AUTH failed" in l]
        assert all(lines)
        # 305 failures in `elapsed` seconds: one line a second at the most.
        assert 1 <= len(lines) <= int(elapsed) + 1, (len(lines), elapsed)
        assert int(lines[0].group(1)) == first_port
        assert lines[0].group(2) == "wrong user or password"
        time.sleep(1.1)
        fail_on_new_connection(s.port, 1)
        lines = wait_until(
            lambda: (l := [LINE.search(x) for x in s.stderr().splitlines() if "AUTH failed" in x])
            and len(l) > len(lines) and l, what="the next failure line")
        # Every failure is said or counted in the next line said: 306 in all.
        assert sum(1 + int(m.group(3)) for m in lines) == 306


def test_a_peer_that_keeps_failing_is_refused_unchecked_across_reconnects(tmp_path):
    with guarded(tmp_path, "  auth_failure_burst: 20\n  auth_failure_rate: 1/s\n") as s:
        start = time.monotonic()
        checked = refused = 0
        for _ in range(20):  # 200 wrong AUTHs, 10 a connection
            got, closed = fail_on_new_connection(s.port, 10)
            assert closed and len(got) == 10
            checked += sum(1 for r in got if r.startswith(b"-WRONGPASS"))
            refused += sum(1 for r in got if r.startswith(NOT_CHECKED))
        elapsed = time.monotonic() - start
        assert checked + refused == 200
        # 20 at once, then 1 a second: what the guesser learnt from is bounded by time.
        assert checked <= 20 + elapsed + 1, (checked, elapsed)
        assert refused >= 200 - (20 + elapsed + 1)
        assert s.metric('sluice_resp_auth_failures_total{reason="refused"}') == refused
        # While over, even the right password is not looked at; a second later it is.
        c = Raw(s.port)
        out = c.exchange(command("AUTH", PASSWORD), NOT_CHECKED)
        assert out.startswith(NOT_CHECKED)
        time.sleep(1.1)
        assert c.exchange(command("AUTH", PASSWORD), b"+OK\r\n") == b"+OK\r\n"
        c.close()
        # Another address is not held back by this one's failures.
        other = Raw(s.port, source="127.0.0.2")
        assert other.exchange(command("AUTH", "wrong"), WRONGPASS) == WRONGPASS
        assert other.exchange(command("AUTH", PASSWORD), b"+OK\r\n") == b"+OK\r\n"
        other.close()


def check_config(tmp_path, password):
    (tmp_path / "secret").write_bytes(password + b"\n")
    path = tmp_path / "sluice.yaml"
    path.write_text(f'resp:\n  listen: 127.0.0.1:6390\n  password_file: "{tmp_path}/secret"\n')
    return path, subprocess.run([sluice_binary(), "check-config", str(path)],
                                capture_output=True, text=True)


def test_check_config_warns_on_a_password_shorter_than_16_bytes(tmp_path):
    path, r = check_config(tmp_path, b"x" * 15)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{path}: ok\n"
    assert r.stderr == (f"{path}:3: warning: field 'resp.password_file': the password is 15 bytes; "
                        "use at least 16 random bytes (a short one can be guessed, even at "
                        "resp.auth_failure_rate)\n")
    path, r = check_config(tmp_path, b"x" * 16)
    assert r.returncode == 0 and r.stdout == f"{path}: ok\n" and r.stderr == ""
