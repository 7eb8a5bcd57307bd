"""GET /v1/rules/{name}/blocks on a rule kept in Redis: two sluice instances on one real
redis-server (and a three-master cluster) list every instance's blocks, the longest time left
first, with the time left Redis enforces; a block lifted through one instance leaves both
listings; an ended block and its list go away; the list's cap holds; a key with odd bytes is
listed exactly. docs/admin-api.md, "Blocks"; docs/distributed.md, "Bans and charged refusals"."""
import time

import requests

from test_bans_redis import CONFIG, get

LIST = "sluice:blocks:{login}"
CAPACITY = 10000


def config(block="10m"):
    """test_bans_redis's login rule (gcra 2/s, burst 1: the third request at once is refused),
    blocking for `block`."""
    return CONFIG.replace("block: 10m", "block: " + block)


def ban(g, user):
    assert [get(g, user).status_code for _ in range(3)] == [200, 200, 429]


def listing(g, query=""):
    r = requests.get(f"{g.admin}/v1/rules/login/blocks{query}", timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def keys(listed):
    return [b["key"] for b in listed["blocks"]]


def left(listed):
    return {b["key"]: b["retry_after_ms"] for b in listed["blocks"]}


def test_every_instance_lists_every_block_until_one_lifts_it(redis_server, gateways):
    rs = redis_server()
    a, b = gateways(config(), rs.url, n=2)
    assert listing(a)["blocks"] == [] and listing(a)["storage"] == "redis"
    for g, user in ((a, "u1"), (b, "u2"), (a, "u3")):
        ban(g, user)
        time.sleep(0.05)
    assert get(b, "u4").status_code == 200  # admitted: not listed
    first = listing(a)
    assert keys(first) == ["u3", "u2", "u1"], first
    assert keys(listing(b)) == keys(first), "the other instance lists the same blocks"
    assert (first["count"], first["total"], first["truncated"], first["capacity"]) == \
        (3, 3, False, CAPACITY)
    for user, ms in left(first).items():
        assert 598_000 <= ms <= 600_000, first
        assert abs(rs.cmd("PTTL", f"sluice:{{login:{user}}}:gcra:block") - ms) < 1_000
    assert keys(listing(b, "?n=2")) == ["u3", "u2"] and listing(b, "?n=2")["truncated"] is True

    time.sleep(1.1)
    later = left(listing(b))
    for user, ms in left(first).items():
        assert 1_000 <= ms - later[user] <= 3_000, (user, ms, later[user])

    lifted = requests.delete(f"{b.admin}/v1/rules/login/blocks/u2", timeout=5)
    assert lifted.json()["unblocked"] is True
    assert keys(listing(a)) == ["u3", "u1"] and keys(listing(b)) == ["u3", "u1"]
    assert rs.cmd("ZSCORE", LIST, "u2") is None, "taken off the list, not only filtered"
    assert listing(a)["total"] == 2


def test_a_block_lifted_without_the_list_knowing_is_not_listed(redis_server, gateways):
    rs = redis_server()
    a = gateways(config(), rs.url)
    ban(a, "u1")
    ban(a, "u2")
    rs.cmd("DEL", "sluice:{login:u1}:gcra:block")  # as if its ZREM had been lost
    listed = listing(a)
    assert keys(listed) == ["u2"]
    assert (listed["count"], listed["total"]) == (1, 2), "still a member, checked by its PTTL"


def test_an_ended_block_leaves_the_listing_and_the_list_expires_with_it(redis_server, gateways):
    rs = redis_server()
    a = gateways(config(block="1s"), rs.url)
    ban(a, "brief")
    assert keys(listing(a)) == ["brief"]
    assert 0 < rs.cmd("PTTL", LIST) <= 1_000, "the list lives as long as its last block"
    time.sleep(1.2)
    assert listing(a)["blocks"] == [] and listing(a)["total"] == 0
    assert rs.cmd("EXISTS", LIST) == 0


def test_the_list_keeps_at_most_its_capacity_and_pushes_out_the_soonest_ending(redis_server,
                                                                               gateways):
    rs = redis_server()
    a = gateways(config(), rs.url)
    now_ms = int(time.time() * 1000)
    # A full list of blocks ending within the next minute (their block keys are not there: each
    # is checked and left out of the listing).
    client = rs.client()
    pipe = client.pipeline(transaction=False)
    for i in range(CAPACITY):
        pipe.zadd(LIST, {f"old-{i:05d}": now_ms + 60_000 + i})
    pipe.execute()
    ban(a, "fresh")  # ends in 10 minutes: after all of them
    assert rs.cmd("ZCARD", LIST) == CAPACITY
    assert rs.cmd("ZSCORE", LIST, "old-00000") is None, "the one ending soonest went out"
    assert rs.cmd("ZSCORE", LIST, "old-00001") is not None
    assert 590_000 <= rs.cmd("PTTL", LIST) <= 600_000, "the list expires with its last block"
    listed = listing(a, "?n=5")
    assert keys(listed) == ["fresh"], listed
    assert (listed["count"], listed["total"], listed["truncated"]) == (1, CAPACITY, True)


def test_a_key_with_odd_bytes_is_listed_exactly_and_lifted_by_it(redis_server, gateways):
    rs = redis_server()
    a = gateways(config(), rs.url)
    raw = b"\xff\"q\\ \xc3\xa9"  # an invalid byte, a quote, a backslash, a valid é
    for want in (200, 200, 429):
        assert requests.get(a.url + "/", headers={"X-User": raw}, timeout=5).status_code == want
    [entry] = listing(a)["blocks"]
    assert entry["key_hex"] == raw.hex()
    assert entry["key"] == "\\xFF\"q\\ \u00e9"
    assert rs.cmd("ZSCORE", LIST, raw) is not None, "Redis holds the key's own bytes"
    r = requests.delete(f"{a.admin}/v1/rules/login/blocks/%FF%22q%5C%20%C3%A9", timeout=5)
    assert r.json()["unblocked"] is True
    assert listing(a)["blocks"] == []
    assert get(a, "x").status_code == 200


def test_the_listing_answers_503_while_redis_is_down(redis_server, gateways):
    rs = redis_server()
    a = gateways(config(), rs.url)
    ban(a, "u1")
    rs.stop()
    r = requests.get(f"{a.admin}/v1/rules/login/blocks", timeout=10)
    assert (r.status_code, r.json()["field"]) == (503, "storage"), r.text


def test_a_cluster_lists_blocks_whose_keys_live_on_every_master(redis_cluster, gateways):
    g = gateways(config(), redis_cluster.url(seeds=1))
    users = [f"u{i}" for i in range(8)]
    for user in users:
        ban(g, user)
    owners = {redis_cluster.owner(redis_cluster.keyslot(f"sluice:{{login:{u}}}:gcra"))
              for u in users}
    assert len(owners) > 1, "the blocks' PTTLs go to more than one master"
    listed = listing(g)
    assert sorted(keys(listed)) == users and listed["total"] == 8
    assert requests.delete(f"{g.admin}/v1/rules/login/blocks/u3", timeout=5).json()["unblocked"]
    assert "u3" not in keys(listing(g)) and listing(g)["total"] == 7


def test_under_log_key_hash_the_listing_shows_the_keys_hash(redis_server, gateways):
    rs = redis_server()
    a = gateways(config().replace("    on_deny:", "    log_key: hash\n    on_deny:"), rs.url)
    ban(a, "secret-user")
    listed = listing(a)
    assert listed["hashed"] is True
    top = requests.get(f"{a.admin}/v1/rules/login/top?by=denied", timeout=5).json()
    assert keys(listed) == [top["keys"][0]["key"]], "the hash the top keys and access log show"
    assert len(listed["blocks"][0]["key"]) == 16 and "secret" not in listed["blocks"][0]["key"]
    assert rs.cmd("ZSCORE", LIST, "secret-user") is not None, "Redis keeps the key to check it"
