# wsb_build_info(<target> <source>): gives <source> (bench/harness/
# build_info.cpp, part of <target>) what it records about the build:
#
#   WSBENCH_CONFIG      the build type: CMAKE_BUILD_TYPE, or the configuration
#                       built by a multi-config generator;
#   WSBENCH_CXX_FLAGS   the compile flags of that build type as CMake passes
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
  string(STRIP "${CMAKE_CXX_FLAGS}" flags)
  set(separator "")
  if(flags)
    set(separator " ")
  endif()
  if(multi_config)
    set(config "$<CONFIG>")
    foreach(type IN LISTS CMAKE_CONFIGURATION_TYPES)
      string(TOUPPER "${type}" upper)
      string(APPEND flags "$<$<CONFIG:${type}>:${separator}${CMAKE_CXX_FLAGS_${upper}}>")
    endforeach()
  else()
    set(config "${CMAKE_BUILD_TYPE}")
    string(TOUPPER "${CMAKE_BUILD_TYPE}" upper)
    string(STRIP "${flags}${separator}${CMAKE_CXX_FLAGS_${upper}}" flags)
  endif()
  set_property(SOURCE ${source} TARGET_DIRECTORY ${target} APPEND PROPERTY
               COMPILE_DEFINITIONS "WSBENCH_CONFIG=\"${config}\"" "WSBENCH_CXX_FLAGS=\"${flags}\"")
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
