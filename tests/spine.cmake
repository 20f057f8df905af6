# The skeleton importers' shared node ids (server/codec/skel_names.c) and
# the Spine 4.2 importer (server/codec/spine.c).
rigd_unit_test(skel_names rigd_codec)
rigd_unit_test(spine rigd_codec)
rigd_unit_test(spine_ik rigd_codec)
