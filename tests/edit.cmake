# The edit language and its JSON: the edit module and the protocol codec.
rigd_unit_test(edit rigd_core)
rigd_unit_test(proto rigd_codec)
