# Where `cmake --install` and the Debian packages put things: GNUInstallDirs, except that the
# library goes to Debian's multiarch directory (lib/x86_64-linux-gnu) under every prefix.
# GNUInstallDirs chooses lib/<triplet> for the prefix /usr only, and it chooses at configure
# time, when the prefix is /usr/local; the package is installed under /usr later by CPack, so
# without this its library, CMake package and sluice.pc would land in /usr/lib. Debian's
# linker, pkg-config and find_package also search <prefix>/lib/<triplet> for /usr/local and
# any prefix given to them. -DCMAKE_INSTALL_LIBDIR=lib keeps the plain layout.
include_guard(GLOBAL)

if(CMAKE_LIBRARY_ARCHITECTURE AND NOT DEFINED CACHE{SLUICE_INSTALL_LIBDIR_CHOSEN})
  get_property(libdir_help CACHE CMAKE_INSTALL_LIBDIR PROPERTY HELPSTRING)
  # Not set yet, or set by GNUInstallDirs itself in a build tree configured before this file
  # existed (its help string): multiarch. A value given with -D is the user's and is kept.
  if(NOT DEFINED CACHE{CMAKE_INSTALL_LIBDIR} OR libdir_help STREQUAL "Object code libraries (lib)")
    set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE} CACHE PATH
        "Object code libraries (lib/${CMAKE_LIBRARY_ARCHITECTURE}, Debian's multiarch directory)"
        FORCE)
  endif()
  set(SLUICE_INSTALL_LIBDIR_CHOSEN ON CACHE INTERNAL "CMAKE_INSTALL_LIBDIR was chosen once")
endif()
include(GNUInstallDirs)
