# Poses: saved sets of node channels and their blend (server/core/pose.c,
# server/core/edit_pose.c).
rigd_unit_test(pose rigd_core)
