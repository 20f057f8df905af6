# The skeleton import's benchmark: a 100-bone, 120-slot, 20-clip Spine
# skeleton decoded, turned into its batch, applied, and imported whole into
# a real SQLite file, beside the floor of parsing its JSON.
# Run: build/bench/bench_skeleton [--dir DIR] [--runs N]
add_executable(bench_skeleton ${CMAKE_CURRENT_SOURCE_DIR}/bench_skeleton.c)
target_link_libraries(bench_skeleton PRIVATE rigd_engine)

# The clip op with ten viewers: edit-to-update p50/p99 and ack p99 of a
# clip op at 60/s on the same skeleton, beside one set at the same rate, and
# the server's CPU per op. A node script that starts the real rigd; it
# prints figures and is never a test. Run:
#   cmake --build BUILD --target bench_clip
add_custom_target(bench_clip
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_clip.js
  DEPENDS rigd bench_subscribers
  USES_TERMINAL
  COMMENT "bench_clip: the clip op with ten viewers")
