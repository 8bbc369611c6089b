# ctest's check of one tutorial program:
#   cmake -DPROGRAM=<executable> -DEXPECTED=<file> [-DARGS=<arg>] -P check_output.cmake
# Runs PROGRAM and passes when it exits with status 0 and its standard output contains the
# lines of EXPECTED in order: each line must occur (as a substring) after the previous
# one's match. A line starting with "re: " is a CMake regular expression instead of a
# literal, and one starting with "not: " is a literal that must occur nowhere in the
# output. Blank lines and lines starting with '#' are comments.
#
# The file is walked with string(FIND) rather than as a CMake list, because program output
# holds '[' and ';', which CMake's list handling would split or join.
if(NOT PROGRAM OR NOT EXPECTED)
  message(FATAL_ERROR "usage: cmake -DPROGRAM=<exe> -DEXPECTED=<file> -P check_output.cmake")
endif()
execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 300)
# Shown by ctest --output-on-failure (and -V).
message("---- ${PROGRAM} printed:\n${out}")
if(err)
  message("---- on stderr:\n${err}")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with '${rc}', expected 0")
endif()

file(READ "${EXPECTED}" spec)
string(APPEND spec "\n")
set(pos 0)          # where the next expected line is searched from
set(lineno 0)
set(failures "")
while(NOT spec STREQUAL "")
  string(FIND "${spec}" "\n" nl)
  string(SUBSTRING "${spec}" 0 ${nl} line)
  math(EXPR next "${nl} + 1")
  string(SUBSTRING "${spec}" ${next} -1 spec)
  math(EXPR lineno "${lineno} + 1")
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  string(SUBSTRING "${out}" ${pos} -1 rest)
  if(line MATCHES "^not: ")
    string(SUBSTRING "${line}" 5 -1 text)
    string(FIND "${out}" "${text}" at)
    if(NOT at EQUAL -1)
      string(APPEND failures "  line ${lineno}: found '${text}', which must not be printed\n")
    endif()
    continue()
  endif()
  if(line MATCHES "^re: ")
    string(SUBSTRING "${line}" 4 -1 regex)
    string(REGEX MATCH "${regex}" text "${rest}")
    if(text STREQUAL "")
      string(APPEND failures "  line ${lineno}: no match for the regular expression '${regex}'\n")
      continue()
    endif()
  else()
    set(text "${line}")
  endif()
  string(FIND "${rest}" "${text}" at)
  if(at EQUAL -1)
    string(APPEND failures "  line ${lineno}: '${text}' not printed (after the previous match)\n")
    continue()
  endif()
  string(LENGTH "${text}" len)
  math(EXPR pos "${pos} + ${at} + ${len}")
endwhile()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "${PROGRAM}: its output does not match ${EXPECTED}:\n${failures}")
endif()
message(STATUS "${PROGRAM}: every line of ${EXPECTED} printed, in order")
