# engine_import names a failing line exactly once ("line N: reason").
rigd_unit_test(import_line rigd_engine)
target_sources(test_import_line PRIVATE tmpdb.c)
