# The 2D viewer's clips panel (web/app/clips.js) in Chromium against a real
# rigd: two pages on one scene, a clip picked, scrubbed, stepped and played
# in one and seen in the other; the frame times of a 100-bone clip printed.
# It renders, so it shares the browser tests' lock.
rigd_node_test(web_clips2d web/clips2d.test.mjs)
set_tests_properties(web_clips2d PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
