# Fuzz targets: the message decoder, the edit validator, the glTF importer,
# the decoder of binary frames, the SVG sanitiser, the skeleton assets (PNG
# pages and texture atlases) and the skeleton importers (Spine and
# DragonBones), one libFuzzer target each in tests/fuzz/fuzz_NAME.c, with
# a committed corpus (tests/fuzz/corpus/NAME) and regression inputs of past
# findings (tests/fuzz/regress/NAME). See tests/fuzz/README.md.
#
# With RIGD_FUZZ=ON (a clang build of its own: `make test-fuzz`) every
# target is linked with libFuzzer, and the project libraries are rebuilt
# with coverage instrumentation (-fsanitize=fuzzer-no-link) and ASan+UBSan.
# Each target is a CTest test labelled "fuzz" that replays the committed
# inputs and then fuzzes for $RIGD_FUZZ_SECONDS (tests/fuzz/run.sh).
#
# In every other build the same target sources get a plain main()
# (tests/fuzz/replay_main.c) and a test that replays the committed inputs,
# so the release and ASan builds check every past finding too.
set(rigd_fuzz_targets msg edit gltf bin svg skeleton_assets skeleton)
set(rigd_fuzz_dir ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

if(RIGD_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "RIGD_FUZZ needs clang: configure with CC=clang")
  endif()
  set(rigd_fuzz_sanitize -fsanitize=address,undefined -fno-sanitize-recover=all
                         -fno-omit-frame-pointer)
  # The libraries the targets link, instrumented for coverage and the
  # sanitizers. The link option travels to every program that links them
  # (the other test programs of this build too), which need the runtimes.
  foreach(lib rigd_core rigd_codec rigd_engine)
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link ${rigd_fuzz_sanitize})
  endforeach()
  target_link_options(rigd_core INTERFACE -fsanitize=address,undefined)
endif()

foreach(name ${rigd_fuzz_targets})
  if(RIGD_FUZZ)
    set(exe fuzz_${name})
    add_executable(${exe} fuzz/fuzz_${name}.c)
    target_compile_options(${exe} PRIVATE -fsanitize=fuzzer ${rigd_fuzz_sanitize})
    target_link_options(${exe} PRIVATE -fsanitize=fuzzer,address,undefined)
    add_test(NAME fuzz_${name}
             COMMAND ${rigd_fuzz_dir}/run.sh fuzz $<TARGET_FILE:${exe}> ${name}
                     ${CMAKE_BINARY_DIR}/fuzz-work/${name})
    set_tests_properties(fuzz_${name} PROPERTIES LABELS fuzz TIMEOUT 600)
  else()
    set(exe fuzz_${name}_replay)
    add_executable(${exe} fuzz/fuzz_${name}.c fuzz/replay_main.c)
    add_test(NAME fuzz_replay_${name}
             COMMAND ${exe} ${rigd_fuzz_dir}/corpus/${name} ${rigd_fuzz_dir}/regress/${name})
  endif()
  target_link_libraries(${exe} PRIVATE rigd_engine PkgConfig::CJSON)
  # -I, not -iquote: demo_rig.h (tests/gltf) builds the edit target's scene.
  target_include_directories(${exe} PRIVATE ${rigd_fuzz_dir} ${CMAKE_CURRENT_SOURCE_DIR}/gltf)
endforeach()
