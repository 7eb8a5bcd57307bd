"""The co_await lambda check finds a lambda written inside a co_await expression, wherever
the expression's lines break, and passes a named one, a comment, and a lambda after the `;`."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("coawait_lambda",
                                              ROOT / "tools/lint/coawait_lambda.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def lines(text):
    return [line for line, _ in check.findings(text)]


def test_a_lambda_inside_the_co_await_is_found_at_the_co_await_line():
    text = ("int x;\n"
            "co_return co_await asio::async_initiate<Token, void()>(\n"
            "    [&later, strand = s.get_executor()](auto handler) {\n"
            "      later(std::move(handler));\n"
            "    }, asio::use_awaitable);\n")
    assert lines(text) == [2]


def test_mutable_and_trailing_return_lambdas_are_found():
    assert lines("co_await f([p]() mutable { g(p); });") == [1]
    assert lines("co_await f([p](int a) -> int { return a; });") == [1]


def test_a_named_initiation_passes():
    text = ("auto init = [strand](auto h) { post(strand, std::move(h)); };\n"
            "co_await asio::async_initiate<Token, void()>(init, asio::use_awaitable);\n")
    assert lines(text) == []


def test_subscripts_comments_and_later_statements_pass():
    assert lines("co_await stream.async_read(buffers[i], token);") == []
    assert lines("co_await f(x);  // not [a](){ } here\nauto l = [a]() { };") == []


def test_the_tree_has_none():
    assert check.main(str(ROOT)) == 0
