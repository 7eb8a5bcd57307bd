"""The Debian package test: CPack builds sluice_<version>_amd64.deb (and libsluice-dev), the
package is unpacked with dpkg-deb -x, and the unpacked binary serves with the packaged config:
it reports READY=1 on $NOTIFY_SOCKET, answers /healthz, reloads on SIGHUP (RELOADING=1, then
READY=1) and says STOPPING=1 on SIGTERM. The conffile list, the maintainer scripts, the man
page and the unit (systemd-analyze verify and security, on the unpacked tree) are checked too.
"""
import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_support import SOURCE, build_packages, multiarch, project_version, run  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE, "tests", "integration"))
from integration_support import free_port, terminate  # noqa: E402


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    return build_packages(tmp_path_factory.mktemp("cpack"))


@pytest.fixture(scope="module")
def deb(packages):
    return packages / f"sluice_{project_version()}_amd64.deb"


@pytest.fixture(scope="module")
def root(deb, tmp_path_factory):
    tree = tmp_path_factory.mktemp("root")
    run("dpkg-deb", "-x", str(deb), str(tree))
    return tree


def test_cpack_builds_the_daemon_and_the_library_packages(packages):
    v = project_version()
    assert sorted(f for f in os.listdir(packages) if f.endswith(".deb")) == \
        [f"libsluice-dev_{v}_amd64.deb", f"sluice_{v}_amd64.deb"]


def test_the_control_fields(deb):
    fields = run("dpkg-deb", "-f", str(deb), "Package", "Version", "Architecture", "Depends")
    assert f"Version: {project_version()}\n" in fields
    assert "Package: sluice\n" in fields and "Architecture: amd64\n" in fields
    depends = re.search(r"^Depends: (.*)$", fields, re.M).group(1).split(", ")
    names = {d.split(" ")[0] for d in depends}
    # The postinst's adduser, and what dpkg-shlibdeps found the binary linked against.
    assert {"adduser", "libc6", "libsystemd0", "libyaml-cpp0.7"} <= names, depends


def test_the_files_a_user_expects(deb, root):
    for path in ["usr/bin/sluice", "usr/share/man/man1/sluice.1.gz",
                 "usr/share/bash-completion/completions/sluice", "etc/sluice/sluice.yaml",
                 "lib/systemd/system/sluice.service", "usr/share/doc/sluice/copyright",
                 "usr/share/doc/sluice/changelog.gz", "usr/share/doc/sluice/README.md.gz",
                 "usr/share/doc/sluice/configuration.md.gz", "usr/share/doc/sluice/library.md.gz",
                 "usr/share/doc/sluice/packaging.md.gz"]:
        assert (root / path).is_file(), path
    with open(os.path.join(SOURCE, "packaging", "bash-completion", "sluice")) as f:
        assert (root / "usr/share/bash-completion/completions/sluice").read_text() == f.read()
    listing = run("dpkg-deb", "-c", str(deb))
    assert re.search(r"^-rwxr-xr-x root/root .* \./usr/bin/sluice$", listing, re.M), listing
    assert run(str(root / "usr/bin/sluice"), "--version").startswith(
        f"sluice {project_version()} (commit ")


def test_the_config_is_the_one_conffile(deb):
    assert run("dpkg-deb", "--info", str(deb), "conffiles") == "/etc/sluice/sluice.yaml\n"


def test_the_packaged_config_serves_only_the_admin_api_on_loopback(root):
    config = (root / "etc/sluice/sluice.yaml").read_text()
    assert re.search(r"^admin: 127\.0\.0\.1:\d+\s", config, re.M), config
    assert not re.search(r"^listen:", config, re.M), "a gateway listener is on by default"
    run(str(root / "usr/bin/sluice"), "check-config", str(root / "etc/sluice/sluice.yaml"))


