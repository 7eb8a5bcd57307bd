"""Redis as it is deployed, for the tests of AUTH, TLS and Sentinel (docs/distributed.md, "Redis
as it is deployed"):

- make_pki(): a throwaway CA, a server certificate for 127.0.0.1/localhost, a client certificate,
  and a second CA that signed neither, made with the openssl command line (EC P-256 keys: fast).
- AuthRedis: a redis-server that wants AUTH (requirepass and/or an ACL user), inspected through
  an authenticated client.
- tls_args(): the command-line arguments that give a redis-server a TLS port beside its plain one
  (the plain one is the test's own window on it).
- SentinelGroup: one master, one replica and three redis-sentinel processes (quorum 2, a 1 s
  down-after; optionally wanting AUTH), ready once every sentinel knows the replica and the
  other two sentinels, so a failover can start as soon as the master dies.
"""
import os
import subprocess
import sys
import time

import redis

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "redis"))
from redis_support import RedisServer, _running  # noqa: E402
from integration_support import free_port, wait_until  # noqa: E402

MASTER_NAME = "mymaster"


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _key_and_csr(d, name, subject):
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", subject, "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)


def _ca(d, name):
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
             "-out", f"{name}.crt", cwd=d)


def _sign(d, name, ca, extensions):
    ext = os.path.join(d, f"{name}.ext")
    with open(ext, "w") as f:
        f.write(extensions + "\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", f"{name}.crt", cwd=d)


def make_pki(directory):
    """{name: path} for ca, server_crt, server_key, client_crt, client_key, other_ca."""
    d = str(directory)
    os.makedirs(d, exist_ok=True)
    _ca(d, "ca")
    _ca(d, "other-ca")
    _key_and_csr(d, "server", "/CN=localhost")
    _sign(d, "server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                             "extendedKeyUsage=serverAuth")
    _key_and_csr(d, "client", "/CN=sluice")
    _sign(d, "client", "ca", "extendedKeyUsage=clientAuth")
    p = lambda f: os.path.join(d, f)  # noqa: E731
    return {"ca": p("ca.crt"), "other_ca": p("other-ca.crt"), "server_crt": p("server.crt"),
            "server_key": p("server.key"), "client_crt": p("client.crt"),
            "client_key": p("client.key")}


def tls_args(pki, tls_port, auth_clients=False):
    return ["--tls-port", str(tls_port), "--tls-cert-file", pki["server_crt"],
            "--tls-key-file", pki["server_key"], "--tls-ca-cert-file", pki["ca"],
            "--tls-auth-clients", "yes" if auth_clients else "no"]


class AuthRedis(RedisServer):
    """A redis-server that wants AUTH; the test's own client authenticates as `user`."""

    def __init__(self, directory, password, user=None, extra=()):
        self.password, self.user = password, user
        super().__init__(directory, extra=extra)

    def client(self):
        if self._client is None:
            self._client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10,
                                       username=self.user, password=self.password)
        return self._client


class Sentinel:
    """One redis-sentinel on a free port, watching MASTER_NAME at `master_port`."""

    def __init__(self, directory, master_port, down_after_ms, failover_timeout_ms,
                 password=None):
        self.port = free_port()
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.conf = os.path.join(self.dir, "sentinel.conf")
        with open(self.conf, "w") as f:
            f.write(f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\n"
                    f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 2\n"
                    f"sentinel down-after-milliseconds {MASTER_NAME} {down_after_ms}\n"
                    f"sentinel failover-timeout {MASTER_NAME} {failover_timeout_ms}\n"
                    f"sentinel parallel-syncs {MASTER_NAME} 1\n")
            if password:  # clients and the other sentinels must AUTH
                f.write(f"requirepass {password}\nsentinel sentinel-pass {password}\n")
        self.log_path = os.path.join(self.dir, "sentinel.log")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(["redis-sentinel", self.conf], stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT)
        _running.add(self.proc)
        self.client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5,
                                  password=password)

    def ask(self, *args):
        try:
            return self.client.execute_command("SENTINEL", *args)
        except redis.exceptions.RedisError:
            return None

    def master(self):
        """(host, port) the sentinel names as master, or None."""
        r = self.ask("get-master-addr-by-name", MASTER_NAME)
        return (r[0].decode(), int(r[1])) if r else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        _running.discard(self.proc)
        self.client.close()


class SentinelGroup:
    """A master, its replica and three sentinels; `url` is the redis-sentinel:// URL of them."""

    def __init__(self, directory, down_after_ms=1000, failover_timeout_ms=3000,
                 sentinel_password=None):
        d = str(directory)
        os.makedirs(os.path.join(d, "master"), exist_ok=True)
        os.makedirs(os.path.join(d, "replica"), exist_ok=True)
        self.master = RedisServer(os.path.join(d, "master"))
        self.replica = RedisServer(os.path.join(d, "replica"),
                                   extra=["--replicaof", "127.0.0.1", str(self.master.port)])
        self.sentinels = [Sentinel(os.path.join(d, f"sentinel{i}"), self.master.port,
                                   down_after_ms, failover_timeout_ms, sentinel_password)
                          for i in range(3)]
        self.url = "redis-sentinel://" + ",".join(
            f"127.0.0.1:{s.port}" for s in self.sentinels) + "/" + MASTER_NAME
        started = time.monotonic()
        wait_until(self.ready, timeout=20, interval=0.1,
                   what="the sentinels to know the replica and each other")
        self.ready_after = time.monotonic() - started

    def ready(self):
        if self.replica.client().info("replication").get("master_link_status") != "up":
            return False
        for s in self.sentinels:
            if s.master() != ("127.0.0.1", self.master.port):
                return False
            replicas, others = s.ask("replicas", MASTER_NAME), s.ask("sentinels", MASTER_NAME)
            if not replicas or others is None or len(others) < 2:
                return False
        return True

    def named_master(self):
        """The master's port as the sentinels agree on it (None while they disagree)."""
        named = {s.master() for s in self.sentinels}
        return named.pop()[1] if len(named) == 1 and None not in named else None

    def stop(self):
        for s in self.sentinels:
            s.stop()
        self.replica.stop()
        self.master.stop()
