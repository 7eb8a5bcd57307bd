"""resp.max_clients, Redis's maxclients: the listener holds that many connections at once, the
next one gets Redis's own error and is closed, and a reload moves the cap."""
import re
import signal

from conftest import Raw, Sluice
from integration_support import wait_until

FULL = b"-ERR max number of clients reached\r\n"


def pong(port):
    """A fresh connection answers PING (True), or is turned away (False)."""
    c = Raw(port)
    try:
        out = c.exchange(b"PING\r\n", b"+PONG\r\n")
        return out == b"+PONG\r\n"
    finally:
        c.close()


def refused(port):
    c = Raw(port)
    try:
        out, closed = c.read_until(lambda b: b.endswith(b"\r\n"))
        if out == FULL:
            _, closed = c.read_until(lambda b: False, timeout=2)
        return out, closed
    finally:
        c.close()


def test_the_connection_over_max_clients_gets_redis_error_and_is_closed(tmp_path):
    s = Sluice(tmp_path, config="resp:\n  max_clients: 2\n")
    held = []
    try:
        held = [Raw(s.port), Raw(s.port)]
        for c in held:  # each is a session (counted) once it has answered
            assert c.exchange(b"PING\r\n", b"+PONG\r\n") == b"+PONG\r\n"
        out, closed = refused(s.port)
        assert out == FULL and closed, (out, closed)
        held[0].send(b"INFO stats\r\n")
        info, _ = held[0].read_until(lambda b: re.search(rb"rejected_connections:\d+\r\n", b))
        assert b"rejected_connections:1\r\n" in info, info
        # One of the two leaves: there is room again.
        held.pop().close()
        wait_until(lambda: pong(s.port), what="a PONG once a connection was closed")
    finally:
        for c in held:
            c.close()
        s.stop()


def test_a_reload_moves_the_cap(tmp_path):
    s = Sluice(tmp_path, config="resp:\n  max_clients: 1\n")
    held = None
    try:
        held = Raw(s.port)
        assert held.exchange(b"PING\r\n", b"+PONG\r\n") == b"+PONG\r\n"
        assert refused(s.port) == (FULL, True)
        (tmp_path / "sluice.yaml").write_text("resp:\n  max_clients: 2\n")
        s.proc.send_signal(signal.SIGHUP)
        # The first connection stays; a second now fits.
        wait_until(lambda: pong(s.port), what="a second connection after the reload")
        assert held.exchange(b"PING\r\n", b"+PONG\r\n") == b"+PONG\r\n"
    finally:
        if held:
            held.close()
        s.stop()
