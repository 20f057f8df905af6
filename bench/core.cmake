# The transform core's benchmark: a program that prints
# figures, run by `make bench` or `cmake --build build --target bench_run`.
#
# bench_core links rigd_core as the project builds it. bench_core_native
# compiles the same core sources again with RIGD_BENCH_NATIVE_FLAGS (default
# -O3 -march=native), only for this program, to show what such flags would
# buy; the library's flags stay the project's choice. random_tree.c is the
# oracle test's tree generator, so the benchmark measures the trees the
# oracle checks.
string(TOUPPER "${CMAKE_BUILD_TYPE}" rigd_bench_build_type)
set(rigd_bench_sources
  ${CMAKE_CURRENT_SOURCE_DIR}/bench_core.c
  ${CMAKE_SOURCE_DIR}/tests/oracle/random_tree.c)

add_executable(bench_core ${rigd_bench_sources})
target_include_directories(bench_core PRIVATE ${CMAKE_SOURCE_DIR}/tests/oracle)
target_link_libraries(bench_core PRIVATE rigd_core)
target_compile_definitions(bench_core PRIVATE
  "RIGD_BENCH_THREE=\"${CMAKE_CURRENT_SOURCE_DIR}/bench_three.mjs\""
  "RIGD_BENCH_FLAGS=\"${CMAKE_C_FLAGS_${rigd_bench_build_type}}, the project default\"")

add_custom_target(bench_run COMMAND bench_core USES_TERMINAL
  COMMENT "Running the transform core benchmark")

set(RIGD_BENCH_NATIVE_FLAGS "-O3 -march=native" CACHE STRING
  "Flags for the core sources in bench_core_native")
separate_arguments(rigd_bench_native_flags UNIX_COMMAND "${RIGD_BENCH_NATIVE_FLAGS}")
include(CheckCCompilerFlag)
check_c_compiler_flag(-march=native RIGD_HAVE_MARCH_NATIVE)
if(RIGD_HAVE_MARCH_NATIVE AND NOT RIGD_SANITIZE)
  # The core's own source list, so that a file added to rigd_core is here too.
  get_target_property(rigd_core_sources rigd_core SOURCES)
  get_target_property(rigd_core_dir rigd_core SOURCE_DIR)
  set(rigd_bench_core_sources "")
  foreach(src ${rigd_core_sources})
    if(NOT IS_ABSOLUTE ${src})
      set(src ${rigd_core_dir}/${src})
    endif()
    list(APPEND rigd_bench_core_sources ${src})
  endforeach()
  add_executable(bench_core_native ${rigd_bench_sources} ${rigd_bench_core_sources})
  target_compile_options(bench_core_native PRIVATE
    "SHELL:-iquote ${CMAKE_SOURCE_DIR}/server" ${rigd_bench_native_flags})
  target_include_directories(bench_core_native PRIVATE ${CMAKE_SOURCE_DIR}/tests/oracle)
  target_link_libraries(bench_core_native PRIVATE m)
  target_compile_definitions(bench_core_native PRIVATE
    "RIGD_BENCH_THREE=\"${CMAKE_CURRENT_SOURCE_DIR}/bench_three.mjs\""
    "RIGD_BENCH_FLAGS=\"${CMAKE_C_FLAGS_${rigd_bench_build_type}} ${RIGD_BENCH_NATIVE_FLAGS}, core rebuilt for the benchmark\"")
  add_custom_target(bench_run_native COMMAND bench_core_native USES_TERMINAL
    COMMENT "Running the transform core benchmark, core built with ${RIGD_BENCH_NATIVE_FLAGS}")
endif()
