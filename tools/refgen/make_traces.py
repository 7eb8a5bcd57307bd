#!/usr/bin/python3
"""Write the deterministic replay traces used by the golden tests.

    /usr/bin/python3 tools/refgen/make_traces.py [OUT_DIR]   (default: tests/golden/traces)

Every trace is `t_us,key,cost` CSV, non-decreasing in time, with fixed seeds, so running
this twice gives byte-identical files. Generic traces exercise edge cases at any rate;
`spacing_rR` and `poisson_rR` are built for a base rate of R requests/s (R in RATES).
"""
import math
import os
import random
import sys

SEC = 1_000_000  # microseconds
RATES = [3, 4, 5, 7, 10]          # base rates (per second) that the golden configs use
MULTIPLIERS = [("x0.5", 0.5), ("x1", 1.0), ("x3", 3.0)]


def write(out_dir, name, header, rows):
    rows = list(rows)
    last = -1
    for t, key, cost in rows:
        assert t >= last, (name, t, last)
        assert "," not in key and key and cost >= 1
        last = t
    path = os.path.join(out_dir, name + ".csv")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for h in header:
            f.write("# " + h + "\n")
        for t, key, cost in rows:
            # cost column omitted for some cost-1 rows to exercise the default
            f.write(f"{t},{key}\n" if cost == 1 and t % 7 == 3 else f"{t},{key},{cost}\n")
    return len(rows)


def burst_then_steady():
    rows = [(0, "a", 1)] * 40                      # 40 at one instant
    t = 0
    for _ in range(60):                            # 20/s for 3 s
        t += 50_000
        rows.append((t, "a", 1))
    for _ in range(15):                            # 5/s for 3 s
        t += 200_000
        rows.append((t, "a", 1))
    for _ in range(20):                            # 10/s for 2 s
        t += 100_000
        rows.append((t, "a", 1))
    return ["a burst of 40 at t=0, then 20/s for 3s, 5/s for 3s, 10/s for 2s"], rows


def frozen_clock():
    rows = [(0, "a", 1)]
    t = 2_500_000
    rng = random.Random(7)
    for i in range(110):                           # clock does not move: 110 requests at t
        key = "a" if i % 3 else "b"
        cost = 1 if rng.random() < 0.8 else rng.choice([2, 3, 4])
        rows.append((t, key, cost))
    rows += [(t + 1, "a", 1), (t + 1, "b", 1), (t + 1, "c", 1), (t + 1, "c", 1)]
    rows += [(t + 100_000, "a", 1), (t + 100_000, "b", 1), (t + 1_000_000, "a", 1)]
    return ["many requests at the same instant (t=2.5s), several keys, then tiny steps"], rows


def idle_gaps():
    rows = []
    t = 0
    gaps = [100_000, 500_000, 1 * SEC, 2 * SEC, 3 * SEC, 5 * SEC, 60 * SEC, 600 * SEC]
    for g in [0] + gaps:  # 9 bursts
        t += g
        for i in range(22):                        # 12 at one instant, 10 spaced 1 ms
            rows.append((t + max(0, i - 11) * 1000, "a", 1))
        t += 10 * 1000
    return ["bursts of 22 separated by idle gaps from 100ms to 10min (refill)"], rows


def costs():
    rng = random.Random(11)
    rows = []
    seq_a = [1, 2, 5, 10, 19, 20, 21, 25, 50, 3, 1, 1, 4, 6, 8, 1, 20, 1, 100, 2]
    t = 0
    for c in seq_a * 3:
        rows.append((t, "a", c))
        t += rng.choice([0, 50_000, 150_000, 400_000, 1 * SEC, 3 * SEC])
    # key b: random costs, steady times, merged with a
    tb = 0
    for _ in range(60):
        rows.append((tb, "b", rng.randint(1, 30)))
        tb += 300_000
    rows.sort(key=lambda r: r[0])
    return ["cost > 1 and cost > burst (up to 100), two keys"], rows


