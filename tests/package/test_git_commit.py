"""The commit that `sluice --version` and sluice_build_info report, as cmake/git_commit.cmake
captures it at build time: the checkout's HEAD (and "-dirty" with uncommitted changes),
"unknown" for a release tarball (no .git, or unpacked inside some other repository), or what
-DSLUICE_GIT_COMMIT says."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_support import SOURCE, run  # noqa: E402

SCRIPT = os.path.join(SOURCE, "cmake", "git_commit.cmake")


def captured(source_dir, out, override=""):
    run("cmake", f"-DSOURCE_DIR={source_dir}", f"-DOUT={out}", f"-DOVERRIDE={override}",
        "-P", SCRIPT)
    return re.search(r'kGitCommit = "([^"]*)"', out.read_text()).group(1)


def git(cwd, *args):
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(cwd), *args)


def test_a_checkout_reports_its_head_and_whether_it_is_dirty(tmp_path):
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "a.txt").write_text("1\n")
    git(tree, "init", "-q")
    git(tree, "add", "a.txt")
    git(tree, "commit", "-qm", "one")
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    assert captured(tree, tmp_path / "c.cpp") == head
    (tree / "a.txt").write_text("2\n")
    assert captured(tree, tmp_path / "c.cpp") == head + "-dirty"
    (tree / "untracked.txt").write_text("")
    git(tree, "checkout", "-q", "a.txt")
    assert captured(tree, tmp_path / "c.cpp") == head


def test_a_tarball_reports_unknown(tmp_path):
    tree = tmp_path / "sluice-0.1.0"
    tree.mkdir()
    assert captured(tree, tmp_path / "c.cpp") == "unknown"


def test_a_tarball_inside_another_repository_reports_unknown(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "x").write_text("")
    git(tmp_path, "add", "x")
    git(tmp_path, "commit", "-qm", "packaging repo")
    tree = tmp_path / "sluice-0.1.0"
    tree.mkdir()
    assert captured(tree, tmp_path / "c.cpp") == "unknown"


def test_an_override_wins_and_must_be_plain(tmp_path):
    assert captured(tmp_path, tmp_path / "c.cpp", "1a2b3c4d5e6f") == "1a2b3c4d5e6f"
    p = subprocess.run(["cmake", f"-DSOURCE_DIR={tmp_path}", f"-DOUT={tmp_path / 'd.cpp'}",
                        '-DOVERRIDE=x"y', "-P", SCRIPT], capture_output=True, text=True)
    assert p.returncode != 0 and "SLUICE_GIT_COMMIT" in p.stderr


def test_an_unchanged_commit_leaves_the_file_alone(tmp_path):
    out = tmp_path / "c.cpp"
    captured(tmp_path, out)
    os.utime(out, (1, 1))
    captured(tmp_path, out)
    assert os.stat(out).st_mtime == 1  # so ninja rebuilds nothing
