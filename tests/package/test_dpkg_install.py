"""The sluice package installed, upgraded, reinstalled and purged by the real dpkg, into a
small tree (dpkg --root) that stands in for a system: dpkg unpacks the package there and runs
its maintainer scripts chrooted into it, as on a real install. The tree holds dash, chown,
chmod, getent, rm and dpkg-statoverride copied from this machine with their libraries; adduser
and deb-systemd-helper/-invoke are small scripts that log their calls (adduser also writes the
user into the tree's /etc/passwd). No systemd runs there, so the scripts take their "no
systemd" branches. Nothing outside the temporary tree is touched.

dpkg needs root to chroot: the test is skipped otherwise (CI runs as root)."""
import os
import re
import shutil
import stat
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_support import build_packages, project_version, run  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dpkg --root chroots: needs root")

CONFIG = "etc/sluice/sluice.yaml"
# What the postinst runs, taken from this machine. The scripts' other commands are built in.
TOOLS = ["/usr/bin/dash", "/usr/bin/chown", "/usr/bin/chmod", "/usr/bin/getent", "/usr/bin/rm",
         "/usr/bin/dpkg-statoverride"]
LOGGING_STUB = """#!/bin/sh
echo "${0##*/} $*" >> /var/log/stub-calls
"""
# adduser --system --group ... NAME: the user and its group, with the uid and gid 990.
ADDUSER_STUB = LOGGING_STUB + """for name; do :; done
echo "$name:x:990:990::/nonexistent:/usr/sbin/nologin" >> /etc/passwd
echo "$name:x:990:" >> /etc/group
"""


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    return build_packages(tmp_path_factory.mktemp("cpack"))


@pytest.fixture(scope="module")
def deb(packages):
    return packages / f"sluice_{project_version()}_amd64.deb"


@pytest.fixture(scope="module")
def upgrade(deb, tmp_path_factory):
    """The same package as a later version whose default config changed, so that dpkg
    replaces the (unmodified) installed conffile by the new one on upgrade."""
    work = tmp_path_factory.mktemp("upgrade")
    tree = work / "tree"
    run("dpkg-deb", "-R", str(deb), str(tree))
    version = f"{project_version()}+upgrade1"
    control = (tree / "DEBIAN/control").read_text()
    (tree / "DEBIAN/control").write_text(
        re.sub(r"^Version: .*$", f"Version: {version}", control, flags=re.M))
    with open(tree / CONFIG, "a") as f:
        f.write("# a line the next version's default config adds\n")
    md5 = run("md5sum", CONFIG, cwd=tree).split()[0]
    sums = (tree / "DEBIAN/md5sums").read_text()
    (tree / "DEBIAN/md5sums").write_text(
        re.sub(rf"^\w+  {re.escape(CONFIG)}$", f"{md5}  {CONFIG}", sums, flags=re.M))
    out = work / f"sluice_{version}_amd64.deb"
    run("dpkg-deb", "--root-owner-group", "-b", str(tree), str(out))
    return out


def copy_with_libraries(binary, root):
    for path in [binary] + re.findall(r"(/\S+) \(0x", run("ldd", binary)):
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copy2(path, target)


