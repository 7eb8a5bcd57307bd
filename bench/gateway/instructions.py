#!/usr/bin/env python3
"""`make bench-instructions`: the instructions the gateway executes per proxied request, beside
nginx 1.22 limit_req on the same configs as bench/gateway/run.sh, counted by callgrind.

    /usr/bin/python3 bench/gateway/instructions.py [--build build/release] [--baseline BIN
        [--baseline-label TEXT]] [--requests 4000] [--no-docs]

On a shared machine req/s and CPU time move with whatever else runs; the count of user-space
instructions a process executes for a request hardly does (runs agree within 0.1% for nginx and
2% for sluice, whose deadline timers re-arm by the wall clock: a slower run has more). Each
target runs under `valgrind --tool=callgrind` twice, serving `n` and then `3n` requests sent
one at a time on one keep-alive connection; the difference divided by `2n` is what one request
costs, start-up and shutdown cancelled out; only the serving thread is counted (see counted()).
Kernel work (syscalls, TCP) is not counted: it is
in the CPU-time figures of run.sh. nginx runs with `master_process off` so that one process
does all the work, as sluice's one worker does.

Prints a table and writes it into docs/performance.md under "## Gateway instructions per
request" (replacing that section's previous run).
"""
import argparse
import datetime
import glob
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SECTION = "## Gateway instructions per request"
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from plain_support import free_port  # noqa: E402

BURST = 100
# The Gateway table's all-pass rate; and 1 a minute, so that past the burst (the same 101 in
# both runs of a target, cancelled out) every request is refused whatever the run's speed:
# the second row is what a refusal costs.
RUNS = [("pass", "rate 1000000/s (all pass)", "1000000r/s", "1000000/s"),
        ("reject", "rate 1/m, burst 100 (all refused past the burst)", "1r/m", "1/m")]


def render(template, out_path, values):
    with open(os.path.join(HERE, template)) as f:
        text = f.read()
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    with open(out_path, "w") as f:
        f.write(text)


def wait_port(port, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def send(port, n):
    """n GET requests one after another on one keep-alive connection: their status codes."""
    statuses = {}
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        buf = b""
        request = b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
        for _ in range(n):
            s.sendall(request)
            while True:
                end = buf.find(b"\r\n\r\n")
                if end >= 0:
                    head = buf[:end]
                    m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
                    length = int(m.group(1)) if m else 0
                    if len(buf) >= end + 4 + length:
                        status = int(head[9:12])
                        statuses[status] = statuses.get(status, 0) + 1
                        buf = buf[end + 4 + length:]
                        break
                chunk = s.recv(65536)
                if not chunk:
                    raise RuntimeError("the target closed the connection")
                buf += chunk
    return statuses


def stop(proc, port, sig):
    """Stops a process under valgrind. Valgrind holds a signal back until the program's next
    step, so one that comes just as nginx goes back to epoll_wait waits for the next event:
    the signal is sent once the target idles, and again with a connection to wake it."""
    time.sleep(1)
    for _ in range(30):
        proc.send_signal(sig)
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                pass
    proc.kill()
    proc.wait()
    raise RuntimeError(f"{proc.args} did not stop on signal {sig}")


def counted(cmd, port, n, workdir):
    """Instructions the process's busiest thread executed, start to exit, serving n requests,
    with the statuses and that thread's self cost by function. The busiest thread is the one
    that serves (nginx has one; sluice's gateway worker): sluice's other threads (the admin
    loop, the config watcher) work on timers, per second rather than per request, so counting
    them would make the figure move with how long a run took."""
    out = os.path.join(workdir, "callgrind.out")
    for old in glob.glob(out + "*"):
        os.remove(old)
    log = os.path.join(workdir, "valgrind.log")
    with open(log, "w") as err:
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                                 f"--callgrind-out-file={out}", *cmd],
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_port(port, proc)
        statuses = send(port, n)
    finally:
        stop(proc, port, 2 if "sluice" in os.path.basename(cmd[0]) else 15)  # SIGINT / SIGTERM
    threads = []
    for path in glob.glob(out + "*"):
        with open(path) as f:
            m = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
        if m:
            threads.append((int(m.group(1)), path))
    if not threads:
        raise RuntimeError(f"no callgrind totals in {out}*")
    total, busiest = max(threads)
    return total, statuses, self_costs(busiest)


