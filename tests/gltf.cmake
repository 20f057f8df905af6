# glTF in and out: the codec's unit test, the tool that prints
# rigd's view of an import or export, and the three.js / Khronos validator
# checks that read its output (tests/gltf/gltf.test.mjs).
rigd_unit_test(gltf rigd_codec)
# -I, not -iquote (see oracle.cmake): demo_rig.h is shared with the tool.
target_include_directories(test_gltf PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gltf)
# test_gltf.c reads its samples from RIGD_SHARED_DIR "/gltf-samples/": a link
# in the build tree makes that the folder RIGD_GLTF_SAMPLES names. Its sample
# cases cannot skip themselves, so without the samples the test is disabled
# (ctest lists it as "Not Run (Disabled)") rather than failing.
set(rigd_gltf_samples_parent ${CMAKE_CURRENT_BINARY_DIR}/gltf-samples-parent)
file(MAKE_DIRECTORY ${rigd_gltf_samples_parent})
file(CREATE_LINK ${RIGD_GLTF_SAMPLES} ${rigd_gltf_samples_parent}/gltf-samples SYMBOLIC)
target_compile_definitions(test_gltf PRIVATE RIGD_SHARED_DIR="${rigd_gltf_samples_parent}")
if(NOT IS_DIRECTORY ${RIGD_GLTF_SAMPLES})
  message(STATUS "glTF samples not found at ${RIGD_GLTF_SAMPLES}: unit_gltf is disabled")
  set_tests_properties(unit_gltf PROPERTIES DISABLED TRUE)
endif()

add_executable(gltf_tool gltf/gltf_tool.c)
target_link_libraries(gltf_tool PRIVATE rigd_codec)
target_include_directories(gltf_tool PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/gltf)

rigd_node_test(gltf_three gltf/gltf.test.mjs)
