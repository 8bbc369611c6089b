# FFTW 3 (Debian's libfftw3-dev ships no CMake package): single and double precision, with
# their OpenMP threading libraries. Defines the imported target FFTW3::fftw3.
include(FindPackageHandleStandardArgs)
find_path(FFTW3_INCLUDE_DIR fftw3.h)
foreach(lib fftw3f fftw3 fftw3f_omp fftw3_omp)
  string(TOUPPER ${lib} var)
  find_library(FFTW3_${var}_LIBRARY ${lib})
endforeach()
find_package_handle_standard_args(FFTW3 REQUIRED_VARS FFTW3_INCLUDE_DIR FFTW3_FFTW3F_LIBRARY
                                  FFTW3_FFTW3_LIBRARY FFTW3_FFTW3F_OMP_LIBRARY FFTW3_FFTW3_OMP_LIBRARY)
if(FFTW3_FOUND AND NOT TARGET FFTW3::fftw3)
  add_library(FFTW3::fftw3 INTERFACE IMPORTED)
  # The threading libraries first: they call into the plain ones.
  set_target_properties(FFTW3::fftw3 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${FFTW3_FFTW3F_OMP_LIBRARY};${FFTW3_FFTW3_OMP_LIBRARY};${FFTW3_FFTW3F_LIBRARY};${FFTW3_FFTW3_LIBRARY}")
endif()
