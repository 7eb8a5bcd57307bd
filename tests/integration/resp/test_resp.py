"""The RESP listener with real clients: redis-cli and redis-py (Debian's python3-redis), plus
raw sockets for pipelines, inline commands, RESP3 and bad input. Numbers are redis-cell's
(docs/references.md section 2); error texts are Redis 7.0's."""
import itertools
import subprocess
import threading
import uuid

import pytest
import redis

_keys = itertools.count()


def key(prefix="k"):
    """A key no other test uses: CL.THROTTLE state lives as long as the server."""
    return f"{prefix}:{uuid.uuid4().hex[:8]}:{next(_keys)}"


def cli(sluice, *args, resp3=False):
    cmd = ["redis-cli", "-h", "127.0.0.1", "-p", str(sluice.port)]
    if resp3:
        cmd.append("-3")
    out = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                         timeout=10, check=True)
    return out.stdout


@pytest.fixture
def client(sluice):
    c = redis.Redis(host="127.0.0.1", port=sluice.port, socket_timeout=5)
    yield c
    c.close()


# --- redis-cli ---------------------------------------------------------------------------

def test_redis_cli_cl_throttle_replies_as_redis_cell(sluice):
    k = key()
    # 30 per 60 s, max_burst 15: limit 16, emission interval 2 s.
    assert cli(sluice, "CL.THROTTLE", k, 15, 30, 60).split() == ["0", "16", "15", "-1", "2"]
    for _ in range(15):
        cli(sluice, "CL.THROTTLE", k, 15, 30, 60)
    limited = cli(sluice, "CL.THROTTLE", k, 15, 30, 60).split()
    assert limited[:3] == ["1", "16", "0"]
    assert limited[3] in ("1", "2")  # 2 s minus the time the calls took, rounded up
    assert limited[4] in ("31", "32")


def test_redis_cli_quantity_and_peek(sluice):
    k = key()
    assert cli(sluice, "CL.THROTTLE", k, 4, 1, 1, 0).split() == ["0", "5", "5", "-1", "0"]
    assert cli(sluice, "CL.THROTTLE", k, 4, 1, 1, 6).split() == ["1", "5", "5", "-1", "0"]
    assert cli(sluice, "CL.THROTTLE", k, 4, 1, 1, 5).split()[:3] == ["0", "5", "0"]


def test_redis_cli_errors(sluice):
    assert cli(sluice, "CL.THROTTLE", "k", "x", 1, 1).strip() == \
        "Cell error: Couldn't parse as integer: x"
    assert cli(sluice, "CL.THROTTLE", "k", 1, 0, 1).strip() == \
        "Cell error: Zero rates are not supported"
    assert cli(sluice, "CL.THROTTLE", "k", 1, 1).strip() == \
        "ERR wrong number of arguments for 'cl.throttle' command"
    assert cli(sluice, "NOPE", "a").strip() == \
        "ERR unknown command 'NOPE', with args beginning with: 'a'"


def test_redis_cli_resp3(sluice):
    # redis-cli -3 sends HELLO 3 first; the map comes back as "key value" lines.
    hello = cli(sluice, "HELLO", 3, resp3=True).splitlines()
    assert "server sluice" in hello and "proto 3" in hello
    assert cli(sluice, "CL.THROTTLE", key(), 1, 1, 1, resp3=True).split() == \
        ["0", "2", "1", "-1", "1"]


# --- redis-py ----------------------------------------------------------------------------

def test_redis_py_commands(client):
    assert client.ping() is True
    assert client.echo("hi") == b"hi"
    k = key()
    assert client.execute_command("CL.THROTTLE", k, 0, 1, 10) == [0, 1, 0, -1, 10]
    assert client.execute_command("cl.throttle", k, 0, 1, 10) == [1, 1, 0, 10, 10]
    assert client.client_setname("tester") is True
    assert client.client_getname() == "tester"
    assert isinstance(client.client_id(), int)
    info = client.info()
    assert info["redis_version"] == "7.0.0"
    assert "sluice_version" in info
    assert client.execute_command("SELECT", 0) in (True, b"OK")


def test_redis_py_errors_leave_the_connection_usable(client):
    with pytest.raises(redis.ResponseError, match=r"unknown command 'FOO', with args beginning "
                                                  r"with: 'bar'"):
        client.execute_command("FOO", "bar")
    with pytest.raises(redis.ResponseError,
                       match=r"wrong number of arguments for 'cl.throttle' command"):
        client.execute_command("CL.THROTTLE", "k", 1)
    with pytest.raises(redis.ResponseError, match="Cell error: Couldn't parse as integer: 1.5"):
        client.execute_command("CL.THROTTLE", "k", 1, "1.5", 1)
    with pytest.raises(redis.ResponseError, match="invalid max_burst -1"):
        client.execute_command("CL.THROTTLE", "k", -1, 1, 1)
    # No config file: no rule exists (the error names it; before the rules engine was
    # connected it said "no rules configured").
    with pytest.raises(redis.ResponseError, match="unknown rule 'api'|no rules configured"):
        client.execute_command("SLUICE.CHECK", "api", "user")
    assert client.ping() is True


def test_redis_py_pipeline_answers_in_order(client):
    k = key()
    pipe = client.pipeline(transaction=False)
    for _ in range(12):
        pipe.execute_command("CL.THROTTLE", k, 9, 1, 3600)
    pipe.echo("last")
    results = pipe.execute()
    assert [r[0] for r in results[:12]] == [0] * 10 + [1, 1]
    assert [r[2] for r in results[:10]] == list(range(9, -1, -1))
    assert results[12] == b"last"


