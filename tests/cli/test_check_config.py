"""`sluice check-config FILE` on the config corpus (tests/testdata/config): exit 0 with
"FILE: ok", or exit 2 with every error as FILE:LINE: problem, as each bad file's header says."""
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "testdata", "config")


def corpus(kind):
    folder = os.path.join(CORPUS, kind)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".yaml"))


GOOD = corpus("good") + [os.path.join(ROOT, "examples", "gateway.yaml")]
BAD = corpus("bad")


def check(sluice_bin, *args):
    return subprocess.run([sluice_bin, "check-config", *args], capture_output=True, text=True,
                          timeout=30)


def expectations(path):
    """The leading '# expect: LINE: substring' lines of a bad file, as (line, substring)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.fullmatch(r"# expect: (\d+): (.*)\n?", line)
            if not m:
                break
            out.append((int(m.group(1)), m.group(2)))
    return out


@pytest.mark.parametrize("path", GOOD, ids=os.path.basename)
def test_good_config_passes(sluice_bin, path):
    p = check(sluice_bin, path)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    assert p.stdout == f"{path}: ok\n"


@pytest.mark.parametrize("path", BAD, ids=os.path.basename)
def test_bad_config_reports_every_error(sluice_bin, path):
    expected = expectations(path)
    assert expected, f"{path} has no '# expect: LINE: substring' header"
    p = check(sluice_bin, path)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == ""
    errors = p.stderr.splitlines()
    assert len(errors) == len(expected), p.stderr
    for error, (line, substring) in zip(errors, expected):
        assert error.startswith(f"{path}:{line}: "), (error, line)
        assert substring in error, (error, substring)


def test_corpus_has_a_file_per_rule():
    assert len(GOOD) >= 5 and len(BAD) >= 40


def test_missing_file_is_an_error_naming_it(sluice_bin, tmp_path):
    path = str(tmp_path / "nope.yaml")
    p = check(sluice_bin, path)
    assert p.returncode == 2
    assert p.stderr == f"{path}: cannot read: No such file or directory\n"


def test_file_argument_is_required(sluice_bin):
    p = check(sluice_bin)
    assert p.returncode == 2
    assert "FILE" in p.stderr


def test_error_file_name_is_as_given(sluice_bin, tmp_path):
    (tmp_path / "c.yaml").write_text("workers: many\n")
    p = subprocess.run([sluice_bin, "check-config", "c.yaml"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2
    assert p.stderr == "c.yaml:1: field 'workers': expected a whole number, got 'many'\n"
