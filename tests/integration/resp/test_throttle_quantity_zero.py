"""CL.THROTTLE with quantity 0 answers as redis-cell 0.4 does (brandur/redis-cell
src/cell/mod.rs, rate_limit with quantity 0: "no update is performed allowing you to peek"):
the increment is 0, so new_tat = max(tat, now) and the key's TAT stays as it was; it is limited
only when the stored TAT is beyond now + this call's tolerance (a key charged under a larger
burst), with retry_after that excess. Sluice's own table (resp storage local)."""
import uuid

import redis

from integration_support import cell_reply_matches  # on sys.path through conftest


def throttle(c, key, *args):
    return c.execute_command("CL.THROTTLE", key, *args)


def test_quantity_zero_looks_without_taking_as_redis_cell(sluice):
    c = redis.Redis(host="127.0.0.1", port=sluice.port, socket_timeout=5)
    k = f"q0:{uuid.uuid4().hex[:8]}"
    # max_burst 4, 1 per 60 s: T = 60 s, tolerance 300 s, limit 5.
    assert cell_reply_matches(throttle(c, k, 4, 1, 60, 0), [0, 5, 5, -1, 0])
    for _ in range(2):
        c.execute_command("CL.THROTTLE", k, 4, 1, 60)
    # TAT = now + 120 s: remaining (300 - 120) / 60 = 3, reset_after 120; twice the same.
    assert cell_reply_matches(throttle(c, k, 4, 1, 60, 0), [0, 5, 3, -1, 120])
    assert cell_reply_matches(throttle(c, k, 4, 1, 60, 0), [0, 5, 3, -1, 120])
    for _ in range(3):
        c.execute_command("CL.THROTTLE", k, 4, 1, 60)
    assert cell_reply_matches(throttle(c, k, 4, 1, 60, 0), [0, 5, 0, -1, 300])
    # The looks took nothing: the next quantity 1 is limited with the same numbers as ever.
    assert cell_reply_matches(throttle(c, k, 4, 1, 60), [1, 5, 0, 60, 300])


def test_quantity_zero_is_limited_when_a_larger_burst_left_the_tat_ahead(sluice):
    c = redis.Redis(host="127.0.0.1", port=sluice.port, socket_timeout=5)
    k = f"q0:{uuid.uuid4().hex[:8]}"
    for _ in range(10):  # max_burst 9: TAT = now + 600 s
        assert c.execute_command("CL.THROTTLE", k, 9, 1, 60)[0] == 0
    # With max_burst 4 (tolerance 300 s): diff = now - (TAT - 300 s) = -300 s < 0, limited;
    # increment 0 <= tolerance, so retry_after = 300 s; remaining 0; reset_after = TAT - now.
    assert cell_reply_matches(throttle(c, k, 4, 1, 60, 0), [1, 5, 0, 300, 600])
    assert cell_reply_matches(throttle(c, k, 9, 1, 60, 0), [0, 10, 0, -1, 600])
