# A cluster process that was away (scenes created and deleted meanwhile,
# reconciled with the catalog when it is back) and an owner behind what a
# log stream keeps (catching up from any process): real processes on a real
# redis-server started by the test (e2e).
if(NOT RIGD_CLUSTER)
  return()  # built without the cluster (-DRIGD_CLUSTER=OFF)
endif()
rigd_node_test(e2e_cluster_catalog e2e/cluster_catalog.js)
set_tests_properties(e2e_cluster_catalog PROPERTIES TIMEOUT 300)
