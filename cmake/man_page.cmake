# Builds sluice.1.gz from the binary's own help with Debian's help2man (`cmake -P`, run by
# cmake/install_daemon.cmake whenever the binary changes): the top-level --help and --version
# make NAME, SYNOPSIS and OPTIONS; every subcommand's --help (flags and example) becomes a
# subsection of COMMANDS; FILES, SIGNALS, EXIT STATUS and SEE ALSO come from
# packaging/man-sections.txt. Inputs: SLUICE (the binary), HELP2MAN, SECTIONS, OUT.
execute_process(COMMAND ${SLUICE} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SLUICE} --help failed")
endif()
# The names under "Subcommands:", one per line, each the first word of an indented line.
string(REGEX REPLACE ".*\nSubcommands:\n" "" listed "${top}")
string(REGEX REPLACE "\n\n.*" "" listed "${listed}")
string(REGEX MATCHALL "\n  [a-z][a-z-]*|^  [a-z][a-z-]*" names "${listed}")

# The fixed sections first: help2man ignores the comment lines above their first [section].
file(READ ${SECTIONS} include_text)
string(APPEND include_text "[COMMANDS]\n")
foreach(name ${names})
  string(STRIP "${name}" name)
  execute_process(COMMAND ${SLUICE} ${name} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SLUICE} ${name} --help failed")
  endif()
  # roff: a backslash is \e; a line may not start with . or ' (a request).
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND include_text ".SS \"sluice ${name}\"\n.nf\n${help}.fi\n")
endforeach()
get_filename_component(dir ${OUT} DIRECTORY)
set(include_file ${dir}/sluice.1.include)
file(WRITE ${include_file} "${include_text}")

string(REGEX REPLACE "\\.gz$" "" page ${OUT})
execute_process(COMMAND ${HELP2MAN} --no-info --section=1
                        "--name=rate limits for services and API gateways"
                        --include=${include_file} --output=${page} ${SLUICE}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed")
endif()
# -n: no name or time stamp in the archive, so the same page makes the same bytes (Debian).
execute_process(COMMAND gzip -9nf ${page} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${page} failed")
endif()
