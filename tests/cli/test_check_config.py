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


GOOD = corpus("good") + [os.path.join(ROOT, "examples", f) for f in (
    "gateway.yaml", "tiers.yaml", "redis-shared.yaml", "redis-quota.yaml",
    "redis-cost-after-response.yaml")]
BAD = corpus("bad")


def check(sluice_bin, *args):
    return subprocess.run([sluice_bin, "check-config", *args], capture_output=True, text=True,
                          timeout=30)


def expectations(path):
    """The leading '# expect: LINE: substring' lines of a bad file, as (line, substring)."""
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
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


MINIMAL = os.path.join(CORPUS, "good", "minimal.yaml")


def test_a_file_over_max_config_size_is_one_error_naming_the_cap(sluice_bin, tmp_path):
    path = tmp_path / "padded.yaml"
    with open(MINIMAL) as f:
        text = f.read()
    path.write_text(text + "#" * (2048 - len(text) - 1) + "\n")  # exactly 2 KiB
    p = check(sluice_bin, "--max-config-size", "2047", str(path))
    assert p.returncode == 2
    assert p.stderr == (f"{path}: is larger than the config size limit of 2047 "
                        "(--max-config-size); nothing past it was read\n")
    assert check(sluice_bin, "--max-config-size", "2KiB", str(path)).returncode == 0


def test_dev_zero_and_a_fifo_are_refused_at_once(sluice_bin, tmp_path):
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    for path, kind in [("/dev/zero", "a character device"), (str(fifo), "a FIFO (named pipe)")]:
        p = check(sluice_bin, path)
        assert (p.returncode, p.stderr) == (2, f"{path}: is {kind}; a config must be a regular "
                                               "file of at most 16MiB (--max-config-size)\n")


@pytest.mark.parametrize("value,problem", [
    ("lots", "size 'lots' must be bytes with an optional unit (e.g. 64MiB, 16m, 1GiB)"),
    ("100", "size '100' is out of range (accepted: 1KiB to 1GiB)"),
    ("2GiB", "size '2GiB' is out of range (accepted: 1KiB to 1GiB)"),
])
def test_a_bad_max_config_size_is_refused_by_name(sluice_bin, value, problem):
    p = check(sluice_bin, "--max-config-size", value, MINIMAL)
    assert (p.returncode, p.stderr) == (2, f"sluice check-config: --max-config-size: {problem}\n")
