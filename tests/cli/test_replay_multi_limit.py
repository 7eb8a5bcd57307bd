"""Several --limit options: a request is allowed only if every limit allows it, and a
denial charges none of them (nginx's check-all-then-commit)."""
import pytest

A = "fixed-window:limit=2,window=10s"   # windows [0,10s), [10s,20s)
B = "fixed-window:limit=1,window=3s"    # windows [0,3s), [3s,6s), [9s,12s), ...

# t=0    A 1/2, B 1/1                    -> allowed
# t=1s   B full                          -> denied; A must stay at 1
# t=3s   B fresh; A 2/2 (3/2 had t=1s been charged to A)          -> allowed
# t=9.5s B fresh ([9s,12s)); A full      -> denied; B must stay at 0
# t=10s  A fresh; B 1/1 (2/1 had t=9.5s been charged to B)        -> allowed
# t=11s  B full                          -> denied
TRACE = "0,k\n1000000,k\n3000000,k\n9500000,k\n10000000,k\n11000000,k\n"
EXPECTED = [1, 0, 1, 0, 1, 0]


@pytest.mark.parametrize("order", [(A, B), (B, A)], ids=["A-then-B", "B-then-A"])
def test_denial_by_one_limit_charges_none_of_the_others(allowed, order):
    args = [a for spec in order for a in ("--limit", spec)]
    assert allowed(TRACE, *args) == EXPECTED


def test_each_limit_alone_would_decide_differently(allowed):
    # the combined answer is not just one limit's answer
    assert allowed(TRACE, "--limit", A) == [1, 1, 0, 0, 1, 1]
    assert allowed(TRACE, "--limit", B) == [1, 0, 1, 1, 0, 0]


def test_denial_charges_none_across_algorithms(allowed):
    # token bucket: 2 tokens, refill 1/h; gcra 1/s burst 0: one request per second
    # t=0 both allow (tokens 1); t=0.5s gcra denies (tokens stay 1); t=1s both allow (tokens 0)
    # -- had t=0.5s taken a token, t=1s would be denied by the token bucket
    trace = "0,k\n500000,k\n1000000,k\n1500000,k\n"
    args = ["--limit", "token-bucket:rate=1/h,burst=2", "--limit", "gcra:rate=1/s,burst=0"]
    assert allowed(trace, *args) == [1, 0, 1, 0]


def test_keys_are_independent_across_limits(allowed):
    trace = "0,a\n0,b\n1000000,a\n1000000,b\n"
    assert allowed(trace, "--limit", A, "--limit", B) == [1, 1, 0, 0]
