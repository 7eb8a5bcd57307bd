# libsluice as installed (docs/library.md): ONE library, static unless SLUICE_SHARED (or
# BUILD_SHARED_LIBS) is on, made of the objects of the layers the public API needs; the
# public headers; a CMake package (find_package(Sluice) -> Sluice::sluice) and a pkg-config
# file (sluice.pc). Included by the top-level CMakeLists after the layers are defined.
include(${CMAKE_CURRENT_LIST_DIR}/install_dirs.cmake)
include(CMakePackageConfigHelpers)

option(SLUICE_SHARED "Install libsluice as a shared library instead of a static one"
       ${BUILD_SHARED_LIBS})

# The internal libraries whose objects make up libsluice. A layer the public API starts to use
# is added here, and its external dependencies to the package files below.
set(SLUICE_LIBRARY_COMPONENTS sluice_api sluice_local sluice_spec sluice_table sluice_core
    sluice_version)
# The installed headers: the public API only, self-contained (the package test compiles each
# alone against the installed tree).
set(SLUICE_PUBLIC_HEADERS decision.hpp keyed_limiter.hpp limit.hpp limiter.hpp sluice.hpp
    version.hpp)

set(sluice_objects "")
foreach(component ${SLUICE_LIBRARY_COMPONENTS})
  list(APPEND sluice_objects $<TARGET_OBJECTS:${component}>)
  if(SLUICE_SHARED)
    set_property(TARGET ${component} PROPERTY POSITION_INDEPENDENT_CODE ON)
  endif()
endforeach()
if(SLUICE_SHARED)
  add_library(sluice_lib SHARED ${sluice_objects})
  set(SLUICE_STATIC OFF)
else()
  add_library(sluice_lib STATIC ${sluice_objects})
  set(SLUICE_STATIC ON)
endif()
# 0.x: a minor release may change the ABI, so the soname carries major.minor.
set_target_properties(sluice_lib PROPERTIES
  OUTPUT_NAME sluice EXPORT_NAME sluice LINKER_LANGUAGE CXX
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_include_directories(sluice_lib INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(sluice_lib INTERFACE cxx_std_17)
# The outside libraries the bundled objects call: xxHash, the keyed tables' key hash (local's
# absl::InlinedVector is header-only as used; the install-and-embed test fails to link if that
# changes). Installed, a static libsluice names xxHash Sluice::xxhash, which SluiceConfig.cmake
# finds on the consumer's machine (no build path is baked in).
target_link_libraries(sluice_lib PRIVATE Threads::Threads $<BUILD_INTERFACE:${XXHASH_LIBRARY}>
                      $<INSTALL_INTERFACE:Sluice::xxhash>)
# The spec's calendar windows read the tz database through date/tz (libhowardhinnant-date-dev):
# a static libsluice leaves it to the program, which SluiceConfig.cmake finds (date::date-tz).
find_package(date REQUIRED)
target_link_libraries(sluice_lib PRIVATE date::date-tz)

set(SLUICE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Sluice)
install(TARGETS sluice_lib EXPORT SluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
list(TRANSFORM SLUICE_PUBLIC_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/include/sluice/
     OUTPUT_VARIABLE sluice_header_paths)
install(FILES ${sluice_header_paths} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice COMPONENT dev)
install(EXPORT SluiceTargets NAMESPACE Sluice:: DESTINATION ${SLUICE_CMAKE_DIR} COMPONENT dev)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SluiceConfig.cmake.in
  ${CMAKE_BINARY_DIR}/package/SluiceConfig.cmake INSTALL_DESTINATION ${SLUICE_CMAKE_DIR})
# 0.x: only the same minor release is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/SluiceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/SluiceConfig.cmake
              ${CMAKE_BINARY_DIR}/package/SluiceConfigVersion.cmake
        DESTINATION ${SLUICE_CMAKE_DIR} COMPONENT dev)

# sluice.pc finds its prefix from its own place (${pcfiledir}), so the installed tree moves.
file(RELATIVE_PATH SLUICE_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SLUICE_PC_TO_PREFIX "${SLUICE_PC_TO_PREFIX}")
set(SLUICE_PC_LIBS "")
if(SLUICE_STATIC)
  set(SLUICE_PC_REQUIRES "Requires: libxxhash")  # linked into the program with libsluice
  set(SLUICE_PC_LIBS " -ldate-tz")               # date/tz has no .pc of its own
else()
  set(SLUICE_PC_REQUIRES "Requires.private: libxxhash")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/sluice.pc.in ${CMAKE_BINARY_DIR}/package/sluice.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/sluice.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
