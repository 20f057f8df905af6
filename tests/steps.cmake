# Step frames: subscribers that keep up get every turn's update in order,
# and a client a few turns behind gets each turn with its own matrices
# (server/serve/fanout.c).
rigd_node_test(e2e_steps e2e/steps.js)
set_tests_properties(e2e_steps PROPERTIES TIMEOUT 300)
