# Unpacks the add-on zip and runs a C ABI test program (a C99 user running a world) from the
# zip's cloth_untangle/lib/ under Wine, with no search path: libuntangle.dll must load with
# only what the zip ships beside it. Also checks that the zip carries both libraries.
# Run with -DWINE=... -DZIP=... -DPROGRAM=... -DWORK_DIR=...
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
file(ARCHIVE_EXTRACT INPUT ${ZIP} DESTINATION ${WORK_DIR})
set(lib ${WORK_DIR}/cloth_untangle/lib)
foreach(library libuntangle.so libuntangle.dll)
  if(NOT EXISTS ${lib}/${library})
    message(FATAL_ERROR "the add-on zip has no lib/${library}")
  endif()
endforeach()
file(COPY ${PROGRAM} DESTINATION ${lib})
get_filename_component(program_name ${PROGRAM} NAME)
unset(ENV{WINEPATH})
execute_process(COMMAND ${WINE} ${lib}/${program_name} WORKING_DIRECTORY ${WORK_DIR}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE error)
if(NOT result EQUAL 0)
  file(GLOB shipped RELATIVE ${lib} ${lib}/*)
  message(FATAL_ERROR "${program_name} from the zip's lib/ (holding ${shipped}) failed with "
                      "${result}:\n${output}\n${error}")
endif()
message(STATUS "${program_name} ran from the zip's lib/:\n${output}")
