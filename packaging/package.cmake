# The man pages, the service and the Debian package (docs/deploy.md,
# "The Debian package"). Included by the top CMakeLists.txt after the
# install rules of the programs, the viewer and the docs.

# Man pages and the changelog compressed as Debian wants them (gzip -9n:
# no name or time stamp, so the bytes depend on the text alone).
set(RIGD_GZ ${CMAKE_BINARY_DIR}/packaging)
set(rigd_gz_files)
foreach(src docs/man/rigd.1 docs/man/rigctl.1 packaging/changelog)
  get_filename_component(name ${src} NAME)
  set(out ${RIGD_GZ}/${name}.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${RIGD_GZ}
    COMMAND sh -c "gzip -9n < '${CMAKE_SOURCE_DIR}/${src}' > '${out}'"
    DEPENDS ${CMAKE_SOURCE_DIR}/${src} VERBATIM)
  list(APPEND rigd_gz_files ${out})
endforeach()
add_custom_target(rigd_gz ALL DEPENDS ${rigd_gz_files})
install(FILES ${RIGD_GZ}/rigd.1.gz ${RIGD_GZ}/rigctl.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# A native package (its version has no Debian revision): changelog.gz.
install(FILES ${RIGD_GZ}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES packaging/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The service: the unit and the file of its flags. Under the prefix
# /usr (the package's) these land in /usr/lib/systemd/system and
# /etc/default.
install(FILES packaging/rigd.service DESTINATION lib/systemd/system)
install(FILES packaging/rigd.default RENAME rigd DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default)

# make deb: CPack's DEB generator on a Release tree configured with the
# prefix /usr (scripts/build-deb.sh). Depends comes from dpkg-shlibdeps,
# from the libraries the programs link, and names by hand what they load
# at run time, which dpkg-shlibdeps cannot see: libwebsockets opens its
# libuv event loop, libwebsockets-evlib_uv.so, with dlopen (net.c asks for
# LWS_SERVER_OPTION_LIBUV), and without it rigd does not start.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rigd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "rigd maintainers <rigd@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "networked scene-graph server for articulated rigs")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "rigd keeps trees of nodes (robot arms, skeletons, 2D cut-out characters)
in SQLite, takes JSON edits from several browsers and scripts at once over
HTTP and websockets, recomputes only the world matrices an edit changed,
logs every acknowledged edit durably and sends the new matrices to every
viewer. It serves its browser viewer (three.js) itself. rigctl is its
script client.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/rigd/rigd")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libwebsockets-evlib-uv")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_SOURCE_DIR}/packaging/postinst ${CMAKE_SOURCE_DIR}/packaging/prerm
  ${CMAKE_SOURCE_DIR}/packaging/postrm ${CMAKE_SOURCE_DIR}/packaging/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
include(CPack)
