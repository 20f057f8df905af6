# A 2D node's shear and inherit mode (server/core: mat4_compose_pivot2d,
# inherit.c, the recompute pass, the edit layer): local matrices, Spine's
# and DragonBones' modes against their formulas, edits, undo, refusals.
rigd_unit_test(shear rigd_core)
