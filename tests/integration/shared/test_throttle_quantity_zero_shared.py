"""CL.THROTTLE with quantity 0 when the TATs live in Redis (`resp: {storage: redis}`): the look
redis-cell answers (src/cell/mod.rs: quantity 0 performs no update), the same numbers as the
local table. The store used to refuse a cost of 0 before asking Redis, so this answered
`ERR invalid quantity: too large for this rate`."""
import redis

SHARED = """\
redis: {{url: "{redis}", timeout: 200ms}}
resp:
  storage: redis
  on_failure: fail-closed
"""


def test_quantity_zero_looks_at_the_shared_tat_without_taking(redis_server, instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, resp=True)
    b = instances(SHARED, rs.url, resp=True)
    ca = redis.Redis(port=a.resp_port, socket_timeout=5)
    cb = redis.Redis(port=b.resp_port, socket_timeout=5)
    # max_burst 4, 1 per 60 s: T = 60 s, tolerance 300 s, limit 5.
    assert ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0) == [0, 5, 5, -1, 0]
    for c in (ca, cb):
        c.execute_command("CL.THROTTLE", "q0", 4, 1, 60)
    assert cb.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0) == [0, 5, 3, -1, 120]
    assert ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0) == [0, 5, 3, -1, 120]
    for _ in range(3):
        ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60)
    assert cb.execute_command("CL.THROTTLE", "q0", 4, 1, 60, 0) == [0, 5, 0, -1, 300]
    assert ca.execute_command("CL.THROTTLE", "q0", 4, 1, 60) == [1, 5, 0, 60, 300]


def test_quantity_zero_is_limited_when_a_larger_burst_left_the_shared_tat_ahead(redis_server,
                                                                                instances):
    rs = redis_server()
    a = instances(SHARED, rs.url, resp=True)
    c = redis.Redis(port=a.resp_port, socket_timeout=5)
    for _ in range(10):
        assert c.execute_command("CL.THROTTLE", "wide", 9, 1, 60)[0] == 0
    assert c.execute_command("CL.THROTTLE", "wide", 4, 1, 60, 0) == [1, 5, 0, 300, 600]
