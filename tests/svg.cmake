# The SVG sanitiser (server/codec/svg.c): the hostile documents of
# tests/svg/hostile against their table of outcomes, limits, fixed points.
rigd_unit_test(svg rigd_codec)
