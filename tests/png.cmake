# The PNG checker and strict base64 (server/codec/png.c, base64.c) and the
# texture atlases (server/codec/atlas.c). test_png writes its PNGs with
# zlib alone and reads the canonical output back with libpng, so it links
# both itself.
pkg_check_modules(TEST_LIBPNG REQUIRED IMPORTED_TARGET libpng)
pkg_check_modules(TEST_ZLIB REQUIRED IMPORTED_TARGET zlib)
rigd_unit_test(png rigd_codec PkgConfig::TEST_LIBPNG PkgConfig::TEST_ZLIB)
rigd_unit_test(atlas rigd_codec)
