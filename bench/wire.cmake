# Bytes per update on the wire: JSON text frames against binary frames with
# float32 and float64 matrices, for the 59-bone rig's edits. A node script
# that starts the real rigd; it prints figures and is never a test. Run:
#   cmake --build BUILD --target bench_wire
add_custom_target(bench_wire
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_wire.js
  DEPENDS rigd
  USES_TERMINAL
  COMMENT "bench_wire: bytes per update, JSON against binary frames")
