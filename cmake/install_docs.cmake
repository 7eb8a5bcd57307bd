# The /usr/share/doc/<package> directory of each package (docs/packaging.md), as Debian policy
# 12.3, 12.5 and 12.7 have them: `copyright` as is, the changelog as changelog.gz (a native
# package) and the docs compressed with gzip -9n (no name or time stamp: the same text makes
# the same bytes). The daemon's holds every doc and the README, libsluice-dev's its own doc.
include(${CMAKE_CURRENT_LIST_DIR}/install_dirs.cmake)

set(sluice_changelog ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
set(sluice_copyright ${PROJECT_SOURCE_DIR}/packaging/debian/copyright)
# The latest entry names the version the packages carry (lintian, apt-listchanges and
# `apt changelog` read it): a new version needs its entry first.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${sluice_changelog})
file(STRINGS ${sluice_changelog} changelog_top LIMIT_COUNT 1)
if(NOT changelog_top MATCHES "^sluice \\(([^)]+)\\) ")
  message(FATAL_ERROR "${sluice_changelog}:1: not a Debian changelog entry: '${changelog_top}'")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "${sluice_changelog}:1: the latest entry is version ${CMAKE_MATCH_1}, "
                      "the project is ${PROJECT_VERSION}: add an entry for ${PROJECT_VERSION} "
                      "at the top (dch -v ${PROJECT_VERSION})")
endif()

find_program(GZIP_EXECUTABLE gzip REQUIRED)
set(sluice_gz_dir ${CMAKE_BINARY_DIR}/doc-gz)
set(sluice_gz_outputs "")
# Sets ${out_var} to build/doc-gz/<name>.gz, made from source by gzip -9n at build time.
function(sluice_gzip_doc source name out_var)
  set(copy ${sluice_gz_dir}/${name})
  add_custom_command(OUTPUT ${copy}.gz
                     COMMAND ${CMAKE_COMMAND} -E copy ${source} ${copy}
                     COMMAND ${GZIP_EXECUTABLE} -9nf ${copy}
                     DEPENDS ${source} COMMENT "gzip -9n: doc-gz/${name}.gz" VERBATIM)
  set(${out_var} ${copy}.gz PARENT_SCOPE)
  set(sluice_gz_outputs ${sluice_gz_outputs} ${copy}.gz PARENT_SCOPE)
endfunction()

file(GLOB sluice_doc_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
set(sluice_docs_gz "")
foreach(doc ${sluice_doc_sources} ${PROJECT_SOURCE_DIR}/README.md)
  get_filename_component(name ${doc} NAME)
  sluice_gzip_doc(${doc} ${name} doc_gz)
  list(APPEND sluice_docs_gz ${doc_gz})
endforeach()
sluice_gzip_doc(${sluice_changelog} changelog changelog_gz)
add_custom_target(sluice_docs_gz ALL DEPENDS ${sluice_gz_outputs})

install(FILES ${sluice_docs_gz} ${changelog_gz} ${sluice_copyright}
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT daemon)
install(FILES ${sluice_gz_dir}/library.md.gz ${changelog_gz} ${sluice_copyright}
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/libsluice-dev COMPONENT dev)
