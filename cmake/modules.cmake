# Layers above the core, added as their sources land.

# --- the engine (issue 3): edit language, JSON, storage ---
# proto.c is the one file that includes cJSON.h, store.c the one that
# includes sqlite3.h. Append this layer's sources to the list below.
add_library(rigd_engine STATIC server/edit.c server/proto.c)
target_link_libraries(rigd_engine PUBLIC rigd_core PkgConfig::CJSON)

# --- the server (issue 4): transport, wiring, the script client ---
# net.c is the one server file that includes libwebsockets.h; only the rigd
# binary, rigctl and the transport's own test link it.
add_library(rigd_net STATIC server/net.c)
target_link_libraries(rigd_net PUBLIC rigd_core PkgConfig::LWS)
