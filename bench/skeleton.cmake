# The skeleton import's benchmark: a 100-bone, 120-slot, 20-clip Spine
# skeleton decoded, turned into its batch, applied, and imported whole into
# a real SQLite file, beside the floor of parsing its JSON.
# Run: build/bench/bench_skeleton [--dir DIR] [--runs N]
add_executable(bench_skeleton ${CMAKE_CURRENT_SOURCE_DIR}/bench_skeleton.c)
target_link_libraries(bench_skeleton PRIVATE rigd_engine)