@pytest.fixture
def root(tmp_path):
    """An empty system for dpkg --root: its database, /etc/passwd and /etc/group with root
    alone, the tools the maintainer scripts call, and /dev/null as a plain file."""
    tree = tmp_path / "root"
    for d in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "var/log",
              "usr/bin", "usr/sbin", "etc", "dev", "tmp"]:
        (tree / d).mkdir(parents=True)
    for f in ["var/lib/dpkg/status", "var/lib/dpkg/available", "dev/null"]:
        (tree / f).touch()
    (tree / "dev/null").chmod(0o666)
    (tree / "bin").symlink_to("usr/bin")
    (tree / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (tree / "etc/group").write_text("root:x:0:\n")
    (tree / "etc/nsswitch.conf").write_text("passwd: files\ngroup: files\n")
    for tool in TOOLS:
        copy_with_libraries(tool, tree)
    (tree / "usr/bin/sh").symlink_to("dash")
    for path, text in [("usr/sbin/adduser", ADDUSER_STUB),
                       ("usr/bin/deb-systemd-helper", LOGGING_STUB),
                       ("usr/bin/deb-systemd-invoke", LOGGING_STUB)]:
        (tree / path).write_text(text)
        (tree / path).chmod(0o755)
    return tree


def dpkg(root, *args):
    # --force-depends: the tree has none of the libraries the binary links (it never runs).
    return run("dpkg", f"--root={root}", "--force-depends", *args)


def names(root, database):
    """The tree's /etc/passwd or /etc/group as {id: name}."""
    entries = [line.split(":") for line in (root / "etc" / database).read_text().splitlines()]
    return {int(e[2]): e[0] for e in entries}


def owner_and_mode(root):
    """The config's owner, group and mode as the tree names them: "root:sluice 0640"."""
    st = os.stat(root / CONFIG)
    user = names(root, "passwd").get(st.st_uid, st.st_uid)
    group = names(root, "group").get(st.st_gid, st.st_gid)
    return f"{user}:{group} {stat.S_IMODE(st.st_mode):04o}"


def stub_calls(root):
    path = root / "var/log/stub-calls"
    return path.read_text().splitlines() if path.exists() else []


def test_a_first_install_adds_the_user_and_makes_the_config_root_sluice_0640(root, deb):
    dpkg(root, "-i", str(deb))
    assert owner_and_mode(root) == "root:sluice 0640"
    calls = stub_calls(root)
    assert [c for c in calls if c.startswith("adduser")] == [
        "adduser --system --group --home /nonexistent --no-create-home --quiet "
        "--gecos Sluice rate limiter sluice"]
    assert "deb-systemd-helper enable sluice.service" in calls  # a new install is enabled


def test_an_upgrade_puts_back_root_sluice_0640_whatever_the_config_had(root, deb, upgrade):
    dpkg(root, "-i", str(deb))
    # As a config restored from a backup, or rewritten by some tool, may be.
    os.chown(root / CONFIG, 0, 0)
    os.chmod(root / CONFIG, 0o644)
    dpkg(root, "-i", str(upgrade))
    # dpkg wrote the new default (the old one was never edited) and carried the old file's
    # owner and mode over to it; the upgrade's postinst (configure <old version>) set them.
    assert (root / CONFIG).read_text().endswith("# a line the next version's default config adds\n")
    assert owner_and_mode(root) == "root:sluice 0640"
    # The user is made once, not at every configure.
    assert len([c for c in stub_calls(root) if c.startswith("adduser")]) == 1


def test_a_reinstall_of_the_same_version_puts_them_back_too(root, deb):
    dpkg(root, "-i", str(deb))
    os.chmod(root / CONFIG, 0o604)
    dpkg(root, "-i", str(deb))
    assert owner_and_mode(root) == "root:sluice 0640"


def test_permissions_registered_with_dpkg_statoverride_are_kept_across_an_upgrade(root, deb,
                                                                                 upgrade):
    dpkg(root, "-i", str(deb))
    # What `dpkg-statoverride --update --add root sluice 0600 /etc/sluice/sluice.yaml` writes,
    # with the group by number: dpkg itself runs outside the tree, where no group is sluice.
    (root / "var/lib/dpkg/statoverride").write_text(f"root #990 0600 /{CONFIG}\n")
    os.chmod(root / CONFIG, 0o600)
    assert run("chroot", str(root), "dpkg-statoverride", "--list", "/" + CONFIG) != ""
    assert owner_and_mode(root) == "root:sluice 0600"
    dpkg(root, "-i", str(upgrade))
    assert owner_and_mode(root) == "root:sluice 0600"


def test_purge_removes_the_config_and_the_log_directory_and_keeps_the_user(root, deb):
    dpkg(root, "-i", str(deb))
    (root / "var/log/sluice").mkdir()
    (root / "var/log/sluice/access.log").write_text("a line\n")
    dpkg(root, "--purge", "sluice")
    assert not (root / CONFIG).exists()
    assert not (root / "var/log/sluice").exists()
    assert not (root / "usr/bin/sluice").exists()
    assert "sluice:x:990:990" in (root / "etc/passwd").read_text()
    calls = stub_calls(root)
    assert "deb-systemd-helper mask sluice.service" in calls  # remove
    assert "deb-systemd-helper purge sluice.service" in calls
