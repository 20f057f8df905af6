# rigctl import SCENE FILE.json (Spine and DragonBones skeletons with their
# atlas and pages) against the real server; its errors exit 1, bad
# arguments 2. The DragonBones part skips only when the shared mecha_1406
# (RIGD_GLTF_SAMPLES/../dragonbones) is absent.
rigd_node_test(e2e_rigctl_skeleton e2e/rigctl_skeleton.js)
set_tests_properties(e2e_rigctl_skeleton PROPERTIES TIMEOUT 300)
