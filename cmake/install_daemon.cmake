# The daemon as installed (docs/packaging.md), component `daemon`: the binary, its man page
# (built from the help by help2man), bash completion, the default config and the systemd unit
# (the documentation: cmake/install_docs.cmake). Included by the top-level CMakeLists after
# src/cli.
include(${CMAKE_CURRENT_LIST_DIR}/install_dirs.cmake)

install(TARGETS sluice RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT daemon)

find_program(HELP2MAN_EXECUTABLE help2man)
if(HELP2MAN_EXECUTABLE)
  set(man_page ${CMAKE_BINARY_DIR}/man/sluice.1.gz)
  add_custom_command(
    OUTPUT ${man_page}
    COMMAND ${CMAKE_COMMAND} -DSLUICE=$<TARGET_FILE:sluice> -DHELP2MAN=${HELP2MAN_EXECUTABLE}
            -DSECTIONS=${PROJECT_SOURCE_DIR}/packaging/man-sections.txt -DOUT=${man_page}
            -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    DEPENDS sluice ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
            ${PROJECT_SOURCE_DIR}/packaging/man-sections.txt
    COMMENT "help2man: man/sluice.1.gz" VERBATIM)
  add_custom_target(sluice_man_page ALL DEPENDS ${man_page})
  install(FILES ${man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT daemon)
else()
  message(WARNING "help2man not found (Debian: help2man): no man page is built or installed")
endif()

install(FILES ${PROJECT_SOURCE_DIR}/packaging/bash-completion/sluice
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT daemon)

# The config and the unit go where the prefix says at install time, not at configure time:
# one build tree serves `cmake --install --prefix DIR` and the Debian package (prefix /usr).
configure_file(${PROJECT_SOURCE_DIR}/cmake/install_daemon_files.cmake.in
               ${CMAKE_BINARY_DIR}/install_daemon_files.cmake @ONLY)
install(SCRIPT ${CMAKE_BINARY_DIR}/install_daemon_files.cmake COMPONENT daemon)
