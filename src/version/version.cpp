// sluice::version() and sluice::git_commit() (sluice/version.hpp). The commit comes from a
// source file the build regenerates only when the commit changes (cmake/git_commit.cmake), so
// a new commit recompiles that one file, not this one or its users.
#include "sluice/version.hpp"

namespace sluice {

namespace build {
extern const char* const kGitCommit;  // generated: build/<preset>/generated/git_commit.cpp
}

std::string_view version() { return SLUICE_VERSION; }

std::string_view git_commit() { return build::kGitCommit; }

}  // namespace sluice
