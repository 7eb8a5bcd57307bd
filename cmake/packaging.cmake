# The Debian packages (docs/packaging.md), built by CPack from the install rules:
#   cpack -G DEB --config build/release/CPackConfig.cmake    (make package)
# sluice_<version>_amd64.deb: component `daemon` (binary, man page, completion, docs,
# /etc/sluice/sluice.yaml as a conffile, the systemd unit, a postinst that adds the user).
# libsluice-dev_<version>_amd64.deb: component `dev` (headers, libsluice, CMake and pkg-config
# files). Runtime dependencies come from dpkg-shlibdeps (Debian's dpkg-dev).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sluice)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Sluice authors")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/cpack_strip.cmake)  # dh_strip's rest
set(CPACK_SLUICE_STRIP ${CMAKE_STRIP})
set(CPACK_SLUICE_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(CPACK_COMPONENTS_ALL daemon dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)

# Whoever builds and distributes the packages. At the first configure it defaults to
# "$DEBFULLNAME <$DEBEMAIL>", the variables devscripts (dch, debchange) read. Without both it is
# the project's placeholder, which names no one: `make package` then warns (below).
set(sluice_deb_placeholder "Sluice maintainers <maintainers@sluice.invalid>")
set(sluice_deb_maintainer "${sluice_deb_placeholder}")
if("$ENV{DEBEMAIL}" MATCHES "^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$")
  set(sluice_deb_maintainer "$ENV{DEBEMAIL}")  # DEBEMAIL="Name <mail>", as dch allows
elseif("$ENV{DEBEMAIL}" MATCHES "^[^<>@ ]+@[^<>@ ]+$" AND NOT "$ENV{DEBFULLNAME}" STREQUAL "")
  set(sluice_deb_maintainer "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
endif()
set(SLUICE_DEB_MAINTAINER "${sluice_deb_maintainer}"
    CACHE STRING "The Maintainer field of the Debian packages")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SLUICE_DEB_MAINTAINER}")
set(CPACK_SLUICE_PLACEHOLDER_MAINTAINER "${sluice_deb_placeholder}")
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/cpack_project_config.cmake)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # NAME_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME sluice)
set(CPACK_DEBIAN_DAEMON_PACKAGE_SECTION net)
set(CPACK_DEBIAN_DAEMON_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "adduser")  # the postinst's; shlibdeps adds the rest
# The first line is the synopsis, the rest the long description. (No
# CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it above both as their synopsis.)
set(CPACK_DEBIAN_DAEMON_DESCRIPTION "rate limiting gateway and decision service (sluice serve)
Sluice decides whether a request may go now, later or not at all, with the
algorithms of nginx limit_req, redis-cell, golang.org/x/time/rate, Guava and
Sentinel, decision for decision. The daemon is an HTTP gateway that limits, a
decision service over HTTP, the Redis protocol and Envoy's rate limit gRPC API,
and an admin API; `sluice replay` runs a trace of requests through any limits.")
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libsluice-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libxxhash-dev")  # a static libsluice links it
set(CPACK_DEBIAN_DEV_DESCRIPTION "rate limiting library for C++ (libsluice)
The embeddable API of Sluice: sluice::Limiter (what Guava's RateLimiter and
x/time/rate's Limiter offer) and sluice::KeyedLimiter (a limit per key in a
fixed memory budget), with find_package(Sluice) and pkg-config files.")

include(CPack)
