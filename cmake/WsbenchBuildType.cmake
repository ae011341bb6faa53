# The configuration a build gets when nobody names one. A plain
# `cmake -B build` on a single-config generator leaves CMAKE_BUILD_TYPE
# empty, which compiles without -O: every figure such a bench printed would
# describe code nobody runs. So an empty build type becomes the release
# preset's (CMakePresets.json): RelWithDebInfo with frame pointers, so perf
# can walk our stacks. A build type given on the command line or by a preset
# is kept as it is, and multi-config generators choose at build time.
get_property(_wsb_multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
if(NOT _wsb_multi_config AND NOT CMAKE_BUILD_TYPE)
  message(STATUS "No CMAKE_BUILD_TYPE given: building RelWithDebInfo with the release preset's "
                 "flags (-O2 -g -fno-omit-frame-pointer)")
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Debug, Release, RelWithDebInfo or MinSizeRel"
      FORCE)
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g -fno-omit-frame-pointer -DNDEBUG"
      CACHE STRING "Flags of RelWithDebInfo builds" FORCE)
endif()
unset(_wsb_multi_config)
