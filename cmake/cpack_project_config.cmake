# Read by cpack before it builds the packages (CPACK_PROJECT_CONFIG_FILE, cmake/packaging.cmake):
# says so when the Maintainer field is still the project's placeholder, which names no one a
# user could write to about the package.
if(CPACK_DEBIAN_PACKAGE_MAINTAINER STREQUAL CPACK_SLUICE_PLACEHOLDER_MAINTAINER)
  message(WARNING "The packages' Maintainer is the placeholder "
                  "'${CPACK_DEBIAN_PACKAGE_MAINTAINER}': before publishing them, configure with "
                  "-DSLUICE_DEB_MAINTAINER=\"Name <mail>\" (or set DEBFULLNAME and DEBEMAIL "
                  "before the first configure), docs/packaging.md")
endif()
