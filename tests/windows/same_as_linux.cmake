# untangle.exe under Wine and the Linux untangle must write byte-identical files: a scene run
# (its PC2 cache and its first-frame OBJ) and a fix of that tangled OBJ; the Windows run must
# also end untangled. Results do not depend on the platform because no libm function that
# differs between C runtimes reaches the state (DESIGN.md, Numbers).
# Run with -DWINE=... -DWINDOWS_PROGRAM=... -DLINUX_PROGRAM=... -DWORK_DIR=...
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/linux ${WORK_DIR}/windows)

function(run_both)
  # Relative paths only: the same arguments mean the same files to both programs.
  execute_process(COMMAND ${LINUX_PROGRAM} ${ARGN} WORKING_DIRECTORY ${WORK_DIR}/linux
                  RESULT_VARIABLE linux_result OUTPUT_VARIABLE linux_output ERROR_VARIABLE linux_error)
  execute_process(COMMAND ${WINE} ${WINDOWS_PROGRAM} ${ARGN} WORKING_DIRECTORY ${WORK_DIR}/windows
                  RESULT_VARIABLE windows_result OUTPUT_VARIABLE windows_output
                  ERROR_VARIABLE windows_error)
  if(NOT linux_result EQUAL 0 OR NOT windows_result EQUAL 0)
    message(FATAL_ERROR "untangle ${ARGN}: Linux exit ${linux_result}, Windows exit "
                        "${windows_result}\n${linux_error}\n${windows_output}\n${windows_error}")
  endif()
  set(windows_output "${windows_output}" PARENT_SCOPE)
endfunction()

function(expect_same file)
  set(linux_file ${WORK_DIR}/linux/${file})
  set(windows_file ${WORK_DIR}/windows/${file})
  if(NOT EXISTS ${linux_file} OR NOT EXISTS ${windows_file})
    message(FATAL_ERROR "${file} was not written by both programs")
  endif()
  file(SIZE ${linux_file} size)
  if(size EQUAL 0)
    message(FATAL_ERROR "${linux_file} is empty")
  endif()
  file(SHA256 ${linux_file} linux_hash)
  file(SHA256 ${windows_file} windows_hash)
  if(NOT linux_hash STREQUAL windows_hash)
    message(FATAL_ERROR "${file} differs between Linux and Windows")
  endif()
  message(STATUS "${file}: identical (${size} bytes)")
endfunction()

run_both(run tangled-start --frames 40 --json --pc2 scene.pc2 --obj-dir mesh)
string(REPLACE "\r" "" windows_output "${windows_output}")
if(NOT windows_output MATCHES "\"final_pairs\": 0[,\n]")
  message(FATAL_ERROR "the Windows run of tangled-start does not end untangled:\n${windows_output}")
endif()
expect_same(scene.pc2)
expect_same(mesh/tangled-start.obj)

run_both(fix mesh/tangled-start.obj -o fixed.obj)
expect_same(fixed.obj)
