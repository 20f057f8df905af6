# The wire's binary frames: the codec (server/codec/proto_bin.c) alone, then
# binary and JSON subscribers of the real server side by side.
rigd_unit_test(proto_bin rigd_codec)
rigd_node_test(e2e_wire e2e/wire.js)
# It measures latencies with a stalled client, as e2e_slow does.
set_tests_properties(e2e_wire PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# The viewer's decoder of binary frames (web/app/wire.js) under node.
rigd_node_test(web_wire web/wire.test.mjs)
# The viewer in Debian's Chromium: float32 by default, float64 and JSON on
# request, each drawing the server's matrices.
rigd_node_test(web_wire_view web/wire_view.test.mjs)
set_tests_properties(web_wire_view PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
