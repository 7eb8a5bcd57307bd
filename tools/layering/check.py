#!/usr/bin/env python3
"""The layering check of `make test`: every #include of a Sluice header must point at the
file's own layer or one the layer may use, as the table of layers in docs/architecture.md says
(between the `<!-- layers -->` and `<!-- /layers -->` markers), and so must every header that
header includes in turn (the include closure): a frontend that may use the engine's face does
not reach the tables behind it. One line per violation:
FILE:LINE: layer X includes HEADER of layer Y (X may use: ...), or
FILE:LINE: layer X includes HEADER, which reaches OTHER of layer Y (through A -> B);
exit 1 if any, 2 if the table cannot be read.

    tools/layering/check.py [ROOT]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_files import cpp_files  # noqa: E402

ROW = re.compile(r"^\|\s*`([a-z]+)`\s*\|(.*?)\|(.*?)\|")
CODE = re.compile(r"`([^`]+)`")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_table(path):
    """{layer: ([folder or file prefix, ...], {layer it may use, ...})}."""
    text = open(path, encoding="utf-8").read()
    start, end = text.find("<!-- layers -->"), text.find("<!-- /layers -->")
    if start < 0 or end < start:
        sys.exit(f"{path}: no <!-- layers --> ... <!-- /layers --> table")
    layers = {}
    for line in text[start:end].splitlines():
        m = ROW.match(line)
        if not m:
            continue
        name, where, uses = m.group(1), CODE.findall(m.group(2)), CODE.findall(m.group(3))
        layers[name] = (where, set(uses))
    if not layers:
        sys.exit(f"{path}: the layers table has no rows")
    for name, (_, uses) in layers.items():
        unknown = uses - set(layers) - {"*"}
        if unknown:
            sys.exit(f"{path}: layer `{name}` may use unknown layers {sorted(unknown)}")
    return layers


def layer_of(rel, layers):
    """The layer whose folder (or file) is the longest prefix of `rel`; None if none."""
    best, best_len = None, -1
    for name, (where, _) in layers.items():
        for prefix in where:
            p = prefix.rstrip("/")
            if (rel == p or rel.startswith(p + "/")) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


def resolve(include, including_dir, root):
    """The repository path an include names: a public header, or one beside the file, or one
    of src/ (a library's own headers); None for a system or generated header."""
    candidates = [os.path.join("include", include), os.path.join(including_dir, include),
                  os.path.join("src", include)]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def includes_of(rel, root, cache):
    """[(line number, include text, resolved path)] of a file's Sluice includes."""
    if rel not in cache:
        found = []
        for i, line in enumerate(open(os.path.join(root, rel), encoding="utf-8"), 1):
            m = INCLUDE.match(line)
            if m:
                target = resolve(m.group(1), os.path.dirname(rel), root)
                if target is not None:
                    found.append((i, m.group(1), target))
        cache[rel] = found
    return cache[rel]


def first_outside(start, ok, layers, root, cache):
    """The first header in the include closure of `start` whose layer is not in `ok`, with the
    chain of headers that leads to it; None when the closure stays inside."""
    seen, queue = {start}, [(start, [start])]
    while queue:
        rel, chain = queue.pop(0)
        for _, _, target in includes_of(rel, root, cache):
            if target in seen:
                continue
            seen.add(target)
            if layer_of(target, layers) not in ok:
                return target, chain + [target]
            queue.append((target, chain + [target]))
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    layers = read_table(os.path.join(root, "docs", "architecture.md"))
    problems, files, cache = [], 0, {}
    for rel in cpp_files(root, ("src", "include")):
        mine = layer_of(rel, layers)
        if mine is None:
            problems.append(f"{rel}:1: in no layer of docs/architecture.md's table")
            continue
        files += 1
        allowed = layers[mine][1]
        if "*" in allowed:
            continue
        ok = allowed | {mine, None}
        for i, text, target in includes_of(rel, root, cache):
            theirs = layer_of(target, layers)
            if theirs not in ok:
                problems.append(f"{rel}:{i}: layer {mine} includes {text} of layer {theirs} "
                                f"({mine} may use: {', '.join(sorted(allowed)) or 'nothing'})")
                continue
            if theirs == mine:
                continue  # its own layer's headers answer for themselves
            outside = first_outside(target, ok, layers, root, cache)
            if outside:
                other, chain = outside
                problems.append(
                    f"{rel}:{i}: layer {mine} includes {text}, which reaches {other} of layer "
                    f"{layer_of(other, layers)} (through {' -> '.join(chain[:-1])}; {mine} may "
                    f"use: {', '.join(sorted(allowed)) or 'nothing'})")
    for p in problems:
        print(p)
    print(f"layering: {files} files, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
