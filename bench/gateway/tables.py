#!/usr/bin/env python3
"""The parsing and tables of bench/gateway/run.sh (make bench-gateway).

    tables.py wrk < WRK_OUTPUT             -> "req/s p50_ms p99_ms non2xx total"
    tables.py wrk-total < WRK_OUTPUT       -> the requests wrk saw answered
    tables.py syscalls perf|strace RAW N   -> "name calls errors" lines, then "requests N" (and,
                                              from perf, "task-clock-ms" and "context-switches")
    tables.py profile < PERF_SCRIPT        -> where the samples went ("category share" lines,
                                              then "fn share" lines for the user-space leaves)
    tables.py passes < PERF_SCRIPT         -> the event loop's passes (epoll_wait's exit to its
                                              next entry): "key value" lines
    tables.py report OUT_DIR perf|strace|off SYSCALL_REQUESTS -> the markdown tables

OUT_DIR holds SCENARIO-GATEWAY.txt, one line per timed round ("req/s p50 p99 non2xx total
cpu_ticks other_cpu1_ticks cpu1_ticks"), syscalls-SCENARIO-GATEWAY.txt from the syscall pass and
profile-SCENARIO-GATEWAY.txt from the profile pass (PROFILE=1) and passes-SCENARIO-GATEWAY.txt
from the loop-pass trace (PASSES=1).
"""
import os
import re
import statistics
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from instructions import short_name  # noqa: E402

SCENARIOS = {
    "reject": "almost all refused (rate 10/s, burst 5)",
    "pass": "all proxied (rate 1000000/s, burst 100)",
}
GATEWAYS = {
    "floor": "floor: a fixed 429 per head (floor.c)",
    "direct": "upstream direct (no gateway)",
    "nginx": "nginx 1.22 limit_req",
    "haproxy": "HAProxy 2.6 stick table",
    "sluice": "sluice serve",
    "baseline": "sluice serve (baseline binary)",
}
PEERS = ("nginx", "haproxy")
OURS = ("sluice", "baseline")


def parse_wrk(text):
    def ms(label):
        m = re.search(r"^\s*" + label + r"\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    total = int(re.search(r"(\d+) requests in", text).group(1))
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    return f"{rps:.0f} {ms('50%'):.3f} {ms('99%'):.3f} {int(m.group(1)) if m else 0} {total}"


def parse_perf(raw):
    """perf stat -x, output: {syscall: [calls, EAGAIN returns]}, and the software counters."""
    calls, extra = {}, {}
    for line in open(raw):
        f = line.strip().split(",")
        if len(f) < 3 or line.startswith("#"):
            continue
        try:
            value = float(f[0])
        except ValueError:
            continue  # <not counted>, <not supported>
        event = f[2]
        m = re.match(r"syscalls:sys_(enter|exit)_(\w+)", event)
        if m:
            entry = calls.setdefault(m.group(2), [0, 0])
            entry[0 if m.group(1) == "enter" else 1] += int(value)
        elif event == "task-clock":
            extra["task-clock-ms"] = value
        else:
            extra[event] = value
    return {k: v for k, v in calls.items() if v[0] > 0}, extra


def parse_strace(raw):
    """strace -c output: {syscall: [calls, errors]}."""
    calls = {}
    for line in open(raw):
        f = line.split()
        if len(f) in (5, 6) and re.match(r"^[\d.]+$", f[0]) and f[-1] != "total":
            errors = int(f[4]) if len(f) == 6 else 0
            calls[f[-1]] = [int(f[3]), errors]
    return calls, {}


def syscalls(mode, raw, requests):
    calls, extra = parse_perf(raw) if mode == "perf" else parse_strace(raw)
    lines = [f"{name} {c} {e}" for name, (c, e) in sorted(calls.items(), key=lambda kv: -kv[1][0])]
    lines += [f"{k} {v}" for k, v in extra.items()] + [f"requests {requests}"]
    print("\n".join(lines))


def read_syscalls(path):
    """({syscall: (calls per request, errors per request)}, {counter: value}, requests)."""
    rows, extra = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) == 3:
            rows[f[0]] = (int(f[1]), int(f[2]))
        elif len(f) == 2:
            extra[f[0]] = float(f[1])
    n = extra.pop("requests", 0) or 1
    return {k: (c / n, e / n) for k, (c, e) in rows.items()}, extra, int(n)


