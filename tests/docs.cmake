# The documentation against the code: docs/protocol.md's error table lists
# every code of server/core/err.h with its HTTP status (tests/docs.test.mjs).
rigd_node_test(docs docs.test.mjs)
