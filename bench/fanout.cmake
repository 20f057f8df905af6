# A thousand viewers of one rig at 60 edits/s: deliveries (coalesced or
# not), edit-to-update p50/p99 and the server's CPU, for binary float32 and
# JSON frames, with the subscribers in load-generator processes of their
# own (bench_subscribers, in C; BENCH_CLIENTS=node uses the node pool of
# bench/lib/subscribers.js instead). A node script that starts the real rigd;
# it prints figures and is never a test. Run:
#   cmake --build BUILD --target bench_fanout
add_executable(bench_subscribers ${CMAKE_CURRENT_SOURCE_DIR}/bench_subscribers.c)
# The floor beside it: send(2) of the same bytes to as many loopback sockets.
add_executable(bench_sendfloor ${CMAKE_CURRENT_SOURCE_DIR}/bench_sendfloor.c)
add_custom_target(bench_fanout
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_fanout.js
  DEPENDS rigd bench_subscribers bench_sendfloor
  USES_TERMINAL
  COMMENT "bench_fanout: a thousand subscribers at 60 edits/s")