# A syscall's kernel function (the frame do_syscall_64 called) -> the call's name.
SYSCALL_PREFIXES = ("__x64_sys_", "__se_sys_", "__do_sys_", "__sys_", "ksys_", "do_sys_", "do_")
# Frames between do_syscall_64 and the call's own function (6.x's dispatch switch, thunks).
SYSCALL_DISPATCH = {"x64_sys_call", "srso_alias_return_thunk", "srso_return_thunk",
                    "__x86_return_thunk"}


# sluice's user-space samples by the code they are in, by the leaf function's name.
COMPONENTS = [
    ("boost::asio::", "Asio (scheduler, reactor, coroutine resumption)"),
    ("boost::beast::", "Beast (HTTP parsers, fields)"),
    ("sluice::server::", "server/gateway and server/common"),
    ("sluice::proto::", "proto/http (request fields, RateLimit fields)"),
    ("sluice::", "engine, limiters, tables (sluice::engine, local, core)"),
]
ALLOCATOR = ("malloc", "_int_malloc", "free", "_int_free", "cfree", "__libc_malloc",
             "__libc_free", "operator new", "operator delete", "malloc_consolidate",
             "tcache", "_int_free_merge_chunk", "__GI___libc_free", "__GI___libc_malloc")


def component(base, sym):
    """The part of a user-space sample: its library, or for sluice's own code its layer."""
    if base.startswith("libc."):
        name = sym.lstrip("_")
        if sym.startswith(ALLOCATOR) or name.startswith(("int_malloc", "int_free", "libc_malloc",
                                                         "libc_free", "GI___libc_")):
            return "libc: malloc and free"
        if name.startswith(("mem", "str", "GI_mem", "GI_str")):
            return "libc: mem* and str*"
        return "libc: other (syscall wrappers...)"
    if base == "sluice":
        # The qualified name: the first word with a scope in it (past a return type).
        name = next((w for w in sym.split("(")[0].split() if "::" in w), sym)
        for prefix, label in COMPONENTS:
            if name.startswith(prefix):
                return label
        return "sluice: other (std::, unnamed)"
    return "own code" if "." not in base and not base.startswith("[") else "other libraries"


def syscall_name(fn):
    for prefix in SYSCALL_PREFIXES:
        if fn.startswith(prefix):
            return fn[len(prefix):]
    return fn


def profile(lines):
    """perf script -F comm,tid,ip,sym,dso with call chains (leaf first) on stdin. Each sample
    goes to one category: user space (the gateway's own code, libc, other libraries) by its
    leaf, or kernel work by the syscall it is in (the frame below do_syscall_64), or the
    kernel outside any syscall (interrupts and the softirqs they run). Within a send, the
    loopback device delivers the segment to the peer's socket at once (net_rx_action): counted
    apart, as 'the peer's TCP receive'."""
    cats, fns, comps, total = Counter(), Counter(), Counter(), 0
    sample = []

    def flush():
        nonlocal total
        if not sample:
            return
        total += 1
        sym, dso = sample[0]
        if "kernel" not in dso:
            base = os.path.basename(dso)
            cats["user: libc" if base.startswith("libc.") else
                 "user: other libraries" if ".so" in base or base.startswith("[") else
                 "user: own code"] += 1
            fns[f"{base}: {short_name(sym) if sym != '[unknown]' else '?'}"] += 1
            comps[component(base, sym)] += 1
        else:
            names = [f for f, _ in sample]
            call = None
            if "do_syscall_64" in names:
                i = names.index("do_syscall_64") - 1
                while i >= 0 and names[i] in SYSCALL_DISPATCH:
                    i -= 1
                call = syscall_name(names[i]) if i >= 0 else "entry"
            if call is None:
                cats["kernel: interrupts, softirq"] += 1
            elif call in ("entry", "exit_to_user_mode_loop", "syscall_exit_to_user_mode"):
                cats["kernel: syscall entry and return (incl. preemption)"] += 1
            elif "net_rx_action" in names:
                cats["kernel: the peer's TCP receive (loopback, in a send)"] += 1
            else:
                cats[f"kernel: {call}"] += 1
        sample.clear()

    for line in lines:
        if not line.strip():
            flush()
        elif line[0] in " \t":
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)\s*$", line)
            if m:
                sample.append((m.group(1), m.group(2)))
        else:
            flush()
    flush()
    for k, v in cats.most_common():
        print(f"cat {v / total:.5f} {k}")
    for k, v in comps.most_common():
        print(f"comp {v / total:.5f} {k}")
    for k, v in fns.most_common(15):
        print(f"fn {v / total:.5f} {k}")
    print(f"samples {total}")


