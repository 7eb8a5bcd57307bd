#!/usr/bin/env python3
"""A check of `make test` for a g++ 12 miscompilation: a lambda written inside a co_await
expression (say, the initiation passed to asio::async_initiate) has its captures destroyed
twice (asio issue #1007). A captured executor or shared_ptr then loses a reference, and what it
points at is freed while still in use; the admin session's strand was, until ASan saw it. Name
the lambda first, then co_await. One line per finding, FILE:LINE: ...; exit 1 if any.

    tools/lint/coawait_lambda.py [ROOT]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_files import cpp_files  # noqa: E402

AWAIT = re.compile(r"\bco_await\b")
# A lambda's introducer followed by its body: [captures] (params) mutable -> T {
LAMBDA = re.compile(r"\[[^\[\]]*\]\s*(\([^()]*\))?\s*(mutable\s*)?(->\s*[\w:<>, ]+\s*)?\{")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def findings(text):
    """(line, excerpt) of each co_await whose expression, up to its `;`, writes a lambda."""
    code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in AWAIT.finditer(code):
        end = code.find(";", m.end())
        expression = code[m.start():end if end >= 0 else len(code)]
        if LAMBDA.search(expression):
            yield code.count("\n", 0, m.start()) + 1, " ".join(expression.split())[:80]


def main(root):
    bad = 0
    for rel in cpp_files(root, ("src", "include", "tests", "bench", "examples")):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for line, excerpt in findings(text):
            print(f"{rel}:{line}: a lambda inside a co_await expression (g++ 12 destroys its "
                  f"captures twice); name it first: {excerpt}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
