"""A reader of the RateLimit-Policy and RateLimit fields written from the text of
draft-ietf-httpapi-ratelimit-headers (-10 to -12) and RFC 9651 (Structured Fields), so that
tests check what a client of the draft would read, not what sluice happens to write.

Both fields are sf-Lists of Items. An item's bare item names the policy (an sf-String; a Token
is read too); its parameters are: on RateLimit-Policy, q (REQUIRED, non-negative Integer),
w (non-negative Integer, seconds), qu (String), pk (Byte Sequence); on RateLimit, r (REQUIRED,
non-negative Integer, "the remaining quota units for the identified policy") and t (OPTIONAL,
non-negative Integer, seconds "until additional quota ... is made available"). A policy name
appears once in each field; each RateLimit item should name a declared policy."""
import re

_KEY = re.compile(r"[a-z*][a-z0-9_\-.*]*")
_TOKEN = re.compile(r"[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]*")
_INT = re.compile(r"-?[0-9]{1,15}")


class Malformed(ValueError):
    pass


def _bare(s, i):
    """Parses one bare item at s[i:]; returns (value, next index)."""
    if i >= len(s):
        raise Malformed("item expected at the end")
    c = s[i]
    if c == '"':
        out, i = [], i + 1
        while i < len(s):
            c = s[i]
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in '"\\':
                    raise Malformed(f"bad escape at {i}")
                out.append(s[i + 1])
                i += 2
            elif c == '"':
                return "".join(out), i + 1
            elif not (0x20 <= ord(c) <= 0x7E):
                raise Malformed(f"byte {ord(c):#x} in a string at {i}")
            else:
                out.append(c)
                i += 1
        raise Malformed("unterminated string")
    if c == ":":
        end = s.find(":", i + 1)
        if end < 0:
            raise Malformed("unterminated byte sequence")
        return ("bytes", s[i + 1:end]), end + 1
    if c == "?":
        if s[i + 1:i + 2] not in ("0", "1"):
            raise Malformed(f"bad boolean at {i}")
        return s[i + 1] == "1", i + 2
    m = _INT.match(s, i)
    if m:
        if s[m.end():m.end() + 1] == ".":
            raise Malformed(f"decimal where an integer is expected at {i}")
        return int(m.group()), m.end()
    m = _TOKEN.match(s, i)
    if m:
        return ("token", m.group()), m.end()
    raise Malformed(f"no item at {i}: {s[i:]!r}")


def parse_list(s):
    """RFC 9651 sf-List of Items: [(name, {param: value})]."""
    items, i, s = [], 0, s.strip(" ")
    if not s:
        raise Malformed("empty list")
    while True:
        name, i = _bare(s, i)
        if isinstance(name, tuple) and name[0] == "token":
            name = name[1]
        if not isinstance(name, str):
            raise Malformed(f"a policy is named by a string, not {name!r}")
        params = {}
        while i < len(s) and s[i] == ";":
            i += 1
            while i < len(s) and s[i] == " ":
                i += 1
            m = _KEY.match(s, i)
            if not m:
                raise Malformed(f"bad parameter key at {i}: {s[i:]!r}")
            key, i = m.group(), m.end()
            value = True
            if i < len(s) and s[i] == "=":
                value, i = _bare(s, i + 1)
            params[key] = value
        items.append((name, params))
        while i < len(s) and s[i] in " \t":
            i += 1
        if i == len(s):
            return items
        if s[i] != ",":
            raise Malformed(f"',' expected at {i}: {s[i:]!r}")
        i += 1
        while i < len(s) and s[i] in " \t":
            i += 1
        if i == len(s):
            raise Malformed("trailing comma")


def _count(params, key, required, where):
    if key not in params:
        if required:
            raise Malformed(f"{where}: '{key}' is required")
        return None
    v = params[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise Malformed(f"{where}: '{key}' must be a non-negative integer, not {v!r}")
    return v


def check(headers):
    """Reads both fields of a response; returns {name: {"q", "w", "r", "t"}}. Raises Malformed
    on anything a client of the draft could not make sense of, r above its policy's q included."""
    policies = {}
    for name, params in parse_list(headers["RateLimit-Policy"]):
        where = f"RateLimit-Policy {name!r}"
        if name in policies:
            raise Malformed(f"{where} appears twice")
        policies[name] = {"q": _count(params, "q", True, where),
                          "w": _count(params, "w", False, where)}
        if "qu" in params and not isinstance(params["qu"], str):
            raise Malformed(f"{where}: qu must be a string")
    seen = set()
    for name, params in parse_list(headers["RateLimit"]):
        where = f"RateLimit {name!r}"
        if name in seen:
            raise Malformed(f"{where} appears twice")
        seen.add(name)
        if name not in policies:
            raise Malformed(f"{where} names no policy of RateLimit-Policy")
        r = _count(params, "r", True, where)
        t = _count(params, "t", False, where)
        q = policies[name]["q"]
        if r > q:
            raise Malformed(f"{where}: r={r} is more than its policy's q={q}")
        policies[name].update(r=r, t=t)
    return policies
