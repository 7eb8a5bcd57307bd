"""Fixtures for the decision services sharing one engine and one Redis: real redis-server
processes, `sluice serve` instances (config + listeners on free ports), Envoy RLS stubs for
grpcio, redis-py clients."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.append(os.path.join(os.path.dirname(HERE), "redis"))
sys.path.append(os.path.join(os.path.dirname(HERE), "rls"))
from integration_support import ServeProcess, free_port  # noqa: E402
from redis_support import RedisServer  # noqa: E402
from rls_stubs import generate  # noqa: E402


@pytest.fixture
def redis_server(tmp_path):
    servers = []

    def make():
        s = RedisServer(tmp_path)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("rls_stubs"))


class Instance(ServeProcess):
    """`sluice serve --config FILE` with the listeners it is asked for (--grpc, --resp) on
    free ports; `config` may use {redis} and {rls_file}. `files` ({name: text}) are written
    into its folder first. Ready once the admin listener is up."""

    def __init__(self, tmp_path, config, redis_url="", grpc=False, resp=False, extra=(),
                 files=None):
        for name, text in (files or {}).items():
            (tmp_path / name).write_text(text)
        self.admin_port = free_port()
        self.admin = f"http://127.0.0.1:{self.admin_port}"
        self.grpc_port = free_port() if grpc else None
        self.resp_port = free_port() if resp else None
        self.dir = tmp_path
        self.config_path = tmp_path / "sluice.yaml"
        self.config_path.write_text(config.format(redis=redis_url, rls_file=tmp_path / "rls.yaml"))
        args = ["--config", str(self.config_path), "--admin", f"127.0.0.1:{self.admin_port}"]
        if grpc:
            args += ["--grpc", f"127.0.0.1:{self.grpc_port}"]
        if resp:
            args += ["--resp", f"127.0.0.1:{self.resp_port}"]
        super().__init__(tmp_path, args + list(extra), r"admin listening on", what="sluice")


@pytest.fixture
def instances(tmp_path):
    """instances(config, redis_url, grpc=..., resp=...) -> a started Instance, each in a
    folder of its own; all stopped at teardown."""
    made = []

    def make(config, redis_url="", **kw):
        d = tmp_path / f"i{len(made)}"
        d.mkdir()
        made.append(Instance(d, config, redis_url, **kw))
        return made[-1]

    yield make
    for i in made:
        i.stop()
