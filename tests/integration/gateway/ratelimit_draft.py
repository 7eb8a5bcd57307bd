"""A reader of the RateLimit-Policy and RateLimit fields written from the text of
draft-ietf-httpapi-ratelimit-headers (-11 and -12; docs/references.md section 6 quotes them)
and RFC 9651 (Structured Fields), so that tests check what a client of the draft would read,
not what sluice happens to write.

RFC 9651: both fields are Lists (4.2.1): members separated by "," with optional SP/HTAB
around it, no trailing comma, not empty. A member here is an Item (4.2.3): a bare item and its
Parameters, each ";" then optional SP, a key (lcalpha or "*", then lcalpha, DIGIT, "_", "-",
".", "*") and, after "=", a bare item (no value: Boolean true); a key seen again overwrites.
Bare items: Integer (at most 15 digits, 4.2.4), Decimal, String ('"', printable ASCII, only
\\" and \\\\ escaped, 4.2.5), Token (ALPHA or "*", then tchar, ":" and "/", 4.2.6), Byte
Sequence (":" base64 ":", 4.2.7), Boolean ("?0", "?1", 4.2.8), Date ("@" Integer) and
Display String ('%"').

The drafts, both: RateLimit-Policy items name a policy by a String and carry q (REQUIRED,
non-negative Integer), qu (String), w ("non-negative, non-zero" Integer, seconds), pk (Byte
Sequence); unknown parameters are ignored. RateLimit items name a policy and carry, in -11,
r (REQUIRED, "the available quota") and t (OPTIONAL, "effective window": "the number of
seconds within which the client can use no more than the available quota"); in -12, a and w
with those meanings, and c (OPTIONAL, the request's cost), all non-negative Integers. A
parameter of the other draft is unknown, so ignored: -11 fields lack -12's REQUIRED a.

Beyond the drafts, what sluice promises (docs/configuration.md "Response fields"): each policy
appears once in each field, each RateLimit item names a policy of RateLimit-Policy, and the
available quota is at most the q of the policy it names."""
import re

_KEY = re.compile(r"[a-z*][a-z0-9_\-.*]*")
_TOKEN = re.compile(r"[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]*")
_NUMBER = re.compile(r"-?([0-9]+)(\.([0-9]+))?")
_BASE64 = re.compile(r"[A-Za-z0-9+/=]*")


class Malformed(ValueError):
    pass


class Token(str):
    """An sf-Token, told apart from an sf-String of the same characters."""


class Decimal(float):
    pass


def _number(s, i):
    m = _NUMBER.match(s, i)
    if not m or m.start(1) != i + (s[i] == "-"):
        raise Malformed(f"bad number at {i}")
    whole, fraction = m.group(1), m.group(3)
    if m.group(2) is None:
        if len(whole) > 15:
            raise Malformed(f"integer of more than 15 digits at {i}")
        return int(m.group()), m.end()
    if len(whole) > 12 or not fraction or len(fraction) > 3:
        raise Malformed(f"bad decimal at {i}")
    return Decimal(m.group()), m.end()


def _string(s, i):
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
        elif not 0x20 <= ord(c) <= 0x7E:
            raise Malformed(f"byte {ord(c):#x} in a string at {i}")
        else:
            out.append(c)
            i += 1
    raise Malformed("unterminated string")


def _bare(s, i):
    """RFC 9651 4.2.3.1: one bare item at s[i:]; returns (value, next index)."""
    if i >= len(s):
        raise Malformed("item expected at the end")
    c = s[i]
    if c == "-" or c.isdigit():
        return _number(s, i)
    if c == '"':
        return _string(s, i)
    if c == ":":
        end = s.find(":", i + 1)
        if end < 0 or _BASE64.fullmatch(s, i + 1, end) is None:
            raise Malformed(f"bad byte sequence at {i}")
        return ("bytes", s[i + 1:end]), end + 1
    if c == "?":
        if s[i + 1:i + 2] not in ("0", "1"):
            raise Malformed(f"bad boolean at {i}")
        return s[i + 1] == "1", i + 2
    if c == "@":
        value, end = _number(s, i + 1)
        if isinstance(value, Decimal):
            raise Malformed(f"a date is an integer, at {i}")
        return ("date", value), end
    if c == "%" and s[i + 1:i + 2] == '"':
        value, end = _string(s, i + 1)
        return ("display", value), end
    m = _TOKEN.match(s, i)
    if m:
        return Token(m.group()), m.end()
    raise Malformed(f"no item at {i}: {s[i:]!r}")


