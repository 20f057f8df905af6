# The server's own logic, module by module, without sockets: the turn
# journal and the updates built from it, access control (tokens, roles,
# rate buckets) and the HTTP route table that drives dispatch and
# authorisation.
rigd_unit_test(journal rigd_serve)
rigd_unit_test(views rigd_serve)   # a room's views as records, alone
rigd_unit_test(auth rigd_serve)
rigd_unit_test(routes rigd_serve)
