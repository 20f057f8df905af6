# The edit language and its JSON (issue 3 section 1; the codecs of issue 4).
rigd_unit_test(edit rigd_core)
rigd_unit_test(proto rigd_codec)
