# A 2D node's shear and inherit mode (server/core: mat4_compose_pivot2d,
# inherit.c, the recompute pass, the edit layer): local matrices, Spine's
# and DragonBones' modes against their formulas, edits, undo, refusals.
rigd_unit_test(shear rigd_core)
# The same fields on the wire and in the store: JSON ops and node records,
# the log's op image (format 3), snapshots, time travel, undo, a reopened
# database, a log exported and imported.
rigd_unit_test(shear_wire rigd_engine)
target_sources(test_shear_wire PRIVATE tmpdb.c)
