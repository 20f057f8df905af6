# The server (issue 4): the transport on its own over raw sockets, and the
# end-to-end tests that drive the real rigd and rigctl.
if(TARGET rigd_net)
  find_package(Threads REQUIRED)
  rigd_unit_test(net rigd_net Threads::Threads)
endif()
if(TARGET rigd)
  rigd_node_test(e2e_api e2e/api.js)
  rigd_node_test(e2e_concurrent e2e/concurrent.js)
  rigd_node_test(e2e_slow e2e/slow.js)
  rigd_node_test(e2e_restart e2e/restart.js)
endif()
