# rigctl watch with a view (--view FILE, --vp/--viewport/--min-px) against
# the real server, beside JSON view clients; bad view flags exit 2.
rigd_node_test(e2e_rigctl_view e2e/rigctl_view.js)
set_tests_properties(e2e_rigctl_view PROPERTIES TIMEOUT 300)
