#!/usr/bin/python3
"""What a MULTI queue costs in memory: not a test, a program docs/resp.md quotes. It starts
`sluice serve --resp` (no config: the default caps), then three times opens a connection,
sends MULTI and COMMANDS PINGs of SIZE bytes (replies read as they come), and prints the
process's RSS before, at the end of the queueing, and 2 s after the client closed.

    /usr/bin/python3 tests/integration/resp/queue_memory.py [SLUICE_BIN] [COMMANDS] [SIZE]
"""
import os
import pathlib
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.dirname(here))
if len(sys.argv) > 1:
    os.environ["SLUICE_BIN"] = sys.argv[1]
from conftest import Sluice  # noqa: E402
from test_transaction_caps import queue_past_the_cap  # noqa: E402


def main():
    commands = int(sys.argv[2]) if len(sys.argv) > 2 else 20480
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 8192
    s = Sluice(pathlib.Path(tempfile.mkdtemp()))
    try:
        before = s.rss_mib()
        for _ in range(3):
            c, got = queue_past_the_cap(s.port, commands, size)
            peak = s.rss_mib()
            c.close()
            time.sleep(2)
            print(f"{commands} x {size} B: RSS {before:.0f} MiB before, {peak:.0f} MiB queued, "
                  f"{s.rss_mib():.0f} MiB 2 s after the close; {got.count(b'+QUEUED')} queued")
    finally:
        s.stop()


if __name__ == "__main__":
    main()
