# Hardening: hostile input, access control, TLS, limits and
# fairness, load with faults, the server under valgrind, and the container's
# entry point. node:test files that drive the real rigd (tests/lib/rigd.js);
# see docs/security.md.
rigd_node_test(security_hostile e2e/hostile.js)
set_tests_properties(security_hostile PROPERTIES TIMEOUT 300)

rigd_node_test(security_auth e2e/auth.js)
# The fairness test compares latencies: nothing else may run beside it.
set_tests_properties(security_auth PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

# rigd under valgrind's memcheck; skips itself in the ASan build.
rigd_node_test(security_valgrind e2e/valgrind.js)
set_tests_properties(security_valgrind PROPERTIES TIMEOUT 400)

# 50 editors, 200 watchers, a stall, garbage and a SIGKILL for
# RIGD_LOAD_SECONDS (default 25); its latencies are printed: it runs alone.
rigd_node_test(security_load e2e/load.js)
set_tests_properties(security_load PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

# docker/entrypoint.sh without a container: tokens made at the first start.
rigd_node_test(security_docker_entrypoint e2e/docker.js)
set_tests_properties(security_docker_entrypoint PROPERTIES TIMEOUT 120)
