# The clip op (server/core/edit_clip.c, docs/clips.md "Playing a clip"):
# unit_clip_op resolves clips of the synthetic files of tests/data/clips
# (read by server/codec/skel_clips_read.c) into sets checked against
# clip_sample and the documented conversions, with roots, weights, undo,
# replay and refusals, and prints the op's time on a 100-bone, 120-slot,
# 20-clip skeleton; e2e_clip_op plays clips through a real rigd and checks
# mecha_1406's walk against @cocos/dragonbones-js
# (tests/oracle/dragonbones_world.mjs; the mecha parts skip when the shared
# sample is absent).
rigd_unit_test(clip_op rigd_codec)
rigd_node_test(e2e_clip_op e2e/clip_op.js)
