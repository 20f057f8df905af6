# Poses: saved sets of node channels and their blend (server/core/pose.c,
# server/core/edit_pose.c).
rigd_unit_test(pose rigd_core)
rigd_node_test(e2e_poses e2e/poses.js)  # pose_save, blend, the pose list, undo, restart, import
rigd_unit_test(pose_wire rigd_engine)  # pose ops in JSON and in the log's op image
target_sources(test_pose_wire PRIVATE tmpdb.c)
