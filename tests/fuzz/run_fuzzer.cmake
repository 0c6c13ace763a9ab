# Configures a clang build of the project with UNTANGLE_FUZZ=ON, builds fuzz_capi, and runs it
# for SECONDS over the seed corpus. Run with -DSOURCE_DIR -DBINARY_DIR -DCORPUS -DCXX -DCC
# -DSECONDS [-DLAUNCHER]. Exits 77 (skip) when the clang configuration cannot be set up.
cmake_minimum_required(VERSION 3.25)

set(configure_args -S ${SOURCE_DIR} -B ${BINARY_DIR} -G Ninja
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
    -DCMAKE_C_COMPILER=${CC} -DCMAKE_CXX_COMPILER=${CXX}
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    "-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer"
    -DUNTANGLE_FUZZ=ON -DUNTANGLE_BUILD_BENCH=OFF -DUNTANGLE_SANITIZE=OFF -DUNTANGLE_WERROR=OFF)
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}
       -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${configure_args} RESULT_VARIABLE configured
                OUTPUT_VARIABLE configure_output ERROR_VARIABLE configure_output)
if(NOT configured EQUAL 0)
  message("${configure_output}")
  message("the clang fuzz configuration failed (clang, libclang-rt-14-dev and libomp-14-dev needed)")
  cmake_language(EXIT 77)
endif()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --target fuzz_capi -j2
                RESULT_VARIABLE built)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "building fuzz_capi with clang failed")
endif()

# New inputs go to the first corpus directory (in the build tree); the seeds stay untouched.
set(work_corpus ${BINARY_DIR}/corpus)
file(MAKE_DIRECTORY ${work_corpus} ${BINARY_DIR}/artifacts)
execute_process(COMMAND ${BINARY_DIR}/tests/fuzz/fuzz_capi
                        -max_total_time=${SECONDS} -timeout=20 -rss_limit_mb=2560
                        -max_len=2048 -print_final_stats=1
                        -artifact_prefix=${BINARY_DIR}/artifacts/
                        ${work_corpus} ${CORPUS}
                RESULT_VARIABLE fuzzed)
if(NOT fuzzed EQUAL 0)
  message(FATAL_ERROR "the fuzzer found a failure; the input is in ${BINARY_DIR}/artifacts/")
endif()
