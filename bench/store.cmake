# The durable log's benchmark: acknowledged batches per
# second and ack latency with group commit and per batch, FULL and NORMAL;
# replay speed; open time of a scene with 1,000,000 logged batches.
# Run: build/bench/bench_store [--quick] [--dir DIR]
add_executable(bench_store ${CMAKE_CURRENT_SOURCE_DIR}/bench_store.c)
target_link_libraries(bench_store PRIVATE rigd_engine)
