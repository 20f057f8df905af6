# A log line says whether its batch is an undo or a redo (codec, log
# export and import, a batch of a log stream), and a batch whose log line
# would exceed the engine's line limit is refused before it is queued.
rigd_unit_test(log_kind rigd_engine)
target_sources(test_log_kind PRIVATE tmpdb.c)
# e2e: a client's undo after its scene's log is exported and imported.
rigd_node_test(e2e_log_kind e2e/log_kind.js)
# e2e on a real redis-server: undo after a change of owner; a batch larger
# than a log stream entry refused before its commit.
if(RIGD_CLUSTER)
  rigd_node_test(e2e_cluster_undo e2e/cluster_undo.js)
  set_tests_properties(e2e_cluster_undo PROPERTIES TIMEOUT 300)
endif()
