#!/usr/bin/python3
"""Drive Sluice's Redis script directly (no C++): a development aid for the Lua modules.

    /usr/bin/python3 tools/redis_script/drive.py --port P --alg NAME --params "F1 F2 ..."
        [--max-wait NS|-1] [--batch N] < trace.csv > decisions.csv

Composes src/backend/redis/lua/ (prelude, the algorithm modules, dispatch) as the build does,
sends each trace line through EVAL with the trace's virtual time, and prints decisions in
`sluice replay`'s format, so its output can be diffed against `sluice replay --limit ...`.
--params are the algorithm's C++ Params fields in declaration order (a Rate is count, period).
"""
import argparse
import os
import sys
import uuid

import redis

LUA_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "src", "backend", "redis", "lua")


def compose():
    names = sorted(n for n in os.listdir(LUA_DIR) if n.endswith(".lua"))
    names = ["prelude.lua"] + [n for n in names if n not in ("prelude.lua", "dispatch.lua")] + ["dispatch.lua"]
    return "\n".join(open(os.path.join(LUA_DIR, n), encoding="utf-8").read() for n in names)


SATURATED = 9223372036854774784  # the largest double below 2^63


def ceil_div(a, b):
    return -((-a) // b) if a > 0 else int(a / b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--alg", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--max-wait", default="0")
    args = ap.parse_args()
    r = redis.Redis(host="127.0.0.1", port=args.port)
    sha = r.script_load(compose())
    params = args.params.split()
    prefix = "drive:" + uuid.uuid4().hex + ":"
    for line in sys.stdin:
        line = line.rstrip("\n").rstrip("\r")
        if not line or line.startswith("#"):
            continue
        parts = line.split(",")
        t_us, key = int(parts[0]), parts[1]
        cost = int(parts[2]) if len(parts) > 2 and parts[2] != "" else 1
        now_ns = t_us * 1000
        argv = ["1", str(now_ns // 10**9), str(now_ns % 10**9), "1", args.alg, str(len(params))] + params
        argv += ["d", "", "", str(cost), args.max_wait, "1", "1", "1"]
        d = r.evalsha(sha, 1, prefix + key, *argv)
        allowed, delay, remaining, retry, _reset, _limit, overflow, _extra = d[:8]
        if overflow:
            print(f"line overflow at t_us={t_us}", file=sys.stderr)
            return 2
        # As the C++ codec reads them: the largest double below 2^63 is a saturated duration.
        if delay >= SATURATED:
            delay = 2**63 - 1
        if retry >= SATURATED:
            retry = 2**63 - 1
        delay_us = ceil_div(delay, 1000) if allowed else 0
        retry_us = 0 if allowed else (-1 if retry == -1 else ceil_div(retry, 1000))
        print(f"{t_us},{key},{cost},{allowed},{delay_us},{remaining},{retry_us}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
