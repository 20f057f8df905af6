# Durable single-op batches per second through the whole server (websocket
# in, durable ack out, --sync full), with the commit on the writer's
# thread beside the commit on the event loop (RIGD_COMMIT_ON_LOOP=1), in
# the same run. A C load generator; it prints figures and is never a test.
# Run: build/bench/bench_commit build/rigd [--secs 10] [--conns 8] [--window 256]
add_executable(bench_commit ${CMAKE_CURRENT_SOURCE_DIR}/bench_commit.c)
