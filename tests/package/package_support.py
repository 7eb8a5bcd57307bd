"""What the shipping tests share: the source and build trees, a command runner that fails the
test with the command's output, the project's version as CMakeLists.txt declares it, this
machine's multiarch triplet (where the library is installed) and the packages CPack builds."""
import os
import re
import subprocess

SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("SLUICE_BUILD_DIR", os.path.join(SOURCE, "build", "release"))


def run(*cmd, **kw):
    """Runs a command to success and returns its stdout."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        return re.search(r"project\(sluice VERSION (\S+)", f.read()).group(1)


def multiarch():
    """Debian's multiarch triplet of this machine, e.g. x86_64-linux-gnu: the library, its
    CMake package and sluice.pc are installed under lib/<triplet>."""
    return run("dpkg-architecture", "-qDEB_HOST_MULTIARCH").strip()


def build_packages(out):
    """Both .debs of the build tree, built by CPack into the directory out (a pathlib.Path)."""
    run("cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B", str(out))
    return out
