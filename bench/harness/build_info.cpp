#include "harness/build_info.h"

// Each library's own version macros, read from the headers this build
// compiled against (cmake/WsbenchBuildInfo.cmake gives this file, and only
// it, their include directories). Nothing here is called: the headers are
// here for their macros.
#include <google/protobuf/stubs/common.h>
#include <grpcpp/version_info.h>
#include <libxml/xmlversion.h>
#include <openssl/opensslv.h>
#include <rapidjson/rapidjson.h>
#include <simdjson.h>
#include <stdsoap2.h>

#include <boost/beast/version.hpp>
#include <boost/version.hpp>

#define WSB_STRINGIZE_VALUE(x) #x
#define WSB_STRINGIZE(x) WSB_STRINGIZE_VALUE(x)

namespace wsb {
namespace {

// "major.minor.patch" of a version packed as major x major_scale + minor x
// minor_scale + patch.
std::string dotted_version(long packed, long major_scale, long minor_scale) {
  return std::to_string(packed / major_scale) + "." +
         std::to_string(packed / minor_scale % (major_scale / minor_scale)) + "." +
         std::to_string(packed % minor_scale);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_info() {
  return {
      {"wsbench_version", WSBENCH_VERSION},
      {"wsbench_build_type", WSBENCH_CONFIG},
      {"wsbench_cxx_flags", WSBENCH_CXX_FLAGS},
      {"compiler", __VERSION__},
      {"grpc_version", GRPC_CPP_VERSION_STRING},
      // 3021012: major x 10^6 + minor x 10^3 + patch.
      {"protobuf_version", dotted_version(GOOGLE_PROTOBUF_VERSION, 1'000'000, 1'000)},
      {"simdjson_version", WSB_STRINGIZE(SIMDJSON_VERSION)},
      {"openssl_version", OPENSSL_VERSION_TEXT},
      {"libxml2_version", LIBXML_DOTTED_VERSION},
      {"rapidjson_version", RAPIDJSON_VERSION_STRING},
      // 108100: major x 10^5 + minor x 10^2 + patch.
      {"boost_version", dotted_version(BOOST_VERSION, 100'000, 100)},
      {"beast_version", BOOST_BEAST_VERSION_STRING},
      // 208124: major x 10^5 + minor x 10^3 + patch.
      {"gsoap_version", dotted_version(GSOAP_VERSION, 100'000, 1'000)},
      // xmlrpc-c's headers carry no version: xmlrpc-c-config's answer at
      // configure time (xmlrpc_c_runtime_version asks the library).
      {"xmlrpc_c_version", WSBENCH_XMLRPC_VERSION},
      // Google Benchmark has no version macro: its CMake package's.
      {"google_benchmark_version", WSBENCH_BENCHMARK_VERSION},
  };
}

}  // namespace wsb
