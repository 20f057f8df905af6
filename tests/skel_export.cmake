# The Spine and DragonBones exports (server/codec/spine_export.c,
# dragonbones_export.c): round trips of every test file and of the shared
# mecha_1406 character (RIGD_GLTF_SAMPLES/../dragonbones, skipped only when
# absent), edits checked by hand, refusals; and the routes end to end.
get_filename_component(RIGD_SKEL_EXPORT_SAMPLES "${RIGD_GLTF_SAMPLES}/../dragonbones" ABSOLUTE)
rigd_unit_test(skel_export rigd_codec)
target_compile_definitions(test_skel_export PRIVATE
  RIGD_DRAGONBONES_SAMPLES="${RIGD_SKEL_EXPORT_SAMPLES}")
rigd_node_test(e2e_skeleton_export e2e/skeleton_export.js)
