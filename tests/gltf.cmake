# glTF in and out: the codec's unit test, the tool that prints
# rigd's view of an import or export, and the three.js / Khronos validator
# checks that read its output (tests/gltf/gltf.test.mjs).
rigd_unit_test(gltf rigd_codec)
# -I, not -iquote (see oracle.cmake): demo_rig.h is shared with the tool.
target_include_directories(test_gltf PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gltf)

add_executable(gltf_tool gltf/gltf_tool.c)
target_link_libraries(gltf_tool PRIVATE rigd_codec)
target_include_directories(gltf_tool PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gltf)

rigd_node_test(gltf_three gltf/gltf.test.mjs)
