# Durable storage and the engine facade: the store on
# its own, the engine (group commit, rollback, undo, time travel, export and
# import, check), and the crash test that SIGKILLs `rigd apply`.
rigd_unit_test(store rigd_engine)
rigd_unit_test(engine rigd_engine)
rigd_unit_test(writer rigd_engine)  # the commit writer's queue, and commits through it
rigd_node_test(crash_store crash_store.js)
rigd_node_test(cli_store cli_store.js)
# The commit on the writer's thread, against a disk whose fsync is slowed.
rigd_node_test(e2e_commit_slow e2e/commit_slow.js)
# The group commit's window (--commit-delay), on a real disk.
rigd_node_test(e2e_commit_window e2e/commit_window.js)
