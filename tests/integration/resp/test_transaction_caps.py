"""A transaction's queue is capped (resp.max_queued_commands, resp.max_queued_bytes): the
command that does not fit gets Redis's OOM error and EXEC answers EXECABORT, as redis-server
answers a MULTI queue that passes maxmemory; memory stays bounded however far a client queues
past the cap, and what a queue took comes back when its client goes."""
import os
import threading

import pytest
import redis

from conftest import Raw, Sluice, command
from integration_support import wait_until

EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"
OOM_COMMANDS = b"-OOM command not allowed when queued commands > 'resp.max_queued_commands' (3).\r\n"
OOM_BYTES = b"-OOM command not allowed when queued bytes > 'resp.max_queued_bytes' (1KiB).\r\n"


def test_the_command_past_max_queued_commands_gets_oom_and_exec_answers_execabort(tmp_path):
    with Sluice(tmp_path, config="resp:\n  max_queued_commands: 3\n") as s:
        c = Raw(s.port)
        sent = (command("MULTI") + command("CL.THROTTLE", "k", 1, 1, 60) * 4 + command("EXEC"))
        expect = b"+OK\r\n" + b"+QUEUED\r\n" * 3 + OOM_COMMANDS + EXECABORT
        assert c.exchange(sent, expect) == expect
        # The transaction is gone; the connection is usable, and the next one runs.
        expect = b"+OK\r\n" + b"+QUEUED\r\n" * 3 + b"*3\r\n"
        out = c.exchange(command("MULTI") + command("PING") * 3 + command("EXEC"),
                         expect + b"+PONG\r\n" * 3)
        assert out == expect + b"+PONG\r\n" * 3
        c.close()
        # What redis-py's transaction pipeline raises.
        r = redis.Redis(port=s.port, socket_timeout=5)
        with r.pipeline() as p:
            for _ in range(4):
                p.execute_command("CL.THROTTLE", "k2", 1, 1, 60)
            # redis-py raises the first queued command's error when EXEC aborts.
            with pytest.raises(redis.ResponseError, match="max_queued_commands") as e:
                p.execute()
        assert "OOM command not allowed" in str(e.value)
        assert s.metric("sluice_resp_queue_refused_total") == 2


def test_the_command_past_max_queued_bytes_gets_oom_and_a_smaller_one_still_queues(tmp_path):
    with Sluice(tmp_path, config="resp:\n  max_queued_bytes: 1KiB\n") as s:
        c = Raw(s.port)
        big = b"x" * 600  # "PING" + 600 bytes: 604 queued, a second would make 1208 > 1024
        sent = (command("MULTI") + command("PING", big) + command("PING", big) +
                command("PING", b"y" * 400) + command("EXEC"))
        expect = b"+OK\r\n+QUEUED\r\n" + OOM_BYTES + b"+QUEUED\r\n" + EXECABORT
        assert c.exchange(sent, expect) == expect
        c.close()


def queue_past_the_cap(port, commands, size):
    """MULTI, then `commands` PINGs of `size` bytes pipelined (replies read as they come);
    returns (the connection, the replies to the PINGs)."""
    c = Raw(port)
    assert c.exchange(command("MULTI"), b"+OK\r\n") == b"+OK\r\n"
    got = bytearray()
    done = threading.Event()

    def read():
        c.sock.settimeout(10)
        lines = 0
        while not done.is_set() and lines < commands:
            chunk = c.sock.recv(1 << 20)
            if not chunk:
                return
            got.extend(chunk)
            lines += chunk.count(b"\n")  # one line a reply

    reader = threading.Thread(target=read)
    reader.start()
    one = command("PING", b"v" * size)
    batch = one * 64
    for _ in range(commands // 64):
        c.send(batch)
    reader.join(timeout=60)
    done.set()
    return c, bytes(got)


# A sanitizer's allocator keeps freed memory in quarantine and its shadow grows with the heap:
# what this measures is the release build's (scripts/run-sanitized-tests.sh sets SLUICE_SANITIZER).
@pytest.mark.skipif(bool(os.environ.get("SLUICE_SANITIZER")), reason="measures the release heap")
def test_rss_stays_bounded_while_a_client_queues_far_past_the_cap(tmp_path):
    # The default caps: 10000 commands, 16MiB. 20480 commands of 8KiB are 160MiB.
    with Sluice(tmp_path) as s:
        before = s.rss_mib()
        c, got = queue_past_the_cap(s.port, 20480, 8192)
        peak = s.rss_mib()
        queued = got.count(b"+QUEUED\r\n")
        refused = got.count(b"-OOM command not allowed when queued bytes > "
                            b"'resp.max_queued_bytes' (16MiB).\r\n")
        assert (queued, refused) == (2047, 20480 - 2047)  # 2047 * 8196 B <= 16MiB < 2048 * 8196
        assert peak - before < 48, (before, peak)  # 16MiB queued, not 160MiB
        assert c.exchange(command("EXEC"), EXECABORT) == EXECABORT
        c.close()


# A sanitizer's allocator keeps freed memory in quarantine and its shadow grows with the heap:
# what this measures is the release build's (scripts/run-sanitized-tests.sh sets SLUICE_SANITIZER).
@pytest.mark.skipif(bool(os.environ.get("SLUICE_SANITIZER")), reason="measures the release heap")
def test_what_a_queue_took_comes_back_when_its_client_closes(tmp_path):
    with Sluice(tmp_path) as s:
        before = s.rss_mib()
        for _ in range(3):  # each run reuses what the last gave back, or it is gone
            c, got = queue_past_the_cap(s.port, 1920, 8192)  # 15MiB, under the default cap
            assert got.count(b"+QUEUED\r\n") == 1920
            assert s.rss_mib() - before > 12
            c.close()
            wait_until(lambda: s.rss_mib() - before < 4, timeout=10,
                       what=f"RSS back near {before:.0f}MiB (now {s.rss_mib():.0f}MiB)")
