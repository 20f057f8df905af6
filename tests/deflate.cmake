# permessage-deflate on the real server: negotiated only with --deflate on
# and a client that offers it, and the same JSON after inflating.
rigd_node_test(e2e_deflate e2e/deflate.js)
set_tests_properties(e2e_deflate PROPERTIES TIMEOUT 120)
