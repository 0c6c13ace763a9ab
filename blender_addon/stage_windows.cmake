# Copies libuntangle.dll and the MinGW runtime DLLs listed in runtime_dlls.txt (written when the
# DLL was linked, cmake/windows_runtime_dlls.cmake) from the Windows build's bin/ to the add-on's
# lib/. Run with -DFROM=... -DTO=...
cmake_minimum_required(VERSION 3.25)
file(STRINGS ${FROM}/runtime_dlls.txt runtime)
foreach(name libuntangle.dll ${runtime})
  if(NOT EXISTS ${FROM}/${name})
    message(FATAL_ERROR "${FROM}/${name} is missing")
  endif()
  file(COPY_FILE ${FROM}/${name} ${TO}/${name})
endforeach()
