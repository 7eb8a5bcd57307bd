# Joins the Lua files into one script in the order the modules need (prelude first, dispatch
# last, the algorithm modules between, by name) and writes it as a C++ string.
file(GLOB files ${LUA_DIR}/*.lua)
list(SORT files)
list(REMOVE_ITEM files ${LUA_DIR}/prelude.lua ${LUA_DIR}/dispatch.lua)
# One raw string per file: a single literal of the whole script passes the 65,536 characters
# a compiler must support (clang's -Woverlength-strings under -Wpedantic).
set(text "")
set(parts "")
foreach(f ${LUA_DIR}/prelude.lua ${files} ${LUA_DIR}/dispatch.lua)
  file(READ ${f} part)
  string(APPEND text "${part}\n")
  string(APPEND parts "    R\"sluice_lua(${part}\n)sluice_lua\",\n")
endforeach()
string(FIND "${text}" ")sluice_lua\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "a Lua file contains the raw string delimiter )sluice_lua\"")
endif()
file(WRITE ${OUT}.tmp "// Generated from src/backend/redis/lua/*.lua by embed_script.cmake: do not edit.\n#include <string>\n\n#include \"sluice/backend/redis/script.hpp\"\n\nnamespace sluice::backend::redis {\nnamespace {\nconstexpr std::string_view kParts[] = {\n${parts}};\n}  // namespace\n\nstd::string_view script_text() {\n  static const std::string text = [] {\n    std::string all;\n    for (std::string_view part : kParts) all.append(part);\n    return all;\n  }();\n  return text;\n}\n}  // namespace sluice::backend::redis\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
