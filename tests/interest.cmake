# Per-viewer interest: views and their cull in core (server/core/view.c),
# then viewers of the real server declaring views while a scene is edited.
rigd_unit_test(view rigd_core)
rigd_unit_test(view_wire rigd_codec)
rigd_node_test(e2e_interest e2e/interest.js)
# It measures latencies with a stalled viewer, as e2e_slow does.
set_tests_properties(e2e_interest PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# The viewer in Debian's Chromium with ?interest=on, panning across a scene
# being edited; then without a flag (?interest=auto) on a scene growing past
# the threshold and back, and on the small demo rig.
rigd_node_test(web_interest web/interest.test.mjs)
set_tests_properties(web_interest PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
