"""What tests and benchmarks both need of the machine: free TCP ports on 127.0.0.1 for the
servers they start, and the CPU time a process has used.

Plain Python with no third-party imports, so the benchmarks (run by any python3) share it.
"""
import os
import random
import socket
import sys

# Ports handed out by free_port below the kernel's ephemeral range (32768-60999 by default):
# there no bind to port 0 and no outgoing connection can take one between the choice and the
# server's bind, and the set keeps one test process from handing out a port twice (two calls
# in a row to a bind on port 0 may return the same port). The C++ tests' redis-server ports
# (tests/unit/redis/redis_process.hpp) take 20000-39999, so these stay below.
_PORT_RANGE = (10000, 19999)
_handed_out = set()


def free_port():
    """A port free on 127.0.0.1 right now, never one this process handed out before."""
    rng = random.Random()
    for _ in range(1000):
        port = rng.randint(*_PORT_RANGE)
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port in {_PORT_RANGE} after 1000 tries")


def cpu_seconds(pid):
    """User + system CPU time process `pid` has used so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    # `python3 plain_support.py N` prints N distinct free ports, one per line (for shell scripts).
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    print("\n".join(str(free_port()) for _ in range(count)))
