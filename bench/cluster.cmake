# The cluster's benchmark: four rigd on one redis-server (one owner, three
# serving viewers), edit-to-update latency per process, CPU per process and
# Redis's, and the same load on a single rigd. A node script that starts the
# real programs; it prints figures and is never a test. Run:
#   cmake --build BUILD --target bench_cluster
if(NOT RIGD_CLUSTER)
  return()  # built without the cluster (-DRIGD_CLUSTER=OFF)
endif()
add_custom_target(bench_cluster
  COMMAND ${CMAKE_COMMAND} -E env RIGD_BUILD_DIR=${CMAKE_BINARY_DIR}
          RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR}
          node ${CMAKE_CURRENT_SOURCE_DIR}/bench_cluster.js
  DEPENDS rigd bench_subscribers
  USES_TERMINAL
  COMMENT "bench_cluster: several rigd on one Redis")
