# Run by cpack once it has installed the packages' files and before it archives them
# (CPACK_PRE_BUILD_SCRIPTS, cmake/packaging.cmake): what debhelper's dh_strip does beyond the
# plain `strip` of CPACK_STRIP_FILES. It removes the .comment (the compiler's version string)
# and .note sections from the binary and from each object of the library, and writes the
# static archive deterministically (no time stamps, uids or modes of the build).
set(staged "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
file(GLOB libraries "${staged}/dev/usr/${CPACK_SLUICE_LIBDIR}/libsluice.*")
foreach(file "${staged}/daemon/usr/bin/sluice" ${libraries})
  if(IS_SYMLINK "${file}")
    continue()  # libsluice.so -> libsluice.so.0.1: the file itself is in the list
  endif()
  set(options --remove-section=.comment --remove-section=.note)
  if(file MATCHES "\\.a$")
    list(APPEND options --strip-debug --enable-deterministic-archives)
  endif()
  execute_process(COMMAND "${CPACK_SLUICE_STRIP}" ${options} "${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CPACK_SLUICE_STRIP} ${options} ${file} failed")
  endif()
endforeach()
