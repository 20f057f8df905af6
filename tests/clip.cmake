# Clips: the sampler (server/core/clip.c) against hand-worked values, and
# the Spine and DragonBones animation readers (server/codec/spine_clip.c,
# dragonbones_clip.c) on synthetic files of tests/data/clips and on the
# DragonBones sample mecha_1406, found beside the glTF samples
# (RIGD_GLTF_SAMPLES/../dragonbones; skipped when absent).
rigd_unit_test(clip rigd_core)
rigd_unit_test(clip_codec rigd_codec)
