# The SVG sanitiser (server/codec/svg.c): the hostile documents of
# tests/svg/hostile against their table of outcomes, limits, fixed points.
rigd_unit_test(svg rigd_codec)
rigd_node_test(e2e_svg e2e/svg.js)  # import over HTTP and rigctl, refusals, hostile uploads, time travel, log, restart, demo2d
rigd_unit_test(assets rigd_engine)  # assets in the engine: with their batch, as of a seq, a failed commit
target_sources(test_assets PRIVATE tmpdb.c)
