# The layering of server/: no include reaches up a layer, and each outside
# library is included in its one folder (tests/layering.test.mjs).
rigd_node_test(layering layering.test.mjs)
