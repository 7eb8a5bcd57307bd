// The version of Sluice and the git commit it was built from: what `sluice --version` prints,
// what /metrics exports as sluice_build_info, and what an embedding program can log.
#pragma once

#include <string_view>

namespace sluice {

// The release, e.g. "0.1.0" (CMake's project version). Thread-safe.
std::string_view version();

// The commit the library was built from: 12 hex digits, "-dirty" appended when the tree had
// uncommitted changes, or "unknown" when it was built outside a git checkout (a release
// tarball) and no -DSLUICE_GIT_COMMIT=... was given. Thread-safe.
std::string_view git_commit();

}  // namespace sluice
