"""What redis-py and redis-cli send beyond single commands: MULTI/EXEC (redis-py's default
pipeline()), and AUTH against a secret from the config, with Redis's own replies."""
import os
import subprocess

import pytest
import redis

AUTH = """\
resp: {{password_file: "{dir}/secret", user: ops}}
"""


def test_redis_py_transaction_pipeline_runs_the_queued_commands_in_order(instances):
    inst = instances("resp: {{storage: local}}\n", resp=True)
    c = redis.Redis(port=inst.resp_port, socket_timeout=5)
    with c.pipeline() as p:  # transaction=True: MULTI ... EXEC
        p.execute_command("CL.THROTTLE", "tx", 1, 1, 60)
        p.execute_command("CL.THROTTLE", "tx", 1, 1, 60)
        p.execute_command("CL.THROTTLE", "tx", 1, 1, 60)
        p.ping()
        replies = p.execute()
    assert [r[0] for r in replies[:3]] == [0, 0, 1]
    assert replies[3] is True
    # DISCARD drops the queue; a command Redis would refuse aborts the transaction.
    raw = subprocess.run(["redis-cli", "-p", str(inst.resp_port)], input=(
        "MULTI\nCL.THROTTLE d 1 1 60\nDISCARD\nEXEC\nMULTI\nNOPE\nEXEC\n"),
        capture_output=True, text=True).stdout
    assert "QUEUED" in raw and "ERR EXEC without MULTI" in raw
    assert "ERR unknown command 'NOPE'" in raw and "EXECABORT" in raw


def secret_config(tmp_path):
    d = tmp_path / "conf"
    d.mkdir(exist_ok=True)
    (d / "secret").write_text("s3cret\n")
    return AUTH.replace("{dir}", str(d))


def test_auth_checks_the_configured_secret(instances, tmp_path):
    inst = instances(secret_config(tmp_path), resp=True)
    anonymous = redis.Redis(port=inst.resp_port, socket_timeout=5)
    with pytest.raises(redis.AuthenticationError, match="Authentication required"):
        anonymous.execute_command("CL.THROTTLE", "k", 1, 1, 1)
    # Redis's own reply; redis-py 4.3 raises it as a ResponseError.
    with pytest.raises((redis.AuthenticationError, redis.ResponseError), match="WRONGPASS"):
        redis.Redis(port=inst.resp_port, username="ops", password="wrong").ping()
    ok = redis.Redis(port=inst.resp_port, username="ops", password="s3cret", socket_timeout=5)
    assert ok.execute_command("CL.THROTTLE", "k", 1, 1, 1)[0] == 0
    # AUTH password alone is the default user, which is not the configured one here.
    out = subprocess.run(["redis-cli", "-p", str(inst.resp_port), "AUTH", "s3cret"],
                         capture_output=True, text=True).stdout
    assert "WRONGPASS" in out
    out = subprocess.run(["redis-cli", "-p", str(inst.resp_port), "--user", "ops", "--pass",
                          "s3cret", "--no-auth-warning", "CL.THROTTLE", "c", "1", "1", "1"],
                         capture_output=True, text=True).stdout
    assert out.split() == ["0", "2", "1", "-1", "1"]


def test_a_missing_secret_file_is_a_config_error_naming_its_line(tmp_path):
    from integration_support import sluice_binary
    path = tmp_path / "sluice.yaml"
    path.write_text('resp:\n  password_file: "/nonexistent/secret"\n')
    r = subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert f"{path}:2: field 'resp.password_file': cannot read '/nonexistent/secret'" in r.stderr
