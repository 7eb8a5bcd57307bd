"""CL.THROTTLE through the engine: with `resp: {storage: redis}` two instances answer for one key
as one redis-cell would (the key's TAT lives in Redis), with redis-cell's exact replies."""
import redis

from integration_support import cell_reply_matches  # on sys.path through conftest

SHARED = """\
redis: {{url: "{redis}", timeout: 200ms}}
resp:
  storage: redis
  on_failure: fail-closed
"""


def test_two_instances_give_redis_cells_replies_for_a_shared_key(redis_server, instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, resp=True)
    b = instances(SHARED, rs.url, resp=True)
    clients = [redis.Redis(port=a.resp_port, socket_timeout=5),
               redis.Redis(port=b.resp_port, socket_timeout=5)]
    # redis-cell: max_burst 4 (limit 5), 1 per 60 s. Five at once, alternating instances.
    replies = [clients[i % 2].execute_command("CL.THROTTLE", "user:7", 4, 1, 60)
               for i in range(6)]
    assert [r[0] for r in replies] == [0, 0, 0, 0, 0, 1]  # limited
    assert [r[1] for r in replies] == [5] * 6             # limit = max_burst + 1
    assert [r[2] for r in replies] == [4, 3, 2, 1, 0, 0]  # remaining
    assert [r[3] for r in replies] == [-1] * 5 + [60]     # retry_after
    assert [r[4] for r in replies[:5]] == [60, 120, 180, 240, 300]  # reset_after
    # The same key with other parameters shares the TAT, as in redis-cell.
    assert clients[1].execute_command("CL.THROTTLE", "user:7", 9, 1, 60)[:3] == [0, 10, 4]
    assert rs.client().keys("sluice:{cl.throttle:user:7}*")
    # Errors are redis-cell's and leave the connection usable.
    try:
        clients[0].execute_command("CL.THROTTLE", "k", "x", 1, 1)
        raise AssertionError("expected an error")
    except redis.ResponseError as e:
        assert "Cell error: Couldn't parse as integer: x" in str(e)
    assert clients[0].execute_command("PING") is True


def test_local_storage_keeps_each_instance_on_its_own(instances):
    a = instances("resp: {{storage: local}}\n", resp=True)
    b = instances("resp: {{storage: local}}\n", resp=True)
    ca = redis.Redis(port=a.resp_port, socket_timeout=5)
    cb = redis.Redis(port=b.resp_port, socket_timeout=5)
    assert ca.execute_command("CL.THROTTLE", "k", 0, 1, 60)[0] == 0
    assert ca.execute_command("CL.THROTTLE", "k", 0, 1, 60)[0] == 1
    assert cb.execute_command("CL.THROTTLE", "k", 0, 1, 60)[0] == 0  # its own table



# CL.THROTTLE with quantity 0 (redis-cell's src/cell/mod.rs: "no update is performed allowing
# you to peek") on the TATs in Redis: the numbers the local table gives
# (resp/test_throttle_quantity_zero.py). The store used to refuse a cost of 0 before asking
# Redis: `ERR invalid quantity: too large for this rate`.
def test_quantity_zero_looks_at_the_shared_tat_without_taking(redis_server, instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, resp=True)
    b = instances(SHARED, rs.url, resp=True)
    ca = redis.Redis(port=a.resp_port, socket_timeout=5)
    cb = redis.Redis(port=b.resp_port, socket_timeout=5)
    # max_burst 4, 1 per 60 s: T = 60 s, tolerance 300 s, limit 5.
    assert cell_reply_matches(ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0),
                              [0, 5, 5, -1, 0])
    for c in (ca, cb):
        c.execute_command("CL.THROTTLE", "q0", 4, 1, 60)
    assert cell_reply_matches(cb.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0),
                              [0, 5, 3, -1, 120])
    assert cell_reply_matches(ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0),
                              [0, 5, 3, -1, 120])
    for _ in range(3):
        ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60)
    assert cell_reply_matches(cb.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0),
                              [0, 5, 0, -1, 300])
    assert cell_reply_matches(ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60),
                              [1, 5, 0, 60, 300])


def test_quantity_zero_is_limited_when_a_larger_burst_left_the_shared_tat_ahead(redis_server,
                                                                                instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, resp=True)
    c = redis.Redis(port=a.resp_port, socket_timeout=5)
    for _ in range(10):
        assert c.execute_command("CL.THROTTLE", "wide", 9, 1, 60)[0] == 0
    assert cell_reply_matches(c.execute_command("CL.THROTTLE", "wide", 4, 1, 60, 0),
                              [1, 5, 0, 300, 600])
