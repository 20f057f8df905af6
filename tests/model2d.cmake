# How the nodes of a 2D scene are drawn: the fields layer, z and facing
# (server/core/edit_validate.c, the codec, the op image, snapshots) and the
# draw order (server/core/draw.c), sent with snapshots and updates.
rigd_unit_test(model2d rigd_engine)  # fields, undo, op image, snapshots, log; facing and order
target_sources(test_model2d PRIVATE tmpdb.c)
rigd_node_test(e2e_model2d e2e/model2d.js)  # fields, the order in snapshots, updates (also coalesced and binary), trees, logs
rigd_unit_test(model2d_journal rigd_serve)  # the order in the turn journal: coalesced and binary updates
