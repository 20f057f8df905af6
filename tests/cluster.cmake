# Several rigd processes on one Redis: the cluster layer's readers of what
# Redis answers (unit), and real processes on a real redis-server started
# by the test on a free port in a temporary folder (e2e).
if(NOT RIGD_CLUSTER)
  return()  # built without the cluster (-DRIGD_CLUSTER=OFF)
endif()
rigd_unit_test(cluster rigd_cluster)
rigd_node_test(e2e_cluster e2e/cluster.js)
set_tests_properties(e2e_cluster PROPERTIES TIMEOUT 300)
