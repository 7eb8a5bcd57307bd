"""/metrics: Prometheus text format 0.0.4, line by line, and counters that move."""
import re

import requests

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
VALUE = r"(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)"
SAMPLE = re.compile(r"^(%s)(\{(?:%s(?:,%s)*,?)?\})? (%s)(?: -?\d+)?$" % (NAME, LABEL, LABEL, VALUE))
HELP = re.compile(r"^# HELP (%s) .*$" % NAME)
TYPE = re.compile(r"^# TYPE (%s) (counter|gauge|histogram|summary|untyped)$" % NAME)


def parse(text):
    """Checks every line's syntax and the family rules; returns {(name, labels): value}."""
    assert text.endswith("\n")
    types, samples = {}, {}
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("#"):
            m = TYPE.match(line)
            if m:
                assert m.group(1) not in types, f"second TYPE for {m.group(1)}"
                types[m.group(1)] = m.group(2)
                continue
            assert HELP.match(line) or not line.startswith(("# HELP", "# TYPE")), line
            continue
        m = SAMPLE.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        name, labels = m.group(1), m.group(2) or ""
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        assert name in types or (family in types and types[family] in ("histogram", "summary")), \
            f"{name} has no TYPE line before it"
        key = (name, labels)
        assert key not in samples, f"duplicate series {line!r}"
        samples[key] = float(m.group(3))
    return samples


def value(samples, name, **labels):
    for (n, l), v in samples.items():
        if n == name and all(f'{k}="{val}"' in l for k, val in labels.items()):
            return v
    raise AssertionError(f"no sample {name} {labels}")


def has(samples, name, **labels):
    return any(n == name and all(f'{k}="{val}"' in l for k, val in labels.items())
               for (n, l) in samples)


def test_metrics_is_prometheus_text(sluice):
    r = sluice.metrics()
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = parse(r.text)
    assert value(samples, "sluice_config_reloads_total", result="ok") == 0
    assert value(samples, "sluice_config_reloads_total", result="error") == 0
    assert value(samples, "sluice_config_version") >= 1


def test_counters_move(sluice):
    before = parse(sluice.metrics().text)
    assert sluice.allowed("metrics-user", 5) == 3
    assert sluice.put("spare", {"limit": "token-bucket:rate=20/s,burst=5",
                                "key": "client_ip"}).status_code == 200
    assert sluice.put("spare", {"limit": "bogus"}).status_code == 400
    after = parse(sluice.metrics().text)

    def delta(name, **labels):
        # A rule's series appears with its first request: absent before means 0.
        was = value(before, name, **labels) if has(before, name, **labels) else 0
        return value(after, name, **labels) - was

    assert delta("sluice_rule_requests_total", route="api", rule="per-user", outcome="allowed") == 3
    assert delta("sluice_rule_requests_total", route="api", rule="per-user", outcome="denied") == 2
    assert delta("sluice_admin_rule_changes_total", result="ok") == 1
    assert delta("sluice_admin_rule_changes_total", result="error") == 1
    assert delta("sluice_config_version") == 1
    assert value(after, "sluice_admin_requests_total", code="200") >= 2
    assert value(after, "sluice_admin_requests_total", code="400") >= 1


def test_the_parser_rejects_bad_lines():
    for bad in ["metric{a=b} 1\n", "metric 1 2 3\n", "1metric 2\n", 'm{a="x"}\n', "m one\n"]:
        try:
            parse("# TYPE metric gauge\n# TYPE m gauge\n" + bad)
        except AssertionError:
            continue
        raise AssertionError(f"accepted {bad!r}")


def test_healthz_and_metrics_on_one_connection(sluice):
    with requests.Session() as s:
        for _ in range(3):
            assert s.get(sluice.admin + "/healthz", timeout=5).status_code == 200
            assert s.get(sluice.admin + "/metrics", timeout=5).status_code == 200