def test_the_maintainer_scripts(deb, tmp_path):
    control = tmp_path / "control"
    run("dpkg-deb", "-e", str(deb), str(control))
    for script in ["postinst", "prerm", "postrm"]:
        path = control / script
        assert os.access(path, os.X_OK), script
        run("sh", "-n", str(path))
    postinst = (control / "postinst").read_text()
    assert "adduser --system --group" in postinst and "sluice" in postinst


class NotifySocket:
    """The service manager's end of sd_notify: a datagram socket named by $NOTIFY_SOCKET."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(10)

    def next(self):
        return dict(line.split("=", 1) for line in self.sock.recv(4096).decode().splitlines())


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read().decode()


def test_the_unpacked_daemon_serves_with_the_packaged_config(root, tmp_path):
    notify = NotifySocket(tmp_path / "notify")
    port = free_port()  # the packaged 9090 may be taken here: the flag overrides it
    log = open(tmp_path / "stderr", "wb")
    proc = subprocess.Popen(
        [str(root / "usr/bin/sluice"), "serve", "--config", str(root / "etc/sluice/sluice.yaml"),
         "--admin", f"127.0.0.1:{port}"],
        env=dict(os.environ, NOTIFY_SOCKET=notify.path), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=log)
    try:
        assert notify.next()["READY"] == "1"
        assert get(f"http://127.0.0.1:{port}/healthz") == (200, "ok\n")
        status, metrics = get(f"http://127.0.0.1:{port}/metrics")
        assert re.search(rf'^sluice_build_info{{version="{project_version()}",commit="[^"]+"}} 1$',
                         metrics, re.M)
        proc.send_signal(signal.SIGHUP)
        assert notify.next()["RELOADING"] == "1"
        assert notify.next()["READY"] == "1"
        proc.send_signal(signal.SIGTERM)
        assert notify.next()["STOPPING"] == "1"
        assert proc.wait(timeout=15) == 0
    finally:
        terminate(proc)
        log.close()
    assert "config reloaded" in (tmp_path / "stderr").read_text()


@pytest.fixture(scope="module")
def system_root(root, tmp_path_factory):
    """The unpacked tree plus what `systemd-analyze verify --root` resolves the unit against:
    the host's units (sysinit.target and the others the unit is ordered after) and /bin/kill
    (ExecReload)."""
    tree = tmp_path_factory.mktemp("system") / "root"
    shutil.copytree(root, tree, symlinks=True)
    units = tree / "lib/systemd/system"
    for name in os.listdir("/lib/systemd/system"):
        src = os.path.join("/lib/systemd/system", name)
        if not (units / name).exists() and os.path.isfile(src) and not os.path.islink(src):
            shutil.copy(src, units / name)
    (tree / "bin").mkdir(exist_ok=True)
    shutil.copy("/bin/kill", tree / "bin" / "kill")
    return tree


def unit_settings(root):
    text = (root / "lib/systemd/system/sluice.service").read_text()
    return [line for line in text.splitlines() if line and not line.startswith(("#", "["))]


def test_the_unit_runs_the_packaged_binary_hardened_as_its_own_user(root):
    settings = unit_settings(root)
    for wanted in ["Type=notify",
                   "ExecStart=/usr/bin/sluice serve --config /etc/sluice/sluice.yaml",
                   "ExecReload=/bin/kill -HUP $MAINPID", "User=sluice", "NoNewPrivileges=yes",
                   "ProtectSystem=strict", "PrivateTmp=yes", "CapabilityBoundingSet=",
                   "AmbientCapabilities="]:
        assert wanted in settings, wanted


def test_systemd_analyze_verify_accepts_the_unit(system_root):
    # The man page check (Documentation=man:sluice(1)) reads the unpacked page.
    env = dict(os.environ, MANPATH=str(system_root / "usr/share/man"))
    p = subprocess.run(["systemd-analyze", "verify", f"--root={system_root}", "sluice.service"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert (p.returncode, p.stdout + p.stderr) == (0, "")


def test_systemd_analyze_rates_the_unit_well_hardened(system_root):
    p = subprocess.run(["systemd-analyze", "security", "--offline=yes", f"--root={system_root}",
                        "sluice.service"], capture_output=True, text=True, timeout=60)
    level = re.search(r"Overall exposure level for sluice\.service: ([\d.]+)", p.stdout)
    assert level, p.stdout + p.stderr
    assert float(level.group(1)) <= 2.0, p.stdout


def test_the_man_page_documents_each_subcommand_with_its_example(root):
    page = run("man", "-l", str(root / "usr/share/man/man1/sluice.1.gz"),
               env=dict(os.environ, MANWIDTH="100"))
    page = re.sub(r".\x08", "", page)  # man's overstrike bold and underline
    assert re.search(r"^NAME\n\s+sluice - rate limits", page, re.M), page[:400]
    for name in ["replay", "check-config", "serve", "demo-upstream"]:
        section = page.split(f"sluice {name}\n", 1)
        assert len(section) == 2, name
        assert "Example:" in section[1].split("\n   sluice ", 1)[0], name
    assert "printf '0,alice\\n0,alice\\n0,alice\\n'" in page  # backslashes survive roff
    assert "/etc/sluice/sluice.yaml" in page and "SIGHUP" in page


def test_the_docs_are_compressed_and_the_copyright_is_not(root):
    # Debian policy 12.3: gzip -9n, so the same doc makes the same bytes (no name, no time).
    docs = root / "usr/share/doc/sluice"
    names = sorted(os.listdir(docs))
    assert [n for n in names if not n.endswith(".gz")] == ["copyright"], names
    with open(os.path.join(SOURCE, "docs", "configuration.md"), "rb") as f:
        assert gzip.decompress((docs / "configuration.md.gz").read_bytes()) == f.read()
    header = (docs / "configuration.md.gz").read_bytes()[:10]
    assert header[3] & 0x08 == 0 and header[4:8] == b"\0\0\0\0"  # no FNAME, MTIME 0
    assert header[8] == 2  # XFL 2: compressed at -9


def test_the_changelog_is_this_version(root):
    fields = run("dpkg-parsechangelog", "-l", "-", "-S", "Version",
                 input=gzip.decompress((root / "usr/share/doc/sluice/changelog.gz").read_bytes())
                 .decode())
    assert fields == f"{project_version()}\n"


def test_the_library_package_holds_the_library_in_the_multiarch_directory(packages, tmp_path):
    run("dpkg-deb", "-x", str(packages / f"libsluice-dev_{project_version()}_amd64.deb"),
        str(tmp_path))
    libdir = f"usr/lib/{multiarch()}"
    for path in ["usr/include/sluice/limiter.hpp", "usr/include/sluice/keyed_limiter.hpp",
                 f"{libdir}/libsluice.a", f"{libdir}/cmake/Sluice/SluiceConfig.cmake",
                 f"{libdir}/pkgconfig/sluice.pc", "usr/share/doc/libsluice-dev/copyright",
                 "usr/share/doc/libsluice-dev/changelog.gz",
                 "usr/share/doc/libsluice-dev/library.md.gz"]:
        assert (tmp_path / path).is_file(), path
    assert not (tmp_path / "usr/lib/libsluice.a").exists()
    # Where Debian's pkg-config looks without PKG_CONFIG_PATH, cross wrappers included.
    assert f"/{libdir}/pkgconfig" in run("pkg-config", "--variable", "pc_path",
                                         "pkg-config").split(":")
    # The packaged (dh_strip-like stripped) library links: examples/embed built against it.
    env = dict(os.environ, PKG_CONFIG_PATH=str(tmp_path / libdir / "pkgconfig"))
    flags = run("pkg-config", "--cflags", "--libs", "sluice", env=env).split()
    binary = tmp_path / "embed"
    run("g++", "-std=c++17", os.path.join(SOURCE, "examples", "embed", "main.cpp"), *flags, "-o",
        str(binary))
    assert run(str(binary)).startswith(f"libsluice {project_version()}\n")
