# Compiles SRC (syntax only) and passes when that fails with a first error that contains
# each of SRC's `// expect: <text>` lines; a file that compiles, or fails for another
# reason first, is a failed test.
file(STRINGS "${SRC}" expects REGEX "^// expect: ")
list(TRANSFORM expects REPLACE "^// expect: " "")
if(NOT expects)
  message(FATAL_ERROR "${SRC} has no '// expect: ' line")
endif()
execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -fmax-errors=1 -I "${INCLUDE}" "${SRC}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled, but it must not")
endif()
string(REGEX MATCH "error: [^\n]*" first "${err}")
foreach(e IN LISTS expects)
  string(FIND "${first}" "${e}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the first error of ${SRC} does not say '${e}'; the compiler said:\n${err}")
  endif()
endforeach()
message(STATUS "${SRC}: ${first}")
