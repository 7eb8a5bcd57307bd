"""The layering check (tools/layering/check.py) on a tree made for the test: an include that
points at a layer its file's layer may not use fails with FILE:LINE and the rule, so does one
whose own includes reach such a layer (the include closure), one that follows the table passes,
and a file in no layer is reported."""
import os
import subprocess
import sys

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                     "layering", "check.py")

TABLE = """\
<!-- layers -->
| layer | folders | may use |
|---|---|---|
| `core` | `include/sluice/core`, `src/core` | |
| `table` | `include/sluice/table`, `src/table` | `core` |
| `engine` | `include/sluice/engine`, `src/engine` | `core`, `table` |
| `server` | `src/server` | `core`, `engine` |
<!-- /layers -->
"""


def tree(tmp_path, files):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text(TABLE)
    for path, text in files.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return subprocess.run([sys.executable, CHECK, str(tmp_path)], capture_output=True, text=True)


def test_an_include_the_table_allows_passes(tmp_path):
    r = tree(tmp_path, {
        "include/sluice/core/time.hpp": "#pragma once\n",
        "include/sluice/engine/engine.hpp": '#include "sluice/core/time.hpp"\n',
        "src/server/gateway.cpp": '#include "sluice/engine/engine.hpp"\n#include <vector>\n',
    })
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_upward_or_sideways_include_fails_naming_file_line_and_rule(tmp_path):
    r = tree(tmp_path, {
        "include/sluice/core/time.hpp": '#pragma once\n#include "sluice/engine/engine.hpp"\n',
        "include/sluice/engine/engine.hpp": "#pragma once\n",
        "src/server/gateway.cpp": '#include "sluice/core/time.hpp"\n',
    })
    assert r.returncode == 1
    assert ("include/sluice/core/time.hpp:2: layer core includes sluice/engine/engine.hpp of "
            "layer engine (core may use: nothing)") in r.stdout
    assert ("src/server/gateway.cpp:1: layer server includes sluice/core/time.hpp, which "
            "reaches include/sluice/engine/engine.hpp of layer engine") not in r.stdout


def test_a_header_that_reaches_a_forbidden_layer_through_another_fails(tmp_path):
    # The gateway may use the engine's face, not the tables the engine keeps behind it.
    r = tree(tmp_path, {
        "include/sluice/table/keyed_table.hpp": "#pragma once\n",
        "include/sluice/engine/outcome.hpp": "#pragma once\n",
        "include/sluice/engine/loop.hpp":
            '#pragma once\n#include "sluice/engine/outcome.hpp"\n'
            '#include "sluice/table/keyed_table.hpp"\n',
        "src/server/gateway.cpp": '#include "sluice/engine/loop.hpp"\n',
    })
    assert r.returncode == 1
    assert ("src/server/gateway.cpp:1: layer server includes sluice/engine/loop.hpp, which "
            "reaches include/sluice/table/keyed_table.hpp of layer table (through "
            "include/sluice/engine/loop.hpp; server may use: core, engine)") in r.stdout, r.stdout


def test_a_file_in_no_layer_is_reported(tmp_path):
    r = tree(tmp_path, {"src/stray/x.cpp": "int x;\n"})
    assert r.returncode == 1
    assert "src/stray/x.cpp:1: in no layer" in r.stdout
