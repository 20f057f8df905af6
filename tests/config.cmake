# The server's flags: one table drives parsing, defaults and usage.
rigd_unit_test(config rigd_serve)
