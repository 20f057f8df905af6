# Spine and DragonBones rigs in the 2D viewer (web/app/skeleton_layers.js):
# atlas regions drawn where the formats' formulas put them, read back from
# Chromium's pixels; outlines without an atlas.
rigd_node_test(web_skeleton2d web/skeleton2d.test.mjs)
set_tests_properties(web_skeleton2d PROPERTIES RESOURCE_LOCK chromium TIMEOUT 300)
