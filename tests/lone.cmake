# A rigd that runs alone, whichever way it was built (with the cluster's
# side, or -DRIGD_CLUSTER=OFF: `make test-lone`): edits, acks and updates
# with no cluster code on the path, and --redis refused saying why (e2e).
rigd_node_test(e2e_lone e2e/lone.js)
if(RIGD_CLUSTER)
  set_property(TEST e2e_lone APPEND PROPERTY ENVIRONMENT "RIGD_CLUSTER=ON")
else()
  set_property(TEST e2e_lone APPEND PROPERTY ENVIRONMENT "RIGD_CLUSTER=OFF")
endif()