def self_costs(callgrind_out):
    """{function: instructions executed in its own code} from a callgrind output file."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", callgrind_out],
                          capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*\S)\s*$", line)
        if m and "PROGRAM TOTALS" not in m.group(2):
            name = short_name(m.group(2))
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def short_name(entry):
    """`???:ns::f<T>(args) [clone .actor] [/path/obj]` -> `ns::f [clone .actor]`."""
    entry = re.sub(r"\s*\[/[^\]]*\]$", "", entry)  # the object file
    entry = re.sub(r"^(\?\?\?|[^ :]*\.(S|c|cc|cpp|h|hpp)):", "", entry)  # the source file
    entry = entry.replace("(anonymous namespace)", "{anon}").replace("operator()", "operator{}")
    # Beast's parser is basic_parser<true> for requests, <false> for responses: kept apart.
    entry = entry.replace("basic_parser<true>", "basic_parser{request}")
    entry = entry.replace("basic_parser<false>", "basic_parser{response}")
    out, depth = [], 0
    for ch in entry:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return re.sub(r"@@\S+", "", "".join(out)).strip()


def per_request(cmd, port, n, workdir):
    """(instructions per request, statuses, {function: its own instructions per request})."""
    low, statuses, low_costs = counted(cmd, port, n, workdir)
    high, more, high_costs = counted(cmd, port, 3 * n, workdir)
    for k, v in more.items():
        statuses[k] = statuses.get(k, 0) + v
    functions = {f: (c - low_costs.get(f, 0)) / (2 * n) for f, c in high_costs.items()}
    return (high - low) / (2 * n), statuses, functions


def measure(args, workdir):
    ports = {name: free_port() for name in
             ["UPSTREAM_PORT", "PROXY_PORT", "SLUICE_PORT", "ADMIN_PORT"]}
    values = dict(ports, PREFIX=workdir, BURST=BURST)
    os.makedirs(os.path.join(workdir, "www"))
    with open(os.path.join(workdir, "www", "hello.txt"), "w") as f:
        f.write("hello from upstream\n")  # what the upstream serves (nginx-upstream.conf.in)
    render("nginx-upstream.conf.in", os.path.join(workdir, "upstream.conf"), values)
    upstream = subprocess.Popen(["nginx", "-p", workdir, "-c", os.path.join(workdir,
                                 "upstream.conf"), "-e", os.path.join(workdir, "upstream.err")])
    rows, profiles = [], {}
    try:
        wait_port(ports["UPSTREAM_PORT"], upstream)
        for run, label, nginx_rate, sluice_rate in RUNS:
            values.update(NGINX_RATE=nginx_rate, SLUICE_RATE=sluice_rate)
            render("nginx-proxy.conf.in", os.path.join(workdir, "proxy.conf"), values)
            render("sluice.yaml.in", os.path.join(workdir, "sluice.yaml"), values)
            targets = [("nginx 1.22 limit_req",
                        ["nginx", "-p", workdir, "-c", os.path.join(workdir, "proxy.conf"),
                         "-e", os.path.join(workdir, "proxy.err"), "-g", "master_process off;"],
                        ports["PROXY_PORT"]),
                       ("sluice serve", [os.path.join(args.build, "sluice"), "serve", "--config",
                                         os.path.join(workdir, "sluice.yaml")],
                        ports["SLUICE_PORT"])]
            if args.baseline:
                targets.append(("sluice serve (baseline binary)",
                                [args.baseline, "serve", "--config",
                                 os.path.join(workdir, "sluice.yaml")], ports["SLUICE_PORT"]))
            results = {}
            for name, cmd, port in targets:
                print(f"bench-instructions: {run}: {name}", file=sys.stderr)
                results[name] = per_request(cmd, port, args.requests, workdir)
            nginx = results["nginx 1.22 limit_req"]
            profiles[run] = results["sluice serve"][2]
            for name, (count, statuses, _) in results.items():
                # Behaviour first: every target answers the same statuses, in the same shares.
                if set(statuses) != set(nginx[1]):
                    raise RuntimeError(f"{run}: {name} answered {statuses}, nginx {nginx[1]}")
                refused = statuses.get(429, 0) / sum(statuses.values())
                rows.append((label, name, count, refused, nginx[0] / count))
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
    return rows, profiles


def profile_table(functions, label, count=12):
    """The functions that cost a request most instructions of their own, largest first."""
    total = sum(functions.values())
    top = sorted(functions.items(), key=lambda kv: -kv[1])[:count]
    lines = [f"Where sluice's instructions go, {label}: the {count} functions that cost a "
             f"request most in their own code (self cost per request, from the same runs).", "",
             "| function | instructions per request | share |", "|---|---:|---:|"]
    for name, cost in top:
        lines.append(f"| `{name}` | {cost:,.0f} | {cost / total:.1%} |")
    return lines


def table(rows, profiles, args):
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True,
                              text=True).stdout.strip()
    lines = [SECTION, "",
             f"Command: `make bench-instructions` (bench/gateway/instructions.py "
             f"--requests {args.requests}), {when}; {valgrind}, nginx 1.22 with "
             f"`master_process off`.", "",
             "User-space instructions per request (callgrind) of the thread that serves (nginx's "
             "one; sluice's gateway worker, not its admin and config threads, whose timers work "
             "per second), requests one at a time on one keep-alive connection, the same "
             "configs as the Gateway table (bench/gateway/). "
             "Steady where req/s is not: runs agree within 0.1% for nginx and 2% for sluice "
             "(its deadline timers re-arm by the wall clock), whatever the machine's load. Kernel "
             "work is not in it: read it beside the Gateway table's CPU µs/request, which has "
             "the kernel's share and many connections at once.", ""]
    if args.baseline:
        what = f" ({args.baseline_label})" if args.baseline_label else ""
        lines += [f"Baseline binary: {args.baseline}{what}, on the same config.", ""]
    lines += ["| run | target | instructions per request | answered 429 | nginx ÷ target |",
              "|---|---|---:|---:|---:|"]
    for label, name, count, refused, ratio in rows:
        lines.append(f"| {label} | {name} | {count:,.0f} | {refused:.1%} | {ratio:.2f} |")
    for run, label, _, _ in RUNS:
        lines += [""] + profile_table(profiles[run], label)
    return "\n".join(lines) + "\n"


def write_docs(text):
    path = os.path.join(ROOT, "docs", "performance.md")
    with open(path) as f:
        doc = f.read()
    start = doc.find(SECTION + "\n")
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(SECTION))
        doc = doc[:start] + text + (doc[end:] if end >= 0 else "")
    with open(path, "w") as f:
        f.write(doc)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--baseline", help="another sluice binary, measured beside this build's")
    p.add_argument("--baseline-label", help="what the baseline binary is, for the table")
    p.add_argument("--requests", type=int, default=4000)
    p.add_argument("--no-docs", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="sluice-instr-") as workdir:
        rows, profiles = measure(args, workdir)
    text = table(rows, profiles, args)
    print(text)
    if not args.no_docs:
        write_docs(text)
        print("bench-instructions: table written to docs/performance.md", file=sys.stderr)


if __name__ == "__main__":
    main()
