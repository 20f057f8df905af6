# Every write relayed to the owner of its scene in a cluster: undo, redo,
# pose ops, SVG, glTF and log imports sent to a process that does not own
# the scene (e2e: three rigd on a real redis-server), and the cluster
# layer's reader of relayed calls and their answers fed hostile entries.
if(NOT RIGD_CLUSTER)
  return()  # built without the cluster (-DRIGD_CLUSTER=OFF)
endif()
rigd_unit_test(cluster_calls rigd_cluster)
target_sources(test_cluster_calls PRIVATE fake_entry.c)
rigd_node_test(e2e_cluster_relay e2e/cluster_relay.js)
set_tests_properties(e2e_cluster_relay PROPERTIES TIMEOUT 300)
