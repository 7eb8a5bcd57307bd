#!/usr/bin/env python3
"""Puts a benchmark's results section into docs/performance.md: replaces the section whose
`## Title` line starts FILE (up to the next `## `), or appends FILE when there is none.
    python3 bench/write_section.py docs/performance.md results.md
"""
import re
import sys


def write_section(doc, section):
    section = section.rstrip("\n") + "\n"
    title = section.splitlines()[0]
    with open(doc) as f:
        text = f.read()
    m = re.search(rf"^{re.escape(title)}\n.*?(?=^## |\Z)", text, re.M | re.S)
    if m:
        text = text[: m.start()] + section + ("\n" if m.end() < len(text) else "") + text[m.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    with open(sys.argv[2]) as f:
        write_section(sys.argv[1], f.read())
