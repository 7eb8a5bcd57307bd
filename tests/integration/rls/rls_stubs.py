"""Python gRPC stubs of Envoy's rate limit service, generated at test time (grpc_tools.protoc,
Debian's python3-grpc-tools) from the same proto/ files the server is built from; and a
RateLimitRequest builder as Envoy's filter sends it."""
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.join(HERE, "..", "..", "..", "proto")
PROTOS = [
    "envoy/type/v3/ratelimit_unit.proto",
    "envoy/extensions/common/ratelimit/v3/ratelimit.proto",
    "envoy/service/ratelimit/v3/rls.proto",
]
# google/protobuf/duration.proto: Debian's libprotobuf-dev puts the well-known types here.
WELL_KNOWN = "/usr/include"


def generate(out):
    """The generated modules in folder `out`: .rls (rls_pb2) and .rls_grpc (rls_pb2_grpc)."""
    from grpc_tools import protoc

    args = ["grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{WELL_KNOWN}",
            f"--python_out={out}", f"--grpc_python_out={out}"] + PROTOS
    assert protoc.main(args) == 0, "grpc_tools.protoc failed on proto/"
    sys.path.insert(0, str(out))

    class Modules:
        rls = importlib.import_module("envoy.service.ratelimit.v3.rls_pb2")
        rls_grpc = importlib.import_module("envoy.service.ratelimit.v3.rls_pb2_grpc")

    return Modules


def request(pb, descriptors, domain="edge", hits=0, overrides=None):
    """RateLimitRequest: descriptors as [[("key", "value"), ...], ...]."""
    req = pb.rls.RateLimitRequest(domain=domain, hits_addend=hits)
    for i, entries in enumerate(descriptors):
        d = req.descriptors.add()
        for k, v in entries:
            e = d.entries.add()
            e.key, e.value = k, v
        if overrides and overrides[i]:
            d.limit.requests_per_unit, d.limit.unit = overrides[i]
    return req