def read_profile(path):
    cats, fns, comps = {}, [], {}
    for line in open(path):
        f = line.rstrip("\n").split(" ", 2)
        if f[0] == "cat":
            cats[f[2]] = float(f[1])
        elif f[0] == "comp":
            comps[f[2]] = float(f[1])
        elif f[0] == "fn":
            fns.append((f[2], float(f[1])))
    return cats, fns, comps


def rounds(out, scenario, gateway, hz):
    path = f"{out}/{scenario}-{gateway}.txt"
    if not os.path.exists(path):
        return None
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    return {
        "rps": statistics.median(r[0] for r in rows),
        "p50": statistics.median(r[1] for r in rows),
        "p99": statistics.median(r[2] for r in rows),
        "cpu": statistics.median(r[5] / hz / r[4] * 1e6 for r in rows),
        "refused": sum(r[3] for r in rows) / max(1, sum(r[4] for r in rows)),
        "other": statistics.median(r[6] / r[7] for r in rows if r[7] > 0),
        "rounds": len(rows),
    }


def report(out, mode, n):
    hz = os.sysconf("SC_CLK_TCK")
    med, sys_rows = {}, {}
    for s in SCENARIOS:
        for g in GATEWAYS:
            r = rounds(out, s, g, hz)
            if r:
                med[s, g] = r
            path = f"{out}/syscalls-{s}-{g}.txt"
            if os.path.exists(path):
                sys_rows[s, g] = read_syscalls(path)

    def total_calls(s, g):
        if (s, g) not in sys_rows:
            return None
        return sum(c for c, _ in sys_rows[s, g][0].values())

    lines = ["| scenario | gateway | req/s | p50 ms | p99 ms | CPU µs/request | CPU ÷ nginx "
             "| syscalls/request | answered 429 | CPU 1 busy elsewhere |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s, title in SCENARIOS.items():
        for g, label in GATEWAYS.items():
            if (s, g) not in med:
                continue
            m, nginx = med[s, g], med[s, "nginx"]
            calls = total_calls(s, g)
            calls_text = f"{calls:.2f}" if calls is not None else ""
            lines.append(f"| {title} | {label} | {m['rps']:,.0f} | {m['p50']:.2f} | "
                         f"{m['p99']:.2f} | {m['cpu']:.2f} | {m['cpu'] / nginx['cpu']:.2f} | "
                         f"{calls_text} | {m['refused']:.1%} | {m['other']:.1%} |")
    lines += ["", "CPU 1 busy elsewhere: the median share of CPU 1's time, during a round, spent "
              "neither in the gateway nor in the upstream (other work on the machine, and "
              "interrupt work charged to no process).", ""]

    lines += ["Against the targets of issue 20 (best peer: the cheaper of nginx and HAProxy "
              "by CPU per request in this run):", "",
              "| scenario | target | best peer | CPU ÷ best peer (target) | req/s ÷ best peer "
              "(target) | p99 ÷ nginx (≤ 1) | syscalls ÷ nginx (≤ 1) |",
              "|---|---|---|---:|---:|---:|---:|"]
    targets = {"reject": (0.95, 1.0), "pass": (0.9, 1.05)}
    for s, title in SCENARIOS.items():
        best = min(PEERS, key=lambda g: med[s, g]["cpu"])
        for g in OURS:
            if (s, g) not in med:
                continue
            m, b, nginx = med[s, g], med[s, best], med[s, "nginx"]
            calls, nginx_calls = total_calls(s, g), total_calls(s, "nginx")
            ratio = f"{calls / nginx_calls:.2f}" if calls and nginx_calls else ""
            cpu_t, rps_t = targets[s]
            lines.append(f"| {title} | {GATEWAYS[g]} | {GATEWAYS[best]} | "
                         f"{m['cpu'] / b['cpu']:.2f} (≤ {cpu_t}) | {m['rps'] / b['rps']:.2f} "
                         f"(≥ {rps_t}) | {m['p99'] / nginx['p99']:.2f} | {ratio} |")

    if ("reject", "floor") in med:
        floor = med["reject", "floor"]["cpu"]
        shown = [g for g in ("nginx", "haproxy", "sluice", "baseline") if ("reject", g) in med]
        lines += ["", f"Against the floor (a fixed 429 per request head, no parsing: "
                  f"{floor:.2f} µs a refusal, {floor / med['reject', 'nginx']['cpu']:.2f}× "
                  f"nginx's), CPU per refused request: " + "; ".join(
                      f"{GATEWAYS[g]} {med['reject', g]['cpu'] / floor:.2f}× "
                      f"(+{med['reject', g]['cpu'] - floor:.2f} µs)" for g in shown) + "."]

    if sys_rows:
        how = ("`perf stat` on the syscall tracepoints (`syscalls:sys_enter_*`; EAGAIN: "
               "`sys_exit_*` of the read, write and accept calls filtered on `ret == -11`)"
               if mode == "perf" else "`strace -c -f` (errors: every error return)")
        lines += ["", f"Syscalls per request, by call: every process of the gateway over "
                  f"{n:,} requests (wrk with bench/gateway/count.lua, the same load), counted by "
                  f"{how}, in a pass after the timed rounds. In parentheses: the calls of that "
                  f"kind that returned {'EAGAIN' if mode == 'perf' else 'an error'}. Calls under "
                  f"0.005 per request are left out."]
        for s, title in SCENARIOS.items():
            gws = [g for g in GATEWAYS if (s, g) in sys_rows]
            if not gws:
                continue
            names = set()
            for g in gws:
                names |= {k for k, (c, _) in sys_rows[s, g][0].items() if c >= 0.005}
            order = sorted(names, key=lambda k: -max(sys_rows[s, g][0].get(k, (0, 0))[0]
                                                    for g in gws))
            lines += ["", f"{title}:", "",
                      "| syscall | " + " | ".join(GATEWAYS[g] for g in gws) + " |",
                      "|---|" + "---:|" * len(gws)]
            for k in order:
                cells = []
                for g in gws:
                    c, e = sys_rows[s, g][0].get(k, (0, 0))
                    cells.append(f"{c:.3f}" + (f" ({e:.3f})" if e >= 0.0005 else ""))
                lines.append(f"| {k} | " + " | ".join(cells) + " |")
            lines.append("| **all** | " + " | ".join(f"**{total_calls(s, g):.3f}**"
                                                    for g in gws) + " |")
            if mode == "perf":
                cs = [sys_rows[s, g][1].get("context-switches") for g in gws]
                if all(c is not None for c in cs):
                    lines.append("| context switches | " + " | ".join(
                        f"{c / sys_rows[s, g][2]:.3f}" for c, g in zip(cs, gws)) + " |")
    lines += pass_tables(out)
    lines += profile_tables(out, med)
    print("\n".join(lines))


def profile_tables(out, med):
    """Where a request's CPU goes: each category's share of the samples times the gateway's
    median CPU per request from the timed rounds."""
    lines = []
    for s, title in SCENARIOS.items():
        profs = {g: read_profile(f"{out}/profile-{s}-{g}.txt") for g in GATEWAYS
                 if g != "direct" and os.path.exists(f"{out}/profile-{s}-{g}.txt")}
        if not profs:
            continue
        if not lines:
            lines += ["", "Where a request's CPU goes (PROFILE=1: `perf record -g -e cpu-clock` of "
                      "every process of the gateway under the same load, after the timed rounds; "
                      "this VM has no hardware counters). Each sample goes to user space by its "
                      "leaf, or to the syscall it is in, or to the kernel outside syscalls; the "
                      "loopback device delivers a sent segment to the receiving socket inside the "
                      "send, counted apart. µs per request: a category's share of the samples "
                      "times the gateway's median CPU per request above."]
        cats = sorted({c for cs, _, _ in profs.values() for c in cs},
                      key=lambda c: -max(cs.get(c, 0) for cs, _, _ in profs.values()))
        shown = [c for c in cats if max(cs.get(c, 0) for cs, _, _ in profs.values()) >= 0.01]
        lines += ["", f"{title}, µs per request (share):", "",
                  "| where | " + " | ".join(GATEWAYS[g] for g in profs) + " |",
                  "|---|" + "---:|" * len(profs)]
        rest = {g: 1 - sum(cs.get(c, 0) for c in shown) for g, (cs, _, _) in profs.items()}
        for c in shown + ["other (each under 1%)"]:
            cells = []
            for g, (cs, _, _) in profs.items():
                share = cs.get(c, 0) if c in shown else rest[g]
                cells.append(f"{share * med[s, g]['cpu']:.2f} ({share:.0%})")
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        lines += ["", f"{title}, user space by part, µs per request (share of all samples):", ""]
        for g, (_, fns, comps) in profs.items():
            parts = "; ".join(f"{k} {v * med[s, g]['cpu']:.2f} ({v:.0%})"
                              for k, v in sorted(comps.items(), key=lambda kv: -kv[1])
                              if v >= 0.005)
            top = "; ".join(f"`{name.split(': ', 1)[1]}` {share:.1%}" for name, share in fns[:5])
            lines.append(f"- {GATEWAYS[g]}: {parts}. Functions with most samples: {top}")
    return lines


def passes(lines):
    """A loop pass: from an epoll_wait's return to the thread's next epoll_wait, the handlers of
    the events it returned (and whatever they posted) in between. From `perf script -F
    tid,time,event,trace` of sys_enter/sys_exit_epoll_wait; the busiest thread is the loop."""
    began, got = {}, {}
    per_thread = {}
    for line in lines:
        m = re.match(r"\s*(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_epoll_wait:\s*(\S*)",
                     line)
        if not m:
            continue
        tid, t, kind = m.group(1), float(m.group(2)), m.group(3)
        if kind == "exit":
            began[tid] = t
            got[tid] = int(m.group(4), 16) if m.group(4).startswith("0x") else 0
        elif tid in began:
            per_thread.setdefault(tid, []).append((t - began.pop(tid), got.pop(tid)))
    if not per_thread:
        return
    rows = max(per_thread.values(), key=len)
    lengths = sorted(d for d, _ in rows)
    events = sorted(e for _, e in rows)

    def q(v, f):
        return v[min(len(v) - 1, int(f * len(v)))]
    print(f"passes {len(rows)}")
    print(f"events_p50 {q(events, 0.5)}")
    print(f"events_max {events[-1]}")
    for name, f in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
        print(f"pass_ms_{name} {q(lengths, f) * 1e3:.3f}")
    print(f"pass_ms_max {lengths[-1] * 1e3:.3f}")


def pass_tables(out):
    """The loop-pass table (PASSES=1), one row per scenario and gateway."""
    rows = []
    for s, title in SCENARIOS.items():
        for g, label in GATEWAYS.items():
            path = f"{out}/passes-{s}-{g}.txt"
            if not os.path.exists(path):
                continue
            v = dict(line.split() for line in open(path) if line.strip())
            rows.append(f"| {title} | {label} | {int(v['passes']):,} | {v['events_p50']} | "
                        f"{v['events_max']} | {v['pass_ms_p50']} | {v['pass_ms_p99']} | "
                        f"{v['pass_ms_p999']} | {v['pass_ms_max']} |")
    if not rows:
        return []
    return ["", "Event-loop passes (PASSES=1: `perf record` of `syscalls:sys_enter_epoll_wait` and "
            "`sys_exit_epoll_wait` of the gateway under the same load, after the timed rounds): a "
            "pass runs from an epoll_wait's return to the loop thread's next epoll_wait, the "
            "handlers of the events it returned in between; wall time, so a pass that the kernel "
            "preempted counts the time it waited for CPU 1.", "",
            "| scenario | gateway | passes | events per pass, median | most events in a pass "
            "| pass ms, median | p99 | p99.9 | longest |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"] + rows


def main():
    cmd = sys.argv[1]
    if cmd == "wrk":
        print(parse_wrk(sys.stdin.read()))
    elif cmd == "wrk-total":
        print(re.search(r"(\d+) requests in", sys.stdin.read()).group(1))
    elif cmd == "syscalls":
        syscalls(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "profile":
        profile(sys.stdin)
    elif cmd == "passes":
        passes(sys.stdin)
    elif cmd == "report":
        report(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(f"tables.py: unknown command {cmd}")


if __name__ == "__main__":
    main()
