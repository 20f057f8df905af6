# The server: the transport on its own over raw sockets, and the
# end-to-end tests that drive the real rigd and rigctl (node:test, with
# tests/lib/rigd.js to start servers on free ports).
find_package(Threads REQUIRED)
rigd_unit_test(net rigd_net Threads::Threads)
rigd_node_test(e2e_api e2e/api.js)
rigd_node_test(e2e_concurrent e2e/concurrent.js)
rigd_node_test(e2e_slow e2e/slow.js)
rigd_node_test(e2e_restart e2e/restart.js)
set_tests_properties(e2e_api e2e_concurrent e2e_slow e2e_restart PROPERTIES TIMEOUT 300)
# e2e_slow compares latencies with and without a stalled client: nothing
# else of the suite may run beside it.
set_tests_properties(e2e_slow PROPERTIES RUN_SERIAL TRUE)
rigd_node_test(e2e_rigctl e2e/rigctl.js)
set_tests_properties(e2e_rigctl PROPERTIES TIMEOUT 300)
rigd_node_test(e2e_gltf e2e/gltf.js)  # glTF in and out over HTTP and rigctl
rigd_node_test(e2e_twod e2e/twod.js)  # 2D scenes: angle, rotate, move, ik, debug
