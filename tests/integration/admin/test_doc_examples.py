"""Every example in docs/admin-api.md and docs/configuration.md works as the docs say, checked
with the real binary: each limit spec they write parses, each YAML block is a valid config (a
fragment with the names it refers to filled in), each JSON rule is accepted by PUT, and each
curl command succeeds against a running sluice."""
import json
import os
import re
import shlex
import subprocess

import pytest
import requests
import yaml

from integration_support import sluice_binary

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DOCS = [os.path.join(ROOT, "docs", name)
        for name in ("admin-api.md", "configuration.md", "logging.md")]
ALGORITHMS = ("token-bucket", "gcra", "leaky-bucket", "fixed-window", "sliding-log",
              "sliding-window", "smooth-bursty", "smooth-warmup", "queue", "concurrency")
SPEC = re.compile(r"\b(?:%s):[a-z-]+=[^,\s`'\"})\]]+(?:,[a-z-]+=[^,\s`'\"})\]]+)*"
                  % "|".join(ALGORITHMS))
TOKEN = "0123456789abcdef0123456789abcdef"


def text_of(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def blocks(path, language):
    """The fenced code blocks of `language` in a markdown file, as (line, text)."""
    out, lines = [], text_of(path).split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```" + language:
            start, i = i + 1, i + 1
            while lines[i].strip() != "```":
                i += 1
            out.append((start + 1, "\n".join(lines[start:i]) + "\n"))
        i += 1
    return out


def specs():
    found = set()
    for path in DOCS:
        for spec in SPEC.findall(text_of(path)):
            # A template's placeholder stands for a number: its parameter names must be right.
            found.add(re.sub(r"=N\b", "=5", spec))
    return sorted(found)


def check_config(tmp_path, text):
    path = tmp_path / "example.yaml"
    path.write_text(text)
    return subprocess.run([sluice_binary(), "check-config", str(path)], capture_output=True,
                          text=True, timeout=30)


def test_the_docs_write_limit_specs():
    assert len(specs()) >= 5, specs()  # the extraction finds what the docs write


@pytest.mark.parametrize("spec", specs())
def test_every_limit_spec_in_the_docs_parses(tmp_path, spec):
    if spec.startswith("sliding-log:"):  # no rule may use it (its memory is unbounded)
        p = subprocess.run([sluice_binary(), "replay", "--limit", spec], input="",
                           capture_output=True, text=True, timeout=30)
    else:
        p = check_config(tmp_path, f"rules:\n  r: {{limit: \"{spec}\", key: client_ip}}\n")
    assert p.returncode == 0, p.stderr


def completed(config):
    """A config fragment with the upstreams and rules its routes name defined, so that only what
    the example itself writes is judged."""
    config = dict(config)
    routes = config.get("routes") or []
    upstreams = dict(config.get("upstreams") or {})
    rules = dict(config.get("rules") or {})
    for route in routes:
        if "upstream" in route:
            upstreams.setdefault(route["upstream"], {"servers": ["127.0.0.1:8081"]})
        for name in route.get("rules", []):
            rules.setdefault(name, {"limit": "gcra:rate=1/s,burst=1", "key": "client_ip"})
    if routes:
        config.setdefault("listen", "127.0.0.1:8080")
    if upstreams:
        config["upstreams"] = upstreams
    if rules:
        config["rules"] = rules
    return config


YAML_BLOCKS = [(os.path.basename(p), line, text) for p in DOCS for line, text in
               blocks(p, "yaml")]


@pytest.mark.parametrize("doc,line,text", YAML_BLOCKS,
                         ids=[f"{d}:{n}" for d, n, _ in YAML_BLOCKS])
def test_every_yaml_example_is_a_valid_config(tmp_path, doc, line, text):
    config = yaml.safe_load(text)
    p = check_config(tmp_path, yaml.safe_dump(completed(config)))
    assert p.returncode == 0, f"{doc}:{line}: {p.stderr}"


TOP_FIELDS = ("listen", "admin", "check", "check_on_admin", "admin_auth", "admin_hosts", "workers",
              "trusted_proxies", "memory", "timeouts", "headers", "http", "access_log",
              "write_back", "redis")
PLACEHOLDERS = {"ADDR": "127.0.0.1:9099", "PATH": "/etc/sluice/admin.token",
                "NAME": "SLUICE_ADMIN_TOKEN"}


def inline_settings():
    """Inline code that sets a top-level field (`timeouts: {connect: 1s}`), with placeholders
    filled in, as (doc, text)."""
    out = set()
    pattern = re.compile(r"`((?:%s): [^`]+)`" % "|".join(TOP_FIELDS))
    for path in DOCS:
        for text in pattern.findall(text_of(path)):
            for word, value in PLACEHOLDERS.items():
                text = re.sub(r"\b%s\b" % word, value, text)
            out.add((os.path.basename(path), " ".join(text.split())))
    return sorted(out)


@pytest.mark.parametrize("doc,text", inline_settings(), ids=[t for _, t in inline_settings()])
def test_every_inline_setting_in_the_docs_is_valid(tmp_path, doc, text):
    p = check_config(tmp_path, text + "\n")
    assert p.returncode == 0, f"{doc}: `{text}`: {p.stderr}"


@pytest.fixture
def servers(serve_config, tmp_path):
    """A sluice without a token, and one whose token file stands in for the docs' path."""
    token = tmp_path / "admin.token"
    token.write_text(TOKEN + "\n")
    rules = ("rules:\n  per-user: {limit: \"token-bucket:rate=10/s,burst=20\", "
             "key: \"query:userId\"}\n"
             "  jobs: {limit: \"concurrency:limit=1\", key: \"const:all\"}\n"
             "  llm: {limit: \"token-bucket:rate=100/s,burst=10000\", key: \"query:team\"}\n")
    plain = serve_config(lambda g, a: f"admin: 127.0.0.1:{a}\n{rules}")
    secured = serve_config(
        lambda g, a: f"admin: 127.0.0.1:{a}\nadmin_auth: {{token_file: {token}}}\n{rules}")
    return plain, secured, token


def curl_commands():
    out = []
    for path in DOCS:
        for line, text in blocks(path, "sh"):
            for command in text.replace("\\\n", " ").split("\n"):
                if command.strip().startswith("curl "):
                    out.append((os.path.basename(path), line, command.strip()))
    return out


def test_every_curl_example_succeeds(servers):
    plain, secured, token = servers
    commands = curl_commands()
    assert len(commands) >= 3, commands
    lease = None  # a permit the examples give back: the one the example before them took
    for doc, line, command in commands:
        target = secured if "Authorization" in command else plain
        command = command.replace("localhost:9090", target.admin.split("//")[1])
        command = command.replace("/etc/sluice/admin.token", str(token))
        command = command.replace("$(cat " + str(token) + ")", TOKEN)
        if lease:
            command = re.sub(r"\bl-[0-9a-f]{16}\b", lease, command)
        args = shlex.split(command, comments=True)
        p = subprocess.run(args[:1] + ["-s", "-w", "\n%{http_code}"] + args[1:],
                           capture_output=True, text=True, timeout=10)
        body, _, status = p.stdout.rpartition("\n")
        assert status.startswith("2"), f"{doc}:{line}: {command} -> {status} {body} {p.stderr}"
        try:
            lease = json.loads(body).get("lease", lease)
        except (ValueError, AttributeError):
            pass


def test_every_json_rule_example_is_accepted_by_put(servers):
    plain, _, _ = servers
    rules = [(os.path.basename(p), line, text) for p in DOCS for line, text in blocks(p, "json")
             if '"limit"' in text and '"name"' in text]
    assert len(rules) >= 2, rules
    for doc, line, text in rules:
        rule = yaml.safe_load(text)
        r = requests.put(plain.admin + "/v1/rules/" + rule["name"], json=rule, timeout=5)
        assert r.status_code in (200, 201), f"{doc}:{line}: {r.status_code} {r.text}"
