rigd_unit_test(math rigd_core)
rigd_unit_test(scene rigd_core)
rigd_unit_test(num rigd_core)
rigd_unit_test(twod rigd_core)