def test_redis_py_resp3():
    if "protocol" not in redis.Redis.__init__.__code__.co_varnames:
        pytest.skip(f"python3-redis {redis.__version__} has no RESP3 (protocol=3 came in "
                    "redis-py 5.0); RESP3 is covered by redis-cli -3 and raw HELLO 3 here")


def test_concurrent_clients_share_one_limit(sluice):
    k = key()
    allowed = []
    lock = threading.Lock()

    def worker():
        c = redis.Redis(host="127.0.0.1", port=sluice.port, socket_timeout=10)
        mine = sum(1 for _ in range(20)
                   if c.execute_command("CL.THROTTLE", k, 49, 1, 3600)[0] == 0)
        c.close()
        with lock:
            allowed.append(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(allowed) == 50  # limit = max_burst + 1, whoever asked


def test_sluice_check_decides_with_configured_rules(sluice_with_rules):
    c = redis.Redis(host="127.0.0.1", port=sluice_with_rules.port, socket_timeout=5)
    first = c.execute_command("SLUICE.CHECK", "api", "10.0.0.1")
    assert first[0] == 0 and first[1] == 2 and first[2] == 1
    assert c.execute_command("SLUICE.CHECK", "api", "10.0.0.1")[0] == 0
    denied = c.execute_command("SLUICE.CHECK", "api", "10.0.0.1")
    assert denied[0] == 1 and denied[3] > 0  # retry_after in seconds
    assert c.execute_command("SLUICE.CHECK", "api", "10.0.0.2")[0] == 0  # its own key
    with pytest.raises(redis.ResponseError, match="unknown rule 'web'"):
        c.execute_command("SLUICE.CHECK", "web", "10.0.0.1")
    with pytest.raises(redis.ResponseError, match="invalid cost '0'"):
        c.execute_command("SLUICE.CHECK", "api", "10.0.0.3", 0)
    c.close()


# --- raw protocol ------------------------------------------------------------------------

def test_pipelined_raw_requests_answer_in_order(raw):
    c = raw()
    k = key().encode()
    req = (b"PING\r\n"
           b"*5\r\n$11\r\nCL.THROTTLE\r\n$" + str(len(k)).encode() + b"\r\n" + k +
           b"\r\n$1\r\n0\r\n$1\r\n1\r\n$2\r\n10\r\n"
           b"ECHO hello\r\n"
           b"*1\r\n$4\r\nPING\r\n")
    want = b"+PONG\r\n*5\r\n:0\r\n:1\r\n:0\r\n:-1\r\n:10\r\n$5\r\nhello\r\n+PONG\r\n"
    assert c.exchange(req, want) == want


def test_requests_split_byte_by_byte(raw):
    c = raw()
    for b in b"*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n":
        c.send(bytes([b]))
    out, _ = c.read_until(lambda b: b.endswith(b"abc\r\n"))
    assert out == b"$3\r\nabc\r\n"


def test_hello_3_switches_the_connection_to_resp3(raw):
    c = raw()
    c.send(b"HELLO 3\r\n")
    out, _ = c.read_until(lambda b: b.endswith(b"$7\r\nmodules\r\n*0\r\n"))
    assert out.startswith(b"%7\r\n$6\r\nserver\r\n$6\r\nsluice\r\n")
    assert b"$5\r\nproto\r\n:3\r\n" in out
    assert c.exchange(b"CLIENT GETNAME\r\n", b"_\r\n") == b"_\r\n"
    assert c.exchange(b"COMMAND DOCS\r\n", b"%0\r\n") == b"%0\r\n"
    want = b"*5\r\n:0\r\n:1\r\n:0\r\n:-1\r\n:1\r\n"
    assert c.exchange(b"CL.THROTTLE " + key().encode() + b" 0 1 1\r\n", want) == want


def test_quit_closes_after_replying(raw):
    c = raw()
    c.send(b"QUIT\r\nPING\r\n")
    out, closed = c.read_until(lambda b: False, timeout=2)
    assert out == b"+OK\r\n" and closed


@pytest.mark.parametrize("bad, error", [
    (b"*1\r\n$999999999999\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*2000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n:1\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    (b"PING \"open\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
])
def test_protocol_errors_reply_then_close(sluice, raw, bad, error):
    other = raw()
    assert other.exchange(b"PING\r\n", b"+PONG\r\n") == b"+PONG\r\n"
    c = raw()
    c.send(bad)
    out, closed = c.read_until(lambda b: False, timeout=2)
    assert out == error and closed
    # Other connections, and the server, are unaffected.
    assert other.exchange(b"PING\r\n", b"+PONG\r\n") == b"+PONG\r\n"
    assert sluice.alive()


def test_binary_garbage_and_huge_announcements_keep_the_server_up(sluice, raw):
    garbage = bytes((i * 131 + 7) % 256 for i in range(100_000))
    for payload in (garbage, b"*1\r\n$536870912\r\n" + b"x" * 10_000,
                    b"*1024\r\n" + b"$1\r\nx\r\n" * 10, b"x" * 200_000):
        c = raw()
        try:
            c.send(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        c.read_until(lambda b: False, timeout=0.5)
        c.close()
    assert sluice.alive()
    assert cli(sluice, "PING").strip() == "PONG"
