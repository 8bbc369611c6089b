# ctest's check of a mistake the tutorial says does not compile:
#   cmake -DCXX=<compiler> -DSRC=<file> -DINCLUDE=<dir> -DDEFINE=<macro> -DEXPECT=<text> -P check_compile_error.cmake
# Compiles SRC (syntax only) with DEFINE set and passes when that fails with a first error
# containing EXPECT; a file that compiles, or fails for another reason first, fails.
execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -fmax-errors=1 -I "${INCLUDE}" -D${DEFINE} "${SRC}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiled with -D${DEFINE}, but it must not")
endif()
string(REGEX MATCH "error: [^\n]*" first "${err}")
string(FIND "${first}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the first error of ${SRC} with -D${DEFINE} does not say '${EXPECT}'; the compiler said:\n${err}")
endif()
message(STATUS "${SRC} with -D${DEFINE}: ${first}")
