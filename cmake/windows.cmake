# The Windows (windows-x64) side of the build.
#
# Cross-building (the windows preset, toolchain cmake/mingw-w64-x86_64.cmake): programs and
# libuntangle.dll go to bin/, linked with libstdc++ and libgcc statically (only C crosses the
# DLL's boundary, so no C++ runtime object is shared with a host). OpenMP stays libgomp-1.dll:
# a static libgomp in a DLL leaves its thread pool running when the DLL is unloaded. After each
# link of the DLL, the MinGW runtime DLLs it needs (found by following the imports) are copied
# beside it and listed in bin/runtime_dlls.txt, which the add-on zip ships.
#
# Building for Linux with UNTANGLE_WINDOWS ON (or AUTO with MinGW-w64 installed): the windows
# preset is built as an external project in windows/ of this build, so that the add-on zip
# carries both libraries and CTest runs the Windows tests under Wine (tests/windows).

if(CMAKE_CROSSCOMPILING AND WIN32)
  set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  add_link_options(-static-libstdc++ -static-libgcc)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libgomp-1.dll
                  OUTPUT_VARIABLE gomp_dll OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(gomp_dir ${gomp_dll} DIRECTORY)
  set(UNTANGLE_WINDOWS_RUNTIME_SEARCH ${gomp_dir} ${CMAKE_FIND_ROOT_PATH}/lib ${CMAKE_FIND_ROOT_PATH}/bin
      CACHE INTERNAL "Where the MinGW runtime DLLs lie")
  find_program(UNTANGLE_OBJDUMP NAMES ${UNTANGLE_MINGW_TRIPLET}-objdump objdump REQUIRED)
  return()
endif()

set(UNTANGLE_WINDOWS AUTO CACHE STRING
    "Also cross-build libuntangle.dll for windows-x64 with MinGW-w64 (ON, OFF, AUTO: when installed)")
set_property(CACHE UNTANGLE_WINDOWS PROPERTY STRINGS AUTO ON OFF)
if(UNTANGLE_WINDOWS STREQUAL "OFF" OR CMAKE_CROSSCOMPILING OR NOT CMAKE_HOST_SYSTEM_NAME STREQUAL "Linux")
  return()
endif()
find_program(UNTANGLE_MINGW_CXX x86_64-w64-mingw32-g++-posix)
if(NOT UNTANGLE_MINGW_CXX)
  if(UNTANGLE_WINDOWS STREQUAL "ON")
    message(FATAL_ERROR "UNTANGLE_WINDOWS is ON but x86_64-w64-mingw32-g++-posix is missing "
                        "(apt-get install g++-mingw-w64-x86-64-posix)")
  endif()
  message(STATUS "MinGW-w64 not found: the add-on zip carries the Linux library only")
  return()
endif()

include(ExternalProject)
set(UNTANGLE_WINDOWS_DIR ${CMAKE_BINARY_DIR}/windows CACHE INTERNAL "The Windows build")
# BUILD_ALWAYS: the external build sees the same sources; its own Ninja decides what is stale.
ExternalProject_Add(untangle_windows
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${UNTANGLE_WINDOWS_DIR}
  CONFIGURE_COMMAND ${CMAKE_COMMAND} -S ${PROJECT_SOURCE_DIR} -B ${UNTANGLE_WINDOWS_DIR} --preset windows
                    -DUNTANGLE_BUILD_TESTS=${UNTANGLE_BUILD_TESTS} -DUNTANGLE_WERROR=${UNTANGLE_WERROR}
  BUILD_COMMAND ${CMAKE_COMMAND} --build ${UNTANGLE_WINDOWS_DIR} --parallel 2
  BUILD_ALWAYS ON
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${UNTANGLE_WINDOWS_DIR}/bin/libuntangle.dll ${UNTANGLE_WINDOWS_DIR}/bin/runtime_dlls.txt
  USES_TERMINAL_BUILD ON)
