"""/metrics names the running build: sluice_build_info{version,commit} 1, the same version
and commit `sluice --version` prints."""
import re
import subprocess

from test_metrics import parse


def test_build_info_carries_what_version_prints(sluice, sluice_bin):
    printed = subprocess.run([sluice_bin, "--version"], capture_output=True, text=True,
                             timeout=10).stdout
    version, commit = re.fullmatch(r"sluice (\S+) \(commit (\S+)\)\n", printed).groups()
    samples = parse(sluice.metrics().text)
    build = {labels: v for (name, labels), v in samples.items() if name == "sluice_build_info"}
    assert build == {f'{{version="{version}",commit="{commit}"}}': 1.0}
