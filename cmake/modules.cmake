# Layers above the core, added as their sources land.

# --- the server (issue 4): transport, wiring, the script client ---
# net.c is the one server file that includes libwebsockets.h; only the rigd
# binary, rigctl and the transport's own test link it.
add_library(rigd_net STATIC server/net.c)
target_link_libraries(rigd_net PUBLIC rigd_core PkgConfig::LWS)
