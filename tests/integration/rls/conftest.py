"""Fixtures for the Envoy rate limit service tests: Python gRPC stubs generated at test time
(grpc_tools.protoc, Debian's python3-grpc-tools) from the same proto/ files the server is built
from, and a real `sluice serve --grpc 127.0.0.1:PORT --rls-config FILE` on free ports."""
import importlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from integration_support import ServeProcess, free_port  # noqa: E402

PROTO_ROOT = os.path.join(HERE, "..", "..", "..", "proto")
PROTOS = [
    "envoy/type/v3/ratelimit_unit.proto",
    "envoy/extensions/common/ratelimit/v3/ratelimit.proto",
    "envoy/service/ratelimit/v3/rls.proto",
]
# google/protobuf/duration.proto: Debian's libprotobuf-dev puts the well-known types here.
WELL_KNOWN = "/usr/include"

RLS_CONFIG = os.path.join(HERE, "edge.yaml")


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """The generated modules: pb.rls (rls_pb2), pb.rls_grpc (rls_pb2_grpc)."""
    from grpc_tools import protoc

    out = str(tmp_path_factory.mktemp("rls_stubs"))
    args = ["grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{WELL_KNOWN}",
            f"--python_out={out}", f"--grpc_python_out={out}"] + PROTOS
    assert protoc.main(args) == 0, "grpc_tools.protoc failed on proto/"
    sys.path.insert(0, out)

    class Modules:
        rls = importlib.import_module("envoy.service.ratelimit.v3.rls_pb2")
        rls_grpc = importlib.import_module("envoy.service.ratelimit.v3.rls_pb2_grpc")

    return Modules


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
        req = pb.rls.RateLimitRequest(domain=domain, hits_addend=hits)
        for i, entries in enumerate(descriptors):
            d = req.descriptors.add()
            for k, v in entries:
                e = d.entries.add()
                e.key, e.value = k, v
            if overrides and overrides[i]:
                d.limit.requests_per_unit, d.limit.unit = overrides[i]
        return stub.ShouldRateLimit(req, timeout=10)

    return call
