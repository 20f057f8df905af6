# Per-viewer interest on a 100,001-node scene: 100 viewers each seeing
# about 1% of it, root edits; matrices, bytes, hidden ids and latency per
# viewer and update beside 100 viewers without a view, and the cost of a
# view change. A node script that starts the real rigd; it prints figures
# and is never a test. Run:
#   cmake --build BUILD --target bench_interest
add_custom_target(bench_interest
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_interest.js
  DEPENDS rigd
  USES_TERMINAL
  COMMENT "bench_interest: per-viewer interest on a 100,001-node scene")
