# The edit language and its JSON: log encode/decode,
# apply and replay rates, update and snapshot encoding. Prints figures.
add_executable(bench_proto ${CMAKE_CURRENT_SOURCE_DIR}/bench_proto.c)
target_link_libraries(bench_proto PRIVATE rigd_engine)
