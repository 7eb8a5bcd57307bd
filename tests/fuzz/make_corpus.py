#!/usr/bin/python3
"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/<target>/): small, meaningful inputs,
each named for what it is. Deterministic; rerun after changing a seed, commit the result.

    /usr/bin/python3 tests/fuzz/make_corpus.py

Configs, traces and the RLS example are copied from the test data and examples, so the seeds
follow them. The first byte of an http or resp seed is the fuzzer's control byte (see the
targets' headers): read size, "%2F" handling and peer for http; limits and read size for resp.
"""
import glob
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "corpus")

# http control byte: bits 0-4 read size (n*16+1 bytes), bits 5-6 escaped_slashes
# (0 decode, 1 reject, 2 keep), bit 7 the peer is a trusted proxy.
WHOLE, BYTEWISE, TRUSTED, REJECT_SLASH = 0x1F, 0x00, 0x80, 0x20

HTTP = {
    "get": (WHOLE, b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"),
    "get_bytewise": (BYTEWISE, b"GET /search/q?x=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\n"),
    "health_head": (WHOLE, b"HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n"),
    "api_user_key": (WHOLE, b"GET /api/orders?userId=42 HTTP/1.1\r\nHost: API.Example.com:80\r\n"
                            b"X-Api-Key: k1\r\nX-Tenant: t\r\n\r\n"),
    "api_missing_key": (WHOLE, b"GET /api/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n"),
    "login_post_length": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nuser=a&pw=b"),
    "upload_chunked": (WHOLE, b"PUT /upload/f HTTP/1.1\r\nHost: a\r\nCookie: session=s1; x=y\r\n"
                              b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
    "upload_chunked_ext_trailer": (0x03, b"POST /upload/f HTTP/1.1\r\nHost: a\r\nCookie: session=s\r\n"
                                         b"Transfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"),
    "pipeline_keepalive": (0x05, b"GET /reports/a HTTP/1.1\r\nHost: a\r\n\r\n"
                                 b"GET /reports/b HTTP/1.1\r\nHost: a\r\n\r\n"
                                 b"GET /reports/c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
    "http10_no_host": (WHOLE, b"GET /x HTTP/1.0\r\n\r\n"),
    "http10_keepalive": (WHOLE, b"GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /y HTTP/1.0\r\n\r\n"),
    "absolute_form": (WHOLE, b"GET http://internal.example/secret?a=b HTTP/1.1\r\nHost: public.example\r\n\r\n"),
    "absolute_form_https_port": (WHOLE, b"GET https://API.example.com:8443/api/v?userId=1 HTTP/1.1\r\nHost: x\r\n\r\n"),
    "dot_segments": (WHOLE, b"POST /x/../login HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"),
    "dot_and_slashes": (WHOLE, b"GET //./search//a/./b/../c HTTP/1.1\r\nHost: a\r\n\r\n"),
    "escapes": (WHOLE, b"GET /%6cogin/%2e/%7Euser/%2fetc%2F HTTP/1.1\r\nHost: a\r\n\r\n"),
    "escaped_slash_reject": (WHOLE | REJECT_SLASH, b"GET /a%2F..%2Fadmin HTTP/1.1\r\nHost: a\r\n\r\n"),
    "above_root": (WHOLE, b"GET /../../etc/passwd HTTP/1.1\r\nHost: a\r\n\r\n"),
    "bad_escape": (WHOLE, b"GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n"),
    "two_hosts": (WHOLE, b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    "no_host_11": (WHOLE, b"GET / HTTP/1.1\r\n\r\n"),
    "bad_host": (WHOLE, b"GET / HTTP/1.1\r\nHost: a/b@c:x\r\n\r\n"),
    "ipv6_host": (WHOLE, b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"),
    "xff_trusted": (WHOLE | TRUSTED, b"GET /search/x HTTP/1.1\r\nHost: a\r\n"
                                     b"X-Forwarded-For: 1.2.3.4, 10.0.0.7\r\n\r\n"),
    "xff_ports_and_garbage": (WHOLE | TRUSTED, b"GET /search/x HTTP/1.1\r\nHost: a\r\n"
                                               b"X-Forwarded-For: garbage, [::ffff:3.3.3.7]:80, 3.3.3.3:1234\r\n\r\n"),
    "forwarded_trusted": (WHOLE | TRUSTED, b"GET / HTTP/1.1\r\nHost: a\r\n"
                                           b"Forwarded: for=\"[2001:db8::1]:4711\";proto=http, for=10.0.0.2\r\n\r\n"),
    "smuggle_cl_te": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n"),
    "smuggle_two_cl": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
    "smuggle_cl_list": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello"),
    "smuggle_te_identity": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n"
                                   b"Content-Length: 5\r\n\r\nhello"),
    "smuggle_xchunked": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"),
    "smuggle_te_http10": (WHOLE, b"POST /login HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    "smuggle_bad_chunk_size": (WHOLE, b"POST /upload/a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                                      b"fffffffffffffffff\r\nx\r\n0\r\n\r\n"),
    "smuggle_obs_fold": (WHOLE, b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\n\r\n"),
    "smuggle_bare_lf": (WHOLE, b"GET / HTTP/1.1\nHost: a\nContent-Length: 0\n\n"),
    "smuggle_nul_header": (WHOLE, b"GET / HTTP/1.1\r\nHost: a\r\nX-A: a\x00b\r\n\r\n"),
    "huge_content_length_leading_zeros": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Length: "
                                                 + b"0" * 50 + b"122978273034400\r\n\r\nhello"),
    "expect_continue": (WHOLE, b"POST /login HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi"),
    "long_target": (WHOLE, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n"),
    "many_headers": (WHOLE, b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(200)) + b"\r\n"),
    "connection_tokens": (WHOLE, b"GET / HTTP/1.1\r\nHost: a\r\nConnection: X-Drop, keep-alive\r\nX-Drop: 1\r\n"
                                 b"Keep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: h2c\r\n\r\n"),
}

# resp control byte: bit 0 small caps (64-byte bulks, 8 arguments, 256 bytes a command, 128
# bytes inline), bits 1-7 the read size - 1.
RESP_WHOLE, RESP_BYTEWISE, RESP_SMALL = 0xFE, 0x00, 0x01
RESP = {
    "ping_inline": (RESP_WHOLE, b"PING\r\n"),
    "ping_array": (RESP_WHOLE, b"*1\r\n$4\r\nPING\r\n"),
    "throttle": (RESP_WHOLE, b"*5\r\n$11\r\nCL.THROTTLE\r\n$4\r\nuser\r\n$2\r\n15\r\n$2\r\n30\r\n$2\r\n60\r\n"),
    "throttle_inline_quantity": (RESP_WHOLE, b"CL.THROTTLE user 15 30 60 3\r\n"),
    "pipeline_bytewise": (RESP_BYTEWISE, b"*1\r\n$4\r\nPING\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n"),
    "empty_commands": (RESP_WHOLE, b"*0\r\n*-1\r\n\r\n\n*1\r\n$4\r\nPING\r\n"),
    "hello3": (RESP_WHOLE, b"HELLO 3\r\n*2\r\n$5\r\nHELLO\r\n$1\r\n2\r\n"),
    "inline_quotes": (RESP_WHOLE, b"ECHO \"a b\\x41\\n\" 'it\\'s' plain\r\n"),
    "unbalanced_quotes": (RESP_WHOLE, b"PING \"open\r\n"),
    "overlong_bulk_defect7": (RESP_WHOLE, b"*1\r\n$4\r\nPINGXX\r\n"),
    "short_bulk": (RESP_WHOLE, b"*1\r\n$6\r\nPING\r\n*1\r\n$4\r\nPING\r\n"),
    "huge_bulk_announce": (RESP_WHOLE, b"*1\r\n$999999999999\r\n"),
    "huge_array_announce": (RESP_WHOLE, b"*2000000000\r\n"),
    "bad_lengths": (RESP_WHOLE, b"*1\r\n$-1\r\n"),
    "nested_array": (RESP_WHOLE, b"*1\r\n*1\r\n$1\r\nx\r\n"),
    "integer_element": (RESP_WHOLE, b"*2\r\n$4\r\nECHO\r\n:1\r\n"),
    "leading_zero": (RESP_WHOLE, b"*1\r\n$01\r\nx\r\n"),
    "small_caps_bulk": (RESP_SMALL | 0x20, b"*2\r\n$4\r\nECHO\r\n$65\r\n" + b"x" * 65 + b"\r\n"),
    "small_caps_args": (RESP_SMALL | 0x20, b"*9\r\n" + b"$1\r\nx\r\n" * 9),
    "small_caps_inline": (RESP_SMALL, b"ECHO " + b"y" * 200 + b"\r\n"),
    "sluice_check": (RESP_WHOLE, b"SLUICE.CHECK api 1.2.3.4 1\r\n"),
}

RULES = {
    "json_rule": b"per-user\n{\"limit\":\"token-bucket:rate=10/s,burst=20\",\"key\":[\"query:userId\"],"
                 b"\"action\":\"delay\",\"max_wait\":\"500ms\",\"status\":429,\"body\":\"slow\\n\","
                 b"\"on_missing_key\":\"skip\"}",
    "json_rule_named": b"r\n{\"name\":\"r\",\"limit\":\"gcra:rate=1000/s,burst=100\",\"key\":\"const:global\"}",
    "yaml_rule": b"per-ip\nlimit: leaky-bucket:rate=2/s,burst=10\nkey: [client_ip, route]\naction: delay\nmax_wait: 5s\n",
    "yaml_rule_redis": b"shared\nlimit: fixed-window:limit=100,window=1m\nkey: header:X-Api-Key\nstorage: redis\n"
                       b"on_failure: local\nlocal_share: 0.5\non_missing_key: deny\nstatus: 401\n",
    "rule_concurrency_lease": b"up\n{\"limit\":\"concurrency:limit=2\",\"key\":\"cookie:session\",\"storage\":\"redis\",\"lease\":4,\"lease_ttl\":\"2s\"}",
    "rule_bad_fields": b"bad name\n{\"limit\":\"tokn:rate=1\",\"key\":[],\"status\":99,\"cots\":1}",
    "rule_non_utf8": b"r\xff\n{\"limit\":\"gcra:rate=1/s,burst=1\",\"key\":\"header:\xc3\x28\"}",
    "rule_deep": b"r\n" + b"[" * 64 + b"]" * 64,
    "check_rule": b"api\n{\"rule\":\"api\",\"key\":\"1.2.3.4\",\"cost\":2}",
    "check_inline": b"-\n{\"limit\":\"gcra:rate=10/s,burst=5\",\"key\":\"k\",\"max_wait\":\"100ms\"}",
    "check_batch": b"-\n{\"checks\":[{\"rule\":\"a\",\"key\":\"k\"},{\"limit\":\"token-bucket:rate=1/s,burst=1\",\"key\":\"x\",\"cost\":9007199254740992},3]}",
    "check_query": b"api\nkey=1.2.3.4&cost=3",
    "check_query_escapes": b"api\nkey=a%20b+c%zz&cost=1&cost=2&other=x",
}

SPECS = {
    "token_bucket": b"token-bucket:rate=10/s,burst=20",
    "gcra": b"gcra:rate=30/60s,burst=15",
    "leaky_delay": b"leaky-bucket:rate=200/m,burst=3,delay=1",
    "leaky_nodelay": b"leaky-bucket:rate=7/s,burst=20,nodelay=1",
    "fixed_window": b"fixed-window:limit=10,window=1s",
    "sliding_log": b"sliding-log:limit=3,window=250ms",
    "sliding_window": b"sliding-window:limit=7,window=500ms",
    "smooth_bursty": b"smooth-bursty:rate=5/s,max-burst=2s",
    "smooth_warmup": b"smooth-warmup:rate=4/s,warmup=1s,cold-factor=2",
    "queue": b"queue:rate=22/5s,max-wait=2s",
    "concurrency": b"concurrency:limit=2",
    "huge_rate": b"token-bucket:rate=9223372036854775807/1us,burst=9223372036854775807",
    "tiny_rate": b"gcra:rate=1/9223372036854775807us,burst=0",
    "units": b"sliding-window:limit=1,window=1h",
    "duplicate_param": b"queue:rate=1/s,max-wait=1s,max-wait=2s",
    "bad_unit": b"token-bucket:rate=10/x,burst=1",
}

TRACES_EXTRA = {
    "crlf_comments": b"# comment\r\n\r\n0,a\r\n0,a,2\r\n100,b\r\n",
    "time_back": b"5,a\n4,a\n",
    "zero_cost": b"0,a,0\n",
    "huge_numbers": b"9223372036854775,a,9223372036854775807\n9223372036854775,a\n",
    "overflow_time": b"9223372036854776,a\n",
    "signs_and_spaces": b"+1,a\n 2,b\n3,c, 1\n",
    "empty_key": b"0,,1\n",
    "binary_key": b"0,\x00\xff\xfe key,1\n1,a;b|c,3\n",
    "no_newline_end": b"0,a\n1,a",
}


# reply control byte: bit 0 the store's compact form (arrays of integers as numbers), bits 1-7
# the read size (1 to 128 bytes).
REPLY_WHOLE, REPLY_BYTEWISE, REPLY_COMPACT = 0xFE, 0x00, 0x01
SCRIPT_ANSWER = b"*16\r\n" + b"".join(b":%d\r\n" % v for v in (1, 0, 99, -1, 0, 1000, 7, 0) * 2)
REPLY = {
    "status_ok": (REPLY_WHOLE, b"+OK\r\n"),
    "error_noscript": (REPLY_WHOLE, b"-NOSCRIPT No matching script. Please use EVAL.\r\n"),
    "moved": (REPLY_WHOLE, b"-MOVED 3999 127.0.0.1:6381\r\n"),
    "bulk_and_nil": (REPLY_BYTEWISE, b"$5\r\nhello\r\n$-1\r\n$0\r\n\r\n"),
    "script_answers_compact": (REPLY_COMPACT | 0x0A, SCRIPT_ANSWER),
    "script_answers_bytewise": (REPLY_COMPACT, SCRIPT_ANSWER),
    "mixed_array_compact": (REPLY_COMPACT | 0x06, b"*3\r\n:1\r\n$2\r\nab\r\n*-1\r\n"),
    "cluster_slots": (REPLY_WHOLE, b"*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n"
                                   b":6379\r\n$40\r\n" + b"a" * 40 + b"\r\n"),
    "pipelined_pongs": (0x08, b"+PONG\r\n" * 5),
    "integer_limits": (REPLY_WHOLE, b":9223372036854775807\r\n:-9223372036854775808\r\n"
                                    b":9223372036854775808\r\n"),
    "deep_nesting": (REPLY_WHOLE, b"*1\r\n" * 9 + b":1\r\n"),
    "huge_bulk_announce": (REPLY_WHOLE, b"$999999999999\r\n"),
    "huge_array_announce": (REPLY_COMPACT, b"*4294967295\r\n:1\r\n"),
    "bad_type_byte": (REPLY_WHOLE, b"!oops\r\n"),
    "cr_without_lf": (REPLY_WHOLE, b"+OK\rX\n"),
}


# response control byte: bit 0 the response answers HEAD, bit 1 a head limit of 64 + byte 1
# (else the gateway's 32 KiB); byte 1 also picks where the head is cut in two.
GET, HEAD, SMALL = 0x00, 0x01, 0x02
RESPONSE = {
    "length": (GET, 7, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc"),
    "http10_keep_alive": (GET, 9, b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"),
    "connection_tokens": (GET, 3, b"HTTP/1.1 200 OK\r\nConnection: X-A, close\r\nX-A: 1\r\n"
                                  b"Proxy-Connection: keep-alive\r\nContent-Length: 1\r\n\r\nx"),
    "no_content": (GET, 1, b"HTTP/1.1 204 \r\nServer: t \t\r\n\r\n"),
    "not_modified_length": (GET, 2, b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"),
    "head_answer": (HEAD, 5, b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nX-Request-Id: r\r\n\r\n"),
    "chunked": (GET, 4, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    "te_and_length": (GET, 4, b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
    "two_lengths": (GET, 4, b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
    "obs_fold": (GET, 4, b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n"),
    "small_limit": (SMALL, 20, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 0123456789012345678\r\n\r\n"),
    "utf8_value": (GET, 6, "HTTP/1.1 200 Gut\r\nX-Name: Jos\u00e9\r\nContent-Length: 0\r\n\r\n".encode()),
}


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def copy(target, pattern, prefix):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
        shutil.copyfile(path, os.path.join(OUT, target, prefix + os.path.basename(path)))


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, (control, data) in HTTP.items():
        write("http", name, bytes([control]) + data)
    for name, (control, data) in RESP.items():
        write("resp", name, bytes([control]) + data)
    for name, (control, data) in REPLY.items():
        write("reply", name, bytes([control]) + data)
    for name, (control, cut, data) in RESPONSE.items():
        write("response", name, bytes([control, cut]) + data)
    for name, data in RULES.items():
        write("rules", name, data)
    for name, data in SPECS.items():
        write("spec", name, data)
    for name, data in TRACES_EXTRA.items():
        write("trace", name, data)
    copy("trace", "tests/golden/traces/*.csv", "golden_")
    copy("trace", "examples/traces/*.csv", "example_")
    os.makedirs(os.path.join(OUT, "config"), exist_ok=True)
    copy("config", "tests/testdata/config/good/*.yaml", "good_")
    copy("config", "tests/testdata/config/bad/*.yaml", "bad_")
    copy("config", "examples/*.yaml", "example_")
    copy("config", "tests/integration/rls/*.yaml", "rls_")
    for target in sorted(os.listdir(OUT)):
        print(f"{target}: {len(os.listdir(os.path.join(OUT, target)))} seeds")


if __name__ == "__main__":
    main()
