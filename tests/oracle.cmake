# The independent oracle: oracle_dump prints rigd's world
# matrices for the glTF samples and for seeded random trees, and
# oracle/oracle.test.mjs checks them against three.js's updateMatrixWorld.
# random_tree.c is shared with the benchmark (bench/core.cmake), so both use
# the very same trees.
add_library(rigd_oracle_support STATIC oracle/random_tree.c oracle/gltf_nodes.c)
# -I, not -iquote: CMake folds repeated "-iquote" flags into one and would
# strip the core's; nothing in oracle/ shadows a system header.
target_include_directories(rigd_oracle_support PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/oracle)
target_link_libraries(rigd_oracle_support PUBLIC rigd_core PRIVATE PkgConfig::CJSON)

add_executable(oracle_dump oracle/oracle_dump.c)
target_link_libraries(oracle_dump PRIVATE rigd_oracle_support)

rigd_node_test(oracle_three oracle/oracle.test.mjs)

# The loader itself: preorder, channels, and refusals of what is not a tree.
add_executable(test_gltf_nodes oracle/test_gltf_nodes.c)
target_link_libraries(test_gltf_nodes PRIVATE rigd_oracle_support PkgConfig::CMOCKA)
target_compile_definitions(test_gltf_nodes PRIVATE RIGD_GLTF_SAMPLES="${RIGD_GLTF_SAMPLES}")
add_test(NAME unit_gltf_nodes COMMAND test_gltf_nodes)