def multikey():
    rng = random.Random(23)
    keys = [("user:1", 2.0), ("user:2", 8.0), ("10.0.0.1", 15.0), ("k with space", 4.0),
            ("\u043a\u043b\u044e\u0447", 6.0), ("Z", 30.0)]
    rows = []
    for key, r in keys:
        t = rng.randint(0, 500_000)
        for _ in range(int(5 * r)):
            rows.append((t, key, 1 if rng.random() < 0.9 else 2))
            t += int(rng.expovariate(r) * SEC)
            if t > 5 * SEC:
                break
    rows.sort(key=lambda r: r[0])                  # stable: per-key order preserved
    return ["six keys at different rates interleaved (incl. spaces, UTF-8)"], rows


def hour_jump():
    H = 3600 * SEC
    rows = []
    for i in range(30):
        rows.append((i * 10_000, "a", 1))
    t = 3 * H + 123                                # jump of 3 hours
    for i in range(30):
        rows.append((t + i * 5_000, "a", 1))
        if i % 3 == 0:
            rows.append((t + i * 5_000, "late", 1))  # key first seen after the jump
    t += 49 * H                                    # jump of 49 hours
    for i in range(30):
        rows.append((t + i * 20_000, "a", 2 if i % 4 == 0 else 1))
        rows.append((t + i * 20_000, "late", 1))
    t += 1000 * H                                  # ~6 weeks
    for i in range(10):
        rows.append((t, "a", 1))
        rows.append((t, "newest", 1))
    return ["jumps of 3h, 49h and 1000h; keys created long after t=0"], rows


def spacing(rate):
    interval = SEC / rate                          # emission interval, maybe fractional
    rows = []
    for key in ("exact", "early", "late"):
        rows += [(0, key, 1)] * 22                 # drain any burst (max burst used is 20)
    for k in range(1, 31):
        slot = math.ceil(k * interval - 1e-9)      # first whole µs at/after the k-th slot
        rows += [(slot - 1, "early", 1), (slot, "exact", 1), (slot + 1, "late", 1)]
    rows.sort(key=lambda r: r[0])
    return [f"22 at t=0 per key, then one request per emission interval ({interval:.3f}us) "
            "exactly (ceil to us), 1us before and 1us after"], rows


def poisson(rate, seed):
    """One key per load level: 0.5x, 1x and 3x of the base rate."""
    rng = random.Random(seed)
    rows = []
    for key, mult in MULTIPLIERS:
        lam = rate * mult
        t = 0
        for _ in range(70):
            gap = rng.expovariate(lam) * SEC
            if rng.random() < 0.05:
                gap = 0                            # occasional clumps
            t += int(gap)
            rows.append((t, key, 1 if rng.random() < 0.9 else rng.choice([2, 3])))
    rows.sort(key=lambda r: r[0])
    return [f"Poisson-ish arrivals, key xM at M times {rate}/s (M = 0.5, 1, 3), 10% cost 2-3"], rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "tests", "golden", "traces")
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".csv"):
            os.remove(os.path.join(out_dir, f))
    total = 0
    gen = "generated by tools/refgen/make_traces.py; do not edit"
    for name, fn in [("burst_then_steady", burst_then_steady), ("frozen_clock", frozen_clock),
                     ("idle_gaps", idle_gaps), ("costs", costs), ("multikey", multikey),
                     ("hour_jump", hour_jump)]:
        hdr, rows = fn()
        total += write(out_dir, name, [gen] + hdr, rows)
    for i, r in enumerate(RATES):
        hdr, rows = spacing(r)
        total += write(out_dir, f"spacing_r{r}", [gen] + hdr, rows)
        hdr, rows = poisson(r, seed=1000 + i)
        total += write(out_dir, f"poisson_r{r}", [gen] + hdr, rows)
    print(f"make_traces: {len(os.listdir(out_dir))} traces, {total} requests -> {out_dir}")


if __name__ == "__main__":
    main()