def parse_list(s):
    """RFC 9651 4.2.1, a List of Items: [(bare item, {param: value})]."""
    items, i, s = [], 0, s.strip(" ")
    if not s:
        raise Malformed("empty list")
    while True:
        if s[i] == "(":
            raise Malformed(f"an inner list where an item is expected, at {i}")
        value, i = _bare(s, i)
        params = {}
        while i < len(s) and s[i] == ";":
            i += 1
            while i < len(s) and s[i] == " ":
                i += 1
            m = _KEY.match(s, i)
            if not m:
                raise Malformed(f"bad parameter key at {i}: {s[i:]!r}")
            key, i = m.group(), m.end()
            params[key] = True
            if i < len(s) and s[i] == "=":
                params[key], i = _bare(s, i + 1)
        items.append((value, params))
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


def _count(params, key, required, where, positive=False):
    if key not in params:
        if required:
            raise Malformed(f"{where}: '{key}' is required")
        return None
    v = params[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < (1 if positive else 0):
        kind = "positive" if positive else "non-negative"
        raise Malformed(f"{where}: '{key}' must be a {kind} integer, not {v!r}")
    return v


def _policy_name(value, where):
    # "The Item[SF] value MUST be a String[SF]" (-11); -12 names policies by Strings too.
    if isinstance(value, Token) or not isinstance(value, str):
        raise Malformed(f"{where}: a policy is named by an sf-String, not {value!r}")
    return value


# The RateLimit parameters of each draft: (available quota, effective window).
PARAMS = {11: ("r", "t"), 12: ("a", "w")}


def check(headers, draft=12):
    """Reads both fields of a response as `draft` says; returns {name: {"q", "w", "r", "t"}}
    with r the available quota and t the effective window (None when absent), whatever the
    draft calls them. Raises Malformed on anything a client of the draft could not make sense
    of, an available quota above its policy's q included."""
    available, window = PARAMS[draft]
    policies = {}
    for value, params in parse_list(headers["RateLimit-Policy"]):
        name = _policy_name(value, "RateLimit-Policy")
        where = f"RateLimit-Policy {name!r}"
        if name in policies:
            raise Malformed(f"{where} appears twice")
        policies[name] = {"q": _count(params, "q", True, where),
                          "w": _count(params, "w", False, where, positive=True)}
        if "qu" in params and (isinstance(params["qu"], Token) or
                               not isinstance(params["qu"], str)):
            raise Malformed(f"{where}: qu must be a string")
        if "pk" in params and not (isinstance(params["pk"], tuple) and params["pk"][0] == "bytes"):
            raise Malformed(f"{where}: pk must be a byte sequence")
    seen = set()
    for value, params in parse_list(headers["RateLimit"]):
        name = _policy_name(value, "RateLimit")
        where = f"RateLimit {name!r}"
        if name in seen:
            raise Malformed(f"{where} appears twice")
        seen.add(name)
        if name not in policies:
            raise Malformed(f"{where} names no policy of RateLimit-Policy")
        r = _count(params, available, True, where)
        t = _count(params, window, False, where)
        if draft == 12:
            _count(params, "c", False, where)
        q = policies[name]["q"]
        if r > q:
            raise Malformed(f"{where}: {available}={r} is more than its policy's q={q}")
        policies[name].update(r=r, t=t)
    return policies
