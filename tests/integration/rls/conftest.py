"""Fixtures for the Envoy rate limit service tests: Python gRPC stubs generated at test time
(grpc_tools.protoc, Debian's python3-grpc-tools) from the same proto/ files the server is built
from, and a real `sluice serve --grpc 127.0.0.1:PORT --rls-config FILE` on free ports."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from integration_support import ServeProcess, free_port  # noqa: E402
from rls_stubs import generate, request  # noqa: E402

RLS_CONFIG = os.path.join(HERE, "edge.yaml")


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """The generated modules: pb.rls (rls_pb2), pb.rls_grpc (rls_pb2_grpc)."""
    return generate(tmp_path_factory.mktemp("rls_stubs"))


@pytest.fixture(scope="module")
def sluice(tmp_path_factory):
    port = free_port()
    s = ServeProcess(tmp_path_factory.mktemp("rls"),
                     ["--grpc", f"127.0.0.1:{port}", "--rls-config", RLS_CONFIG,
                      "--admin", f"127.0.0.1:{free_port()}"],
                     r"grpc \(Envoy RLS\) listening on \S+:%d\b" % port,
                     "sluice to listen for gRPC")
    s.port = port
    yield s
    s.stop()


@pytest.fixture(scope="module")
def channel(sluice):
    import grpc

    with grpc.insecure_channel(f"127.0.0.1:{sluice.port}") as ch:
        grpc.channel_ready_future(ch).result(timeout=10)
        yield ch


@pytest.fixture(scope="module")
def stub(channel, pb):
    return pb.rls_grpc.RateLimitServiceStub(channel)


@pytest.fixture
def ask(stub, pb):
    """ask([[("key", "value"), ...], ...], domain="edge", hits=0) -> RateLimitResponse."""

    def call(descriptors, domain="edge", hits=0, overrides=None):
        return stub.ShouldRateLimit(request(pb, descriptors, domain, hits, overrides), timeout=10)

    return call
