# permessage-deflate on and off: bytes per update, server CPU and latency
# for 1, 100 and 1,000 JSON subscribers and a float32 binary subscriber of
# the 59-bone rig edited at 60 Hz. A node script that starts the real rigd;
# it prints figures and is never a test. Run:
#   cmake --build BUILD --target bench_deflate
add_custom_target(bench_deflate
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_deflate.js
  DEPENDS rigd
  USES_TERMINAL
  COMMENT "bench_deflate: permessage-deflate on and off")
