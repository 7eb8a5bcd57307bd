"""`sluice replay` input and output format (DESIGN.md, "sluice replay")."""
import pytest

TB = ("--limit", "token-bucket:rate=1/s,burst=3")


def test_one_output_line_per_request_in_input_order_with_seven_fields(decide):
    trace = "0,a,1\n0,b,1\n5,a,2\n5,a,1\n7,c,1\n7,b,3\n"
    rows = decide(trace, *TB)
    assert [(t, k, c) for t, k, c, *_ in rows] == [
        (0, b"a", 1), (0, b"b", 1), (5, b"a", 2), (5, b"a", 1), (7, b"c", 1), (7, b"b", 3)]


def test_allowed_is_0_or_1_and_denied_requests_have_zero_delay(decide):
    rows = decide("0,a\n" * 6, "--limit", "leaky-bucket:rate=1/s,burst=2")
    assert [r[3] for r in rows] == [1, 1, 1, 0, 0, 0]
    assert [r[4] for r in rows] == [0, 1_000_000, 2_000_000, 0, 0, 0]


def test_allowed_requests_report_retry_after_zero(decide):
    rows = decide("0,a\n0,a\n", *TB)
    assert all(r[6] == 0 for r in rows if r[3] == 1)


def test_cost_column_is_optional_and_defaults_to_1(decide):
    rows = decide("0,a\n0,a,1\n0,a\n0,a\n", *TB)
    assert [r[2] for r in rows] == [1, 1, 1, 1]
    assert [r[3] for r in rows] == [1, 1, 1, 0]           # burst 3: the fourth unit is denied


def test_cost_is_echoed_and_charged(decide):
    rows = decide("0,a,2\n0,a,2\n0,a,1\n", *TB)
    assert [(r[2], r[3]) for r in rows] == [(2, 1), (2, 0), (1, 1)]


def test_comment_and_blank_lines_are_ignored(decide):
    trace = "# header\n\n0,a\n#0,a\n\n\n0,b\n# trailing comment\n"
    assert [(r[0], r[1]) for r in decide(trace, *TB)] == [(0, b"a"), (0, b"b")]


def test_crlf_line_ends_are_stripped(decide):
    rows = decide(b"# c\r\n\r\n0,a,2\r\n0,b\r\n", *TB)
    assert [(r[1], r[2]) for r in rows] == [(b"a", 2), (b"b", 1)]


def test_only_one_trailing_cr_is_stripped_the_rest_belongs_to_the_key(decide):
    assert decide(b"0,a\r\r\n", *TB)[0][1] == b"a\r"


def test_last_line_without_newline_is_read(decide):
    rows = decide("0,a\n1,b,2", *TB)
    assert [(r[1], r[2]) for r in rows] == [(b"a", 1), (b"b", 2)]


def test_last_line_without_newline_after_crlf_lines_is_read(decide):
    rows = decide(b"0,a\r\n1,b\r", *TB)
    assert [r[1] for r in rows] == [b"a", b"b"]


def test_empty_input_gives_empty_output(replay):
    p = replay("", *TB)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")


def test_only_comments_give_empty_output(replay):
    p = replay("# nothing\n\n#\n", *TB)
    assert (p.returncode, p.stdout) == (0, b"")


@pytest.mark.parametrize("key", [
    b" a b ", b"\t", b"user:1/x?y=2", "ключ-😀".encode(), b"\xff\xfe\x00\x01", b"#not-a-comment",
    b'"quoted"', b"x" * 4000,
], ids=["spaces", "tab", "punctuation", "unicode", "raw-bytes-and-nul", "hash", "quotes", "long"])
def test_keys_are_kept_as_is_byte_for_byte(decide, key):
    rows = decide(b"0," + key + b",1\n", *TB)
    assert rows[0][1] == key


def test_keys_differing_only_in_spaces_or_case_are_different_keys(allowed):
    trace = "0,a\n0,a\n0,a\n0,a\n0, a\n0,a \n0,A\n"
    assert allowed(trace, *TB) == [1, 1, 1, 0, 1, 1, 1]


def test_each_key_has_its_own_state(allowed):
    trace = "0,a,3\n0,b,3\n0,a\n0,b\n"
    assert allowed(trace, *TB) == [1, 1, 0, 0]


def test_equal_times_are_accepted(allowed):
    assert allowed("7,a\n7,a\n7,b\n", *TB) == [1, 1, 1]

