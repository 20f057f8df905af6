# The server's benchmark: edit-to-update latency at 1, 10 and 100
# subscribers and fan-out to 1,000 subscribers of a 59-bone rig edited at
# 60 Hz, with the server's CPU time. A node script that starts the real rigd;
# it prints figures and is never a test. Run:
#   cmake --build BUILD --target bench_net
add_custom_target(bench_net
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_net.js
  DEPENDS rigd
  USES_TERMINAL
  COMMENT "bench_net: latency and fan-out of rigd's broadcast")
