# engine_rewind: a scene taken back to an earlier seq (a cluster process
# whose batches are not the cluster's): rows, snapshots, assets dropped.
rigd_unit_test(rewind rigd_engine)
target_sources(test_rewind PRIVATE tmpdb.c)
