"""Real Redis for the tests of the Redis backend: a standalone redis-server and a three-master
Redis Cluster on free 127.0.0.1 ports, with no persistence and their files under a test's
temporary folder.

- RedisServer: start, SIGKILL (a crash), restart on the same port, stop.
- RedisCluster: three masters joined by `redis-cli --cluster create`; move_slot() migrates one
  slot and its keys by hand, step by step, the way `redis-cli --cluster reshard` does, so that
  a test can send traffic while the slot is MIGRATING/IMPORTING.

Every server started here is stopped by its owner (stop(), or the context manager) and, as a
last resort, when the Python process exits.
"""
import atexit
import os
import random
import socket
import subprocess
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from integration_support import free_port, wait_until  # noqa: E402

# Servers still running: killed at exit if a test or fixture failed before stopping them.
_running = set()


@atexit.register
def _kill_leftovers():
    for proc in list(_running):
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class RedisServer:
    """One redis-server on 127.0.0.1, on a free port unless `port` is given; `extra` arguments
    are appended to its command line. Returns from the constructor once it answers PING."""

    def __init__(self, directory, extra=(), port=None):
        self.port = port or free_port()
        self.dir = str(directory)
        self.extra = [str(a) for a in extra]
        self.url = f"redis://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.dir, f"redis-{self.port}.log")
        self.proc = None
        self._client = None
        self.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        assert self.proc is None or self.proc.poll() is not None, "already running"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", self.dir, *self.extra],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        _running.add(self.proc)
        self._client = None

        def answers():
            if self.proc.poll() is not None:
                raise AssertionError(f"redis-server on port {self.port} exited early:\n"
                                     + self.log_tail())
            try:
                return self.client().ping()
            except redis.exceptions.RedisError:
                return False

        try:
            wait_until(answers, timeout=10, interval=0.005,
                       what=f"redis-server on port {self.port} to answer PING")
        except BaseException:
            self.kill()
            raise

    def client(self):
        """A redis-py client of this server (one, reused)."""
        if self._client is None:
            self._client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10)
        return self._client

    def cmd(self, *args):
        """Sends one command; the reply as redis-py parses it."""
        return self.client().execute_command(*args)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines=20):
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")

    def _forget(self):
        if self._client is not None:
            self._client.close()
            self._client = None
        _running.discard(self.proc)

    def kill(self):
        """SIGKILL, as a crash: no goodbye to the clients."""
        if self.alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self._forget()

    def restart(self):
        """A fresh, empty server on the same port (killing the old one if it still runs)."""
        self.kill()
        self.start()

    def stop(self):
        """Stops for good (SIGTERM; SIGKILL if it lingers)."""
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self._forget()


