# The codec's JSON writer (server/codec/json.c), which the protocol's
# encoders and the glTF export both append with.
rigd_unit_test(json rigd_codec)
