# Cross-compiling for windows-x64 on Debian with MinGW-w64 (package g++-mingw-w64-x86-64-posix).
# The posix thread model is the one whose libgomp gives OpenMP. Programs built here run on this
# machine under Wine (package wine64, /usr/lib/wine/wine64), which CTest uses as the emulator.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(UNTANGLE_MINGW_TRIPLET x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${UNTANGLE_MINGW_TRIPLET}-gcc-posix)
set(CMAKE_CXX_COMPILER ${UNTANGLE_MINGW_TRIPLET}-g++-posix)
set(CMAKE_RC_COMPILER ${UNTANGLE_MINGW_TRIPLET}-windres)

# Libraries and headers come from the MinGW sysroot only; Eigen (header-only) is found through
# Eigen3_DIR, which the windows preset sets to Debian's /usr/share/eigen3/cmake.
set(CMAKE_FIND_ROOT_PATH /usr/${UNTANGLE_MINGW_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(UNTANGLE_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(UNTANGLE_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${UNTANGLE_WINE})
endif()
