"""The CLI explains itself: `sluice --version`, a bare `sluice`, an example in every
subcommand's --help (the replay one run as shown), and a bash completion that offers every
subcommand, flag and algorithm the binary has."""
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
COMPLETION = os.path.join(ROOT, "packaging", "bash-completion", "sluice")


def run(sluice_bin, *args, **kw):
    return subprocess.run([sluice_bin, *args], capture_output=True, text=True, timeout=30, **kw)


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(sluice VERSION (\S+)", f.read()).group(1)


def subcommands(help_text):
    """The names listed under 'Subcommands:' in CLI11's help."""
    section = help_text.split("Subcommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.strip()]


def flags(help_text):
    """The long flags listed under 'Options:'."""
    section = help_text.split("Options:\n", 1)[1].split("\n\n", 1)[0]
    return sorted(set(re.findall(r"(--[a-z][a-z-]*)", section)))


@pytest.fixture(scope="module")
def top_help(sluice_bin):
    p = run(sluice_bin, "--help")
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_version_prints_the_release_and_the_commit(sluice_bin):
    p = run(sluice_bin, "--version")
    assert p.returncode == 0 and p.stderr == ""
    m = re.fullmatch(r"sluice (\S+) \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)\n", p.stdout)
    assert m, p.stdout
    assert m.group(1) == project_version()


def test_bare_sluice_prints_the_help_and_exits_0(sluice_bin, top_help):
    p = run(sluice_bin)
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout == top_help
    assert p.stdout.startswith("Sluice: ") and "Usage: sluice" in p.stdout
    assert {"replay", "check-config", "serve", "demo-upstream"} <= set(subcommands(p.stdout))


def test_two_subcommands_are_a_usage_error(sluice_bin):
    p = run(sluice_bin, "check-config", "a.yaml", "serve")
    assert p.returncode == 2


def test_every_subcommand_help_ends_with_an_example_of_itself(sluice_bin, top_help):
    for name in subcommands(top_help):
        p = run(sluice_bin, name, "--help")
        assert p.returncode == 0, (name, p.stderr)
        assert "\nExample:\n" in p.stdout, f"sluice {name} --help has no example"
        example = p.stdout.split("\nExample:\n", 1)[1]
        assert f"sluice {name}" in example, (name, example)


def test_the_replay_example_prints_what_its_help_shows(sluice_bin):
    """The example's command line, run in a shell, prints the lines shown under it."""
    example = run(sluice_bin, "replay", "--help").stdout.split("\nExample:\n", 1)[1]
    lines = [line.strip() for line in example.splitlines()]
    command = lines[0]
    shown = [line for line in lines[1:] if re.fullmatch(r"\d+,\w+(,-?\d+){5}", line)]
    assert len(shown) == 3, example
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(sluice_bin)) + ":" +
               os.environ["PATH"])
    p = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                       timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == shown


def complete(words, cwd=None):
    """What the completion offers for a command line whose last word is being typed."""
    script = (f"source {COMPLETION}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
              f"COMP_CWORD={len(words) - 1}; _sluice; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    p = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True,
                       cwd=cwd, timeout=30)
    assert p.returncode == 0, p.stderr
    return [w for w in p.stdout.splitlines() if w]


def test_completion_offers_every_subcommand_and_each_ones_flags(sluice_bin, top_help):
    assert set(complete(["sluice", ""])) >= set(subcommands(top_help)) | {"--version"}
    for name in subcommands(top_help):
        offered = complete(["sluice", name, "--"])
        wanted = flags(run(sluice_bin, name, "--help").stdout)
        assert set(wanted) <= set(offered), (name, sorted(set(wanted) - set(offered)))


def test_completion_offers_the_algorithms_the_binary_accepts(sluice_bin):
    p = run(sluice_bin, "replay", "--limit", "nope", input="")
    accepted = re.search(r"accepted: ([^)]*)\)", p.stderr).group(1).split(", ")
    offered = complete(["sluice", "replay", "--limit", ""])
    assert sorted(offered) == sorted(a + ":" for a in accepted)
    assert complete(["sluice", "replay", "--mode", "w"]) == ["wait"]


def test_completion_offers_yaml_files_for_a_config(tmp_path):
    (tmp_path / "a.yaml").write_text("")
    (tmp_path / "b.txt").write_text("")
    assert complete(["sluice", "serve", "--config", ""], cwd=tmp_path) == ["a.yaml"]
    assert complete(["sluice", "check-config", ""], cwd=tmp_path) == ["a.yaml"]
