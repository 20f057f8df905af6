# The 2D viewer (web/app/view2d.js, svg_layers.js, panels2d.js) in Chromium
# against a real rigd: the worked two-bone example on screen, joint drags
# (rotate, ik, move), poses, draw order without flicker, two browsers
# converging, and hostile SVG artwork kept inert.
rigd_node_test(web_viewer2d web/viewer2d.test.mjs)
set_tests_properties(web_viewer2d PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
rigd_node_test(web_unit2d web/unit2d.test.mjs)  # model, binary frames, order2d.js under node
