# What per-viewer interest costs the core for a root edit (boxes, culls),
# on bench_interest's scene and views, without sockets: a program that
# prints figures. Run: cmake --build BUILD --target bench_views
add_executable(bench_view ${CMAKE_CURRENT_SOURCE_DIR}/bench_view.c)
target_link_libraries(bench_view PRIVATE rigd_core m)
add_custom_target(bench_views COMMAND bench_view USES_TERMINAL
  COMMENT "bench_view: boxes and culls of 100 views of a 100,001-node scene")
