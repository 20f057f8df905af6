# The DragonBones 5.x importer (server/codec/dragonbones*.c): its unit test
# (ops for the MIT mecha_1406 character and synthetic files, hand-computed
# worlds, refusals), and the oracle test: skel_worlds prints the worlds
# rigd computes for an imported file and tests/dragonbones_oracle.test.mjs
# compares them with @cocos/dragonbones-js's (a devDependency in web/).
# The shared character sits beside the glTF samples, in
# RIGD_GLTF_SAMPLES/../dragonbones; both tests skip only when it (or the
# oracle package) is absent.
get_filename_component(RIGD_DRAGONBONES_SAMPLES "${RIGD_GLTF_SAMPLES}/../dragonbones" ABSOLUTE)

rigd_unit_test(dragonbones rigd_codec)
target_compile_definitions(test_dragonbones PRIVATE
  RIGD_DRAGONBONES_SAMPLES="${RIGD_DRAGONBONES_SAMPLES}")

add_executable(skel_worlds oracle/skel_worlds.c)
target_link_libraries(skel_worlds PRIVATE rigd_codec)

add_test(NAME unit_dragonbones_oracle
  COMMAND node ${CMAKE_CURRENT_SOURCE_DIR}/dragonbones_oracle.test.mjs)
set_tests_properties(unit_dragonbones_oracle PROPERTIES
  SKIP_RETURN_CODE 77
  ENVIRONMENT "RIGD_BUILD_DIR=${CMAKE_BINARY_DIR};RIGD_SOURCE_DIR=${CMAKE_SOURCE_DIR};RIGD_DRAGONBONES_SAMPLES=${RIGD_DRAGONBONES_SAMPLES}")
