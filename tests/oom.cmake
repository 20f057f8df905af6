# Allocation-failure injection along the edit path: every
# allocation of decode -> apply -> encode and of an engine round made to
# fail in turn (tests/test_oom.c says how). --wrap reaches the allocations
# of rigd's own static libraries; cJSON and SQLite get counting allocators
# through their own hooks, hence the two extra libraries.
rigd_unit_test(oom rigd_engine PkgConfig::CJSON PkgConfig::SQLITE)
target_link_options(test_oom PRIVATE
  "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=free")
