"""The pictures in docs/img are what `sluice simulate` makes today: docs/img/simulate-pictures.sh
run again gives the committed files byte for byte, and every one of them is shown in the docs."""
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
IMG = os.path.join(ROOT, "docs", "img")
SCRIPT = os.path.join(IMG, "simulate-pictures.sh")


def test_the_committed_pictures_are_what_the_script_makes(sluice_bin, tmp_path):
    p = subprocess.run(["bash", SCRIPT, sluice_bin, str(tmp_path)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    made = sorted(os.listdir(tmp_path))
    committed = sorted(f for f in os.listdir(IMG) if f.startswith("simulate-") and
                       f.endswith(".svg"))
    assert made == committed
    for name in made:
        with open(os.path.join(IMG, name), "rb") as a, open(tmp_path / name, "rb") as b:
            assert a.read() == b.read(), f"docs/img/{name} is stale: run bash {SCRIPT}"


def test_every_picture_is_shown_in_the_docs_with_its_command():
    docs = ""
    for name in ("algorithms.md", "simulate.md"):
        with open(os.path.join(ROOT, "docs", name)) as f:
            docs += f.read()
    with open(SCRIPT) as f:
        commands = dict(re.findall(r"^picture (\S+) \S+ (.*)$", f.read(), re.M))
    assert commands
    for name, args in commands.items():
        assert f"img/{name}.svg" in docs, name
        assert f"sluice simulate {args}" in docs, (name, args)
