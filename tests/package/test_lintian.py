"""lintian, Debian 12's, on both packages CPack builds (its default profile, informational tags
shown, overrides shown): no error at all, no warning or override that docs/packaging.md does
not list with its reason, and no row in that list that lintian no longer reports. Skipped when
lintian is not installed (scripts/install-deps.sh installs it)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_support import SOURCE, build_packages, project_version  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("lintian") is None, reason="lintian not installed")

LEVELS = {"E": "error", "W": "warning", "I": "info", "P": "pedantic", "X": "experimental",
          "O": "override"}
# A row of the table under "### What lintian reports" in docs/packaging.md:
# | `package` | `tag` | level | why |
ROW = re.compile(r"^\| `([a-z0-9.+-]+)` \| `([a-z0-9.+-]+)` \| (\w+) \| .+ \|$")


def documented():
    """(package, tag, level) of each row of docs/packaging.md's lintian table."""
    with open(os.path.join(SOURCE, "docs", "packaging.md")) as f:
        text = f.read()
    section = text.split("\n### What lintian reports", 1)[1].split("\n#", 1)[0]
    return {m.groups() for m in map(ROW.match, section.splitlines()) if m}


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """(package, tag, level) of each tag lintian reports on the two packages."""
    out = build_packages(tmp_path_factory.mktemp("cpack"))
    v = project_version()
    debs = [str(out / f"sluice_{v}_amd64.deb"), str(out / f"libsluice-dev_{v}_amd64.deb")]
    p = subprocess.run(["lintian", "--no-cfg", "--display-info", "--show-overrides",
                        "--tag-display-limit", "0", "--fail-on", "none", *debs],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr  # lintian itself failed
    tags = set()
    for line in p.stdout.splitlines():
        m = re.match(r"^([A-Z]): ([a-z0-9.+-]+)(?: \w+)?: ([a-z0-9.+-]+)", line)
        assert m, f"a lintian line this test cannot read: {line!r}"
        tags.add((m.group(2), m.group(3), LEVELS[m.group(1)]))
    return tags


def test_lintian_reports_no_error_on_either_package(reported):
    assert sorted(t for t in reported if t[2] == "error") == []


def test_every_warning_and_override_is_documented_with_its_reason(reported):
    undocumented = {t for t in reported if t[2] in ("warning", "override")} - documented()
    assert sorted(undocumented) == [], \
        "mend these, or add them with the reason to docs/packaging.md#what-lintian-reports"


def test_every_documented_tag_is_still_reported(reported):
    stale = documented() - reported
    assert sorted(stale) == [], "lintian no longer reports these: remove their rows"
