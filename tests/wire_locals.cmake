# Binary updates of version 2: nodes changed in their transform channels
# only travel as locals entries. The codec alone, then the real server.
rigd_unit_test(bin_locals rigd_codec)
rigd_node_test(e2e_wire_locals e2e/wire_locals.js)
rigd_node_test(web_wire_locals web/wire_locals.test.mjs)
