#!/usr/bin/python3
"""How fast a client can guess a RESP password: not a test (no timing in tests), a program
docs/resp.md quotes. It starts `sluice serve` with a password, then for SECONDS seconds runs
PROCS processes, each pipelining batches of BATCH wrong AUTHs on one connection, reconnecting
whenever the server closes it, and counts the replies: WRONGPASS (a password was looked at,
the guesser learnt something) and "not checked" (refused unseen).

    /usr/bin/python3 tests/integration/resp/auth_guess_rate.py [SLUICE_BIN] [SECONDS] [PROCS]
"""
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from plain_support import free_port  # noqa: E402

BATCH = 1000
AUTH = b"*2\r\n$4\r\nAUTH\r\n$5\r\nwrong\r\n"


def guess(port, seconds, out):
    checked = refused = connections = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s = socket.create_connection(("127.0.0.1", port))
        connections += 1
        pending = b""
        try:
            while time.monotonic() < deadline:
                s.sendall(AUTH * BATCH)
                want = BATCH
                while want > 0:
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        raise ConnectionError
                    data = pending + chunk
                    lines = data.split(b"\r\n")
                    pending = lines.pop()
                    want -= len(lines)
                    checked += sum(1 for l in lines if l.startswith(b"-WRONGPASS"))
                    refused += sum(1 for l in lines if l.startswith(b"-ERR AUTH not checked"))
        except (ConnectionError, OSError):
            pass
        finally:
            s.close()
    out.put((checked, refused, connections))


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/release/sluice"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "secret"), "w") as f:
            f.write("correct-horse-battery-staple\n")
        with open(os.path.join(d, "sluice.yaml"), "w") as f:
            f.write(f'resp:\n  password_file: "{d}/secret"\n')
        port = free_port()
        server = subprocess.Popen([binary, "serve", "--config", os.path.join(d, "sluice.yaml"),
                                   "--resp", f"127.0.0.1:{port}", "--admin",
                                   f"127.0.0.1:{free_port()}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port)).close()
                    break
                except OSError:
                    time.sleep(0.05)
            q = multiprocessing.Queue()
            workers = [multiprocessing.Process(target=guess, args=(port, seconds, q))
                       for _ in range(procs)]
            for w in workers:
                w.start()
            results = [q.get() for _ in workers]
            for w in workers:
                w.join()
        finally:
            server.terminate()
            server.wait()
    checked = sum(r[0] for r in results)
    refused = sum(r[1] for r in results)
    connections = sum(r[2] for r in results)
    print(f"{binary}: {seconds:.0f} s, {procs} clients: {checked / seconds:,.0f} passwords "
          f"checked a second, {refused / seconds:,.0f} refused unchecked a second, "
          f"{connections / seconds:,.0f} connections a second")


if __name__ == "__main__":
    main()
