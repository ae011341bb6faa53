# Every dependency comes from the system (Debian 12 packages, see
# scripts/deps.sh); nothing is vendored.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(Boost 1.81 REQUIRED CONFIG)
find_package(RapidJSON REQUIRED CONFIG)
find_package(simdjson 3.0 REQUIRED CONFIG)
find_package(Protobuf REQUIRED)
find_package(benchmark REQUIRED CONFIG)
find_package(LibXml2 REQUIRED)
find_package(XMLRPC REQUIRED c++2 client abyss-server)
# gSOAP's OpenSSL engine (libgsoapssl++, built WITH_OPENSSL and WITH_GZIP):
# the gsoap-tls stack needs it, and it and libgsoap++ define the same
# symbols with different layouts of struct soap, so every gSOAP user in a
# binary (generated code, the gsoap stacks, the gSOAP anchor) uses this one.
pkg_check_modules(GSOAP REQUIRED IMPORTED_TARGET gsoapssl++)
find_package(OpenSSL REQUIRED COMPONENTS Crypto SSL)
# gRPC 1.51 (libgrpc++-dev) and its protoc plugin (protobuf-compiler-grpc).
find_package(gRPC REQUIRED CONFIG)
find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
# What only the tests need is optional: without it bench, the servers and
# the load driver still build, and the configure output says which tests
# are missing and why. WSBENCH_BUILD_TESTS is shadowed, not rewritten in the
# cache, so installing the packages and configuring again brings the tests
# back.
if(WSBENCH_BUILD_TESTS)
  find_package(GTest)
  # The grpc stack's raw HTTP/2 tests code HPACK header blocks with
  # nghttp2's (libnghttp2-dev).
  pkg_check_modules(NGHTTP2 IMPORTED_TARGET libnghttp2)
  set(_wsb_missing "")
  if(NOT GTest_FOUND)
    list(APPEND _wsb_missing "GoogleTest (libgtest-dev)")
  endif()
  if(NOT NGHTTP2_FOUND)
    list(APPEND _wsb_missing "nghttp2 (libnghttp2-dev)")
  endif()
  if(_wsb_missing)
    list(JOIN _wsb_missing " and " _wsb_missing)
    message(WARNING "Tests skipped: ${_wsb_missing} not found. bench, the servers and the "
                    "load driver build without them; install the packages (scripts/deps.sh) "
                    "and configure again to build the tests, or pass "
                    "-DWSBENCH_BUILD_TESTS=OFF to silence this.")
    set(WSBENCH_BUILD_TESTS OFF)
  endif()
  unset(_wsb_missing)
endif()

# callgrind.h (Debian's valgrind package): the timed loops mark themselves
# for instruction counting.
find_path(VALGRIND_INCLUDE_DIR valgrind/callgrind.h REQUIRED)

find_program(SOAPCPP2 soapcpp2 REQUIRED)
find_path(GSOAP_IMPORT_DIR stlvector.h PATHS /usr/share/gsoap/import REQUIRED)

# xmlrpc-c ships no version file; ask its config tool.
find_program(XMLRPC_C_CONFIG xmlrpc-c-config)
set(WSBENCH_XMLRPC_C_VERSION "unknown")
if(XMLRPC_C_CONFIG)
  execute_process(COMMAND ${XMLRPC_C_CONFIG} --version
    OUTPUT_VARIABLE WSBENCH_XMLRPC_C_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
