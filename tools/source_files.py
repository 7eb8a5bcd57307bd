"""The project's C++ sources, for the tools that read all of them (tools/layering, tools/lint).

One walk, in one order: every tool sees the same files and reports them in the same order.
"""
import os

CPP_EXTENSIONS = (".cpp", ".hpp", ".h", ".cc")


def cpp_files(root, tops):
    """Paths relative to `root` of the C++ files under each folder of `tops`, sorted."""
    found = []
    for top in tops:
        for folder, _, names in os.walk(os.path.join(root, top)):
            found += [os.path.relpath(os.path.join(folder, n), root) for n in names
                      if n.endswith(CPP_EXTENSIONS)]
    return sorted(found)
