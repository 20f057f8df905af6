# A batch committed by a scene's owner but not confirmed by its log stream
# (lost answer, unsent append, an append fenced after the lease moved, a
# crash between commit and append), settled against the stream; and
# --redis-wait with a real Redis replica. Real redis-server and rigd
# processes (e2e), with the test-only RIGD_FAULT_APPEND knob.
if(NOT RIGD_CLUSTER)
  return()  # built without the cluster (-DRIGD_CLUSTER=OFF)
endif()
rigd_node_test(e2e_cluster_fence e2e/cluster_fence.js)
set_tests_properties(e2e_cluster_fence PROPERTIES TIMEOUT 300)
# The checked readers of cluster/fence.c: probe answers and WAIT's (unit).
rigd_unit_test(cluster_fence rigd_cluster)
