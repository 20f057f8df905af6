# Layers above the core, added as their sources land.

# --- the engine (issue 3): edit language, JSON, storage ---
# proto.c reads the protocol's JSON with cJSON and writes it by hand (the
# shortest digits that read back to the same bits); store.c is the one file that includes
# sqlite3.h. Append this layer's sources to the list below.
add_library(rigd_engine STATIC server/edit.c server/proto.c)
target_link_libraries(rigd_engine PUBLIC rigd_core PkgConfig::CJSON)
target_sources(rigd_engine PRIVATE server/gltf.c)  # glTF in and out (issue 6)

# --- the server (issue 4): transport, wiring, the script client ---
# net.c is the one server file that includes libwebsockets.h; only the rigd
# binary, rigctl and the transport's own test link it.
add_library(rigd_net STATIC server/net.c)
target_link_libraries(rigd_net PUBLIC rigd_core PkgConfig::LWS)

# --- storage and the engine facade (issue 3, sections 2-5) ---
# The schema migrations schema/NNN_*.sql are embedded in the binary, so rigd
# works from any directory: at configure time (re-run whenever a migration is
# added or changed) each file becomes a byte array in schema_sql.c, in
# version order.
file(GLOB rigd_migrations CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/schema/[0-9][0-9][0-9]_*.sql)
list(SORT rigd_migrations)
set(rigd_schema_c "/* Generated from the schema migrations by cmake/modules.cmake. Do not edit. */\n")
set(rigd_schema_versions "")
set(rigd_schema_names "")
set(rigd_schema_sql "")
set(rigd_schema_count 0)
foreach(sql ${rigd_migrations})
  get_filename_component(sql_name ${sql} NAME)
  string(SUBSTRING ${sql_name} 0 3 sql_version)
  math(EXPR sql_version "${sql_version}" OUTPUT_FORMAT DECIMAL)
  file(READ ${sql} sql_hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," sql_bytes "${sql_hex}")
  string(APPEND rigd_schema_c "static const unsigned char m${rigd_schema_count}[] = {${sql_bytes}0};\n")
  string(APPEND rigd_schema_versions "${sql_version},")
  string(APPEND rigd_schema_names "\"${sql_name}\",")
  string(APPEND rigd_schema_sql "(const char *)m${rigd_schema_count},")
  math(EXPR rigd_schema_count "${rigd_schema_count} + 1")
endforeach()
string(APPEND rigd_schema_c
  "extern const int rigd_schema_count;\n"
  "extern const int rigd_schema_versions[];\n"
  "extern const char *const rigd_schema_names[];\n"
  "extern const char *const rigd_schema_sql[];\n"
  "const int rigd_schema_count = ${rigd_schema_count};\n"
  "const int rigd_schema_versions[] = {${rigd_schema_versions}0};\n"
  "const char *const rigd_schema_names[] = {${rigd_schema_names}0};\n"
  "const char *const rigd_schema_sql[] = {${rigd_schema_sql}0};\n")
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/generated/schema_sql.c CONTENT "${rigd_schema_c}")
target_sources(rigd_engine PRIVATE server/store.c server/engine.c
                                   ${CMAKE_BINARY_DIR}/generated/schema_sql.c)
target_link_libraries(rigd_engine PUBLIC PkgConfig::SQLITE)

# rigd: the offline commands (log, apply, check) and, once serve.c lands,
# the server. main.c calls serve_main() only when RIGD_HAVE_SERVE is defined.
add_executable(rigd server/main.c)
target_link_libraries(rigd PRIVATE rigd_engine)

# --- the server in the rigd binary (issue 4) ---
# serve.c wires the engine to the transport; main.c calls serve_main().
target_sources(rigd PRIVATE server/serve.c)
target_link_libraries(rigd PRIVATE rigd_net)
target_compile_definitions(rigd PRIVATE RIGD_HAVE_SERVE)

# rigctl: the script client (libwebsockets for websockets and HTTP; proto to
# validate and re-encode batches before they are sent).
add_executable(rigctl server/rigctl.c)
target_link_libraries(rigctl PRIVATE rigd_engine PkgConfig::LWS)