def _bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def cluster_port():
    """A free port for a cluster node whose bus port (10000 above) is free too; both below the
    kernel's range for outgoing connections, so no client socket takes them meanwhile. Redis
    refuses a cluster port above 55535."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    high = min(low, 55536) - 10001
    for _ in range(200):
        port = random.randint(min(20000, high // 2), high)
        if _bindable(port) and _bindable(port + 10000):
            return port
    raise AssertionError("no free port pair for a cluster node")


class RedisCluster:
    """Three masters (no replicas) with all 16384 slots, joined by `redis-cli --cluster
    create`; returns from the constructor once every node reports cluster_state:ok."""

    MASTERS = 3

    def __init__(self, directory):
        self.dir = str(directory)
        self.nodes = []
        try:
            for _ in range(self.MASTERS):
                port = cluster_port()
                self.nodes.append(RedisServer(
                    directory, port=port,
                    extra=["--cluster-enabled", "yes", "--cluster-config-file",
                           f"nodes-{port}.conf", "--cluster-node-timeout", "2000"]))
            create = subprocess.run(
                ["redis-cli", "--cluster", "create",
                 *(f"127.0.0.1:{n.port}" for n in self.nodes),
                 "--cluster-replicas", "0", "--cluster-yes"],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
            assert create.returncode == 0, f"redis-cli --cluster create failed:\n" \
                                           f"{create.stdout}\n{create.stderr}"
            self.ids = [n.cmd("CLUSTER MYID").decode() for n in self.nodes]
            wait_until(self._ok, timeout=15, interval=0.02,
                       what="cluster_state:ok on every node")
        except BaseException:
            self.stop()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def _ok(self):
        return all(n.cmd("CLUSTER INFO").get("cluster_state") == "ok" for n in self.nodes)

    def url(self, seeds=2):
        """The store URL seeded with the first `seeds` nodes (the client finds the rest)."""
        return "redis-cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes[:seeds])

    def keyslot(self, key):
        """The hash slot of `key`, as Redis computes it."""
        return int(self.nodes[0].cmd("CLUSTER KEYSLOT", key))

    def owner(self, slot):
        """The index of the node that serves `slot`, according to the first node."""
        for start, end, master, *_ in self.nodes[0].cmd("CLUSTER SLOTS"):
            if start <= slot <= end:
                return next(i for i, n in enumerate(self.nodes) if n.port == master[1])
        raise AssertionError(f"slot {slot} is not served")

    def owner_everywhere(self, slot):
        """The index of the node serving `slot` if every node agrees, else None."""
        owners = set()
        for n in self.nodes:
            for start, end, master, *_ in n.cmd("CLUSTER SLOTS"):
                if start <= slot <= end:
                    owners.add(master[1])
        if len(owners) != 1:
            return None
        port = owners.pop()
        return next(i for i, n in enumerate(self.nodes) if n.port == port)

    def keys_in_slot(self, slot):
        """How many keys `slot` holds on its owner."""
        return int(self.nodes[self.owner(slot)].cmd("CLUSTER COUNTKEYSINSLOT", slot))

    def move_slot(self, slot, to, pause=0.0, batch=10):
        """Migrates `slot` and its keys to node index `to`, by hand: the target IMPORTING, the
        source MIGRATING, the keys MIGRATEd `batch` at a time, then the new owner told to
        every master. `pause` seconds are spent after the slot is marked migrating and after
        each batch, so that traffic meets the slot half-moved (ASK, TRYAGAIN). Returns the
        number of keys moved."""
        source = self.owner(slot)
        if source == to:
            return 0
        self.begin_migration(slot, to)
        time.sleep(pause)
        moved = self.migrate_keys(slot, to, pause=pause, batch=batch)
        self.end_migration(slot, to)
        return moved

    def begin_migration(self, slot, to):
        """Marks `slot` IMPORTING on node `to` and MIGRATING on its owner."""
        source = self.owner(slot)
        assert source != to, f"slot {slot} is on node {to} already"
        self.nodes[to].cmd("CLUSTER SETSLOT", slot, "IMPORTING", self.ids[source])
        self.nodes[source].cmd("CLUSTER SETSLOT", slot, "MIGRATING", self.ids[to])

    def migrate_keys(self, slot, to, pause=0.0, batch=10):
        """MIGRATEs the keys of `slot` (begin_migration first) from its owner to node `to`,
        `batch` at a time with `pause` seconds after each; returns how many moved."""
        src, dst = self.nodes[self.owner(slot)], self.nodes[to]
        moved = 0
        while True:
            keys = src.cmd("CLUSTER GETKEYSINSLOT", slot, batch)
            if not keys:
                return moved
            src.cmd("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "REPLACE", "KEYS", *keys)
            moved += len(keys)
            time.sleep(pause)

    def end_migration(self, slot, to):
        """Gives `slot` to node `to` on every master and waits until all agree."""
        source = self.owner(slot)
        # The target first, then the source, then the rest: the order redis-cli uses, so the
        # slot is never left without an owner that accepts it.
        order = [to, source] + [i for i in range(len(self.nodes)) if i not in (to, source)]
        for i in order:
            self.nodes[i].cmd("CLUSTER SETSLOT", slot, "NODE", self.ids[to])
        wait_until(lambda: self.owner_everywhere(slot) == to, timeout=10,
                   what=f"every node to agree that slot {slot} moved")

    def stop(self):
        for n in self.nodes:
            n.stop()
