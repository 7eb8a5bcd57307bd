"""Many descriptors in one ShouldRateLimit (issue 16, item 1). Deciding them took time
quadratic in their number (100k one-entry descriptors: 23 s of CPU, every other call waiting
behind it); now it is linear, and rls.max_descriptors (default 10000) refuses a larger request
with RESOURCE_EXHAUSTED, charging nothing."""
import os
import signal
import subprocess

import grpc
import pytest

from integration_support import ServeProcess, cpu_seconds, free_port, sluice_binary, wait_until
from rls_stubs import request

RLS_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "edge.yaml")
# One message of 100k descriptors is about 2.5 MB: under gRPC's 4 MiB default, both ways.
BIG = [("grpc.max_receive_message_length", 16 << 20), ("grpc.max_send_message_length", 16 << 20)]


def serve(tmp_path, config_text):
    port = free_port()
    (tmp_path / "sluice.yaml").write_text(config_text)
    s = ServeProcess(tmp_path, ["--grpc", f"127.0.0.1:{port}",
                                "--admin", f"127.0.0.1:{free_port()}",
                                "--config", str(tmp_path / "sluice.yaml"),
                                "--rls-config", RLS_CONFIG],
                     r"grpc \(Envoy RLS\) listening on \S+:%d\b" % port)
    s.port = port
    return s


def one_limit(n, prefix):
    """n one-entry descriptors over the one `bulk` limit (100 a day), 1000 distinct values: the
    same limit n times, which the old code decided one descriptor per pass over all of them."""
    return [[("bulk", f"{prefix}{i % 1000}")] for i in range(n)]


def test_100k_descriptors_take_under_20x_what_10k_take(tmp_path, pb):
    s = serve(tmp_path, "rls:\n  max_descriptors: 100000\n")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{s.port}", options=BIG) as ch:
            stub = pb.rls_grpc.RateLimitServiceStub(ch)

            def cpu_of(descriptors, times):
                req = request(pb, descriptors)
                before = cpu_seconds(s.proc.pid)
                for _ in range(times):
                    r = stub.ShouldRateLimit(req, timeout=120)
                    assert len(r.statuses) == len(descriptors)
                return (cpu_seconds(s.proc.pid) - before) / times

            cpu_of(one_limit(1000, "warm"), 3)
            small = cpu_of(one_limit(10_000, "a"), 5)  # 5 runs: the clock ticks in 10 ms
            large = cpu_of(one_limit(100_000, "b"), 1)
        print(f"\nsluice CPU per call: 10k descriptors {small * 1000:.0f} ms, "
              f"100k {large * 1000:.0f} ms ({large / max(small, 0.001):.1f}x)")
        assert large < 20 * max(small, 0.01)
    finally:
        s.stop()


def test_a_request_over_max_descriptors_is_refused_naming_the_cap_and_charging_nothing(ask):
    with pytest.raises(grpc.RpcError) as e:
        ask([[("remote_address", "192.0.2.150")]] * 10_001)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert e.value.details() == ("10001 descriptors in one request, more than "
                                 "rls.max_descriptors (10000)")
    r = ask([[("remote_address", "192.0.2.150")]])  # 3 a day: nothing was charged
    assert r.statuses[0].limit_remaining == 2
    assert len(ask([[("path", "/health")]] * 10_000).statuses) == 10_000  # at the cap: answered


def test_max_descriptors_follows_a_reload(tmp_path, pb):
    s = serve(tmp_path, "rls:\n  max_descriptors: 5\n")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{s.port}") as ch:
            stub = pb.rls_grpc.RateLimitServiceStub(ch)
            six = request(pb, [[("path", "/health")]] * 6)
            with pytest.raises(grpc.RpcError) as e:
                stub.ShouldRateLimit(six, timeout=10)
            assert e.value.details() == ("6 descriptors in one request, more than "
                                         "rls.max_descriptors (5)")
            (tmp_path / "sluice.yaml").write_text("rls:\n  max_descriptors: 6\n")
            s.proc.send_signal(signal.SIGHUP)
            wait_until(lambda: "config reloaded" in s.stderr(), what="the reload")
            assert len(stub.ShouldRateLimit(six, timeout=10).statuses) == 6
    finally:
        s.stop()


@pytest.mark.parametrize("field,value,accepted", [
    ("max_descriptors", "0", "1 to 2097152"),
    ("max_concurrent_streams", "0", "1 to 2147483647"),
    ("max_concurrent_streams", "lots", None),
])
def test_check_config_names_a_bad_cap(tmp_path, field, value, accepted):
    path = tmp_path / "sluice.yaml"
    path.write_text(f"rls:\n  {field}: {value}\n")
    r = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 2
    problem = (f"{value} is out of range (accepted: {accepted})" if accepted
               else f"expected a whole number, got '{value}'")
    assert f"{path}:2: field 'rls.{field}': {problem}" in r.stderr
