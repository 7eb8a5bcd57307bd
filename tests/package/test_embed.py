"""The install-and-embed test: `cmake --install` to a temporary prefix, then examples/embed
built against that installed tree only, once with find_package(Sluice) and once with
pkg-config, and run. Also: the installed headers are the public API alone, each one compiles by
itself, and the daemon's files land under the prefix."""
import os
import re
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_support import BUILD, SOURCE, multiarch, project_version, run  # noqa: E402

EXAMPLE = os.path.join(SOURCE, "examples", "embed")
PUBLIC_HEADERS = ["decision.hpp", "keyed_limiter.hpp", "limit.hpp", "limiter.hpp", "sluice.hpp",
                  "version.hpp"]


def expected_output():
    return (f"libsluice {project_version()}\n"
            "token-bucket: 20 of 25 allowed at once; a reservation waits 100 ms\n"
            "smooth-bursty: waits 0 500 1000 ms\n"
            "per client: alice 3 of 5, bob allowed (remaining 2), alice retries after 200 ms\n"
            "bad spec: token-bucket: missing parameter 'burst' (required: rate, burst)\n")


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """The whole project installed under a fresh prefix, which is then moved: both package
    files must find the library from where they are, not from where they were installed."""
    installed = tmp_path_factory.mktemp("install") / "first"
    run("cmake", "--install", BUILD, "--prefix", str(installed))
    moved = installed.parent / "moved"
    shutil.move(str(installed), str(moved))
    return moved


def libdir(prefix):
    """Where the library and its package files are installed: Debian's multiarch directory
    under every prefix (cmake/install_dirs.cmake)."""
    return prefix / "lib" / multiarch()


def test_installs_the_public_headers_and_one_library_in_the_multiarch_directory(prefix):
    assert sorted(os.listdir(prefix / "include" / "sluice")) == PUBLIC_HEADERS
    libs = sorted(f for f in os.listdir(libdir(prefix)) if f.startswith("libsluice"))
    assert libs == ["libsluice.a"]
    assert (libdir(prefix) / "cmake" / "Sluice" / "SluiceConfig.cmake").is_file()
    assert (libdir(prefix) / "pkgconfig" / "sluice.pc").is_file()
    assert not [f for f in os.listdir(prefix / "lib") if f.startswith("libsluice")]


def test_each_installed_header_compiles_alone_as_cxx17(prefix, tmp_path):
    for header in PUBLIC_HEADERS:
        source = tmp_path / f"{header}.cpp"
        source.write_text(f"#include <sluice/{header}>\n#include <sluice/{header}>\n")
        run("g++", "-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only",
            f"-I{prefix / 'include'}", str(source))


def test_example_built_with_find_package_runs(prefix, tmp_path):
    build = tmp_path / "cmake-build"
    run("cmake", "-S", EXAMPLE, "-B", str(build), "-G", "Ninja", "-DCMAKE_CXX_COMPILER=g++",
        f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF")
    with open(build / "CMakeCache.txt") as f:
        found = re.search(r"^Sluice_DIR:PATH=(.*)$", f.read(), re.M).group(1)
    assert found.startswith(str(prefix)), found
    run("cmake", "--build", str(build))
    assert run(str(build / "embed")) == expected_output()


def test_example_built_with_pkg_config_runs(prefix, tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(libdir(prefix) / "pkgconfig"))
    flags = run("pkg-config", "--cflags", "--libs", "sluice", env=env).split()
    assert f"-L{libdir(prefix)}/pkgconfig/../../../lib/{multiarch()}" in flags
    binary = tmp_path / "embed"
    run("g++", "-std=c++17", os.path.join(EXAMPLE, "main.cpp"), *flags, "-o", str(binary))
    assert run(str(binary)) == expected_output()


def test_the_daemon_files_land_under_the_prefix(prefix):
    for path in ["bin/sluice", "etc/sluice/sluice.yaml", "lib/systemd/system/sluice.service",
                 "share/man/man1/sluice.1.gz", "share/bash-completion/completions/sluice"]:
        assert (prefix / path).is_file(), path
    version = run(str(prefix / "bin" / "sluice"), "--version")
    assert version.startswith(f"sluice {project_version()} (commit ")
