# The cluster's readers of stream entries (scene events, presence, catch-up)
# fed hostile entries.
if(NOT RIGD_CLUSTER)
  return()  # built without the cluster (-DRIGD_CLUSTER=OFF)
endif()
rigd_unit_test(cluster_entries rigd_cluster)
target_sources(test_cluster_entries PRIVATE fake_entry.c)
