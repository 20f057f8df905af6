# Skeleton imports end to end (tests/e2e/skeleton.js): a Spine rig with its
# atlas and a PNG page, and the shared DragonBones character mecha_1406,
# through the real HTTP routes into a real SQLite file; assets of every
# kind served, hostile pages and atlases refused, the log round trip, undo,
# a restart and rigd check.
rigd_node_test(e2e_skeleton e2e/skeleton.js)
