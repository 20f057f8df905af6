# Per-viewer interest: views and their cull in core (server/core/view.c),
# then viewers of the real server declaring views while a scene is edited.
rigd_unit_test(view rigd_core)
