# wsb_build_info(<target> <source>): gives <source> (bench/harness/
# build_info.cpp, part of <target>) what it records about the build:
#
#   WSBENCH_CXX_FLAGS   the compile flags of this build type as CMake passes
#                       them (CMAKE_CXX_FLAGS and CMAKE_CXX_FLAGS_<CONFIG>),
#                       so a summary can tell an optimised binary from one
#                       that is not;
#   the headers of every library the context names, for their own version
#                       macros: the version the build compiled against, not
#                       what a package database says.
#
# Headers only: the source gets each library's include directories, compile
# definitions and options (gSOAP's -DWITH_OPENSSL and the rest, so its
# struct soap is the one every other gSOAP user compiles), and links nothing.
# Set on the one source, so no other file of <target> sees these headers.
function(wsb_build_info target source)
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  set(flags "${CMAKE_CXX_FLAGS}")
  if(multi_config)
    foreach(config IN LISTS CMAKE_CONFIGURATION_TYPES)
      string(TOUPPER "${config}" upper)
      string(APPEND flags "$<$<CONFIG:${config}>: ${CMAKE_CXX_FLAGS_${upper}}>")
    endforeach()
  else()
    string(TOUPPER "${CMAKE_BUILD_TYPE}" upper)
    string(APPEND flags " ${CMAKE_CXX_FLAGS_${upper}}")
  endif()
  string(STRIP "${flags}" flags)
  set_property(SOURCE ${source} TARGET_DIRECTORY ${target} APPEND PROPERTY
               COMPILE_DEFINITIONS "WSBENCH_CXX_FLAGS=\"${flags}\"")
  foreach(library gRPC::grpc++ protobuf::libprotobuf simdjson::simdjson OpenSSL::SSL
                  LibXml2::LibXml2 Boost::headers PkgConfig::GSOAP)
    # The compiler's own directories (/usr/include) are left out: named
    # again with -isystem they break libstdc++'s #include_next.
    get_target_property(directories ${library} INTERFACE_INCLUDE_DIRECTORIES)
    if(directories)
      list(REMOVE_ITEM directories ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
      set_property(SOURCE ${source} TARGET_DIRECTORY ${target} APPEND PROPERTY
                   INCLUDE_DIRECTORIES ${directories})
    endif()
    foreach(kind COMPILE_DEFINITIONS COMPILE_OPTIONS)
      set_property(SOURCE ${source} TARGET_DIRECTORY ${target} APPEND PROPERTY ${kind}
                   "$<TARGET_PROPERTY:${library},INTERFACE_${kind}>")
    endforeach()
  endforeach()
endfunction()
