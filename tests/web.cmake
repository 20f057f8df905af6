# The browser viewer (web/): unit tests of its pure modules under node, and
# browser tests that drive Debian's Chromium (playwright-core) against a real
# rigd. The browser tests share one lock so they never render at the same
# time, and the 10,000-node benchmark runs alone so its frame times are not
# those of a machine busy with other tests.
rigd_node_test(web_unit web/unit.test.mjs)
rigd_node_test(web_viewer web/viewer.test.mjs)
rigd_node_test(web_bigscene web/bigscene.test.mjs)
rigd_node_test(web_gltf web/gltf.test.mjs)  # glTF drop-to-import and export
rigd_node_test(web_auth web/auth.test.mjs)  # the token field against a rigd with tokens
set_tests_properties(web_viewer PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
set_tests_properties(web_gltf PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
set_tests_properties(web_auth PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
set_tests_properties(web_bigscene PROPERTIES RESOURCE_LOCK chromium RUN_SERIAL TRUE TIMEOUT 300)
# cmake --install into a fresh prefix, then the installed rigd, started from
# another directory without --web, serving the viewer it was installed with
# to Chromium (the 3D and the 2D demo live, every file from the install).
rigd_node_test(web_install web/install.test.mjs)
set_tests_properties(web_install PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
# The viewer on every screen (issue 26): a phone and a tablet with touch
# (tap, long press, pinch, gizmo and joint drags by finger), 360 px without
# sideways scrolling, the keyboard alone, axe-core, the toolbar on one row
# at 1280 px, the one Import button (docs/viewer-touch.md).
rigd_node_test(web_screens web/screens.test.mjs)
set_tests_properties(web_screens PROPERTIES RESOURCE_LOCK chromium TIMEOUT 400)
