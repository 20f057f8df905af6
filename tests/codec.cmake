# The codec's JSON writer (server/codec/json.c), which the protocol's
# encoders and the glTF export both append with.
rigd_unit_test(json rigd_codec)

# The writer's numbers, byte for byte, against the printf algorithm they
# replaced, on millions of doubles (the count per family is its argument).
rigd_unit_test(json_number rigd_codec)
