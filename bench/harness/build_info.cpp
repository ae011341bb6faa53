#include "harness/build_info.h"

namespace wsb {

std::vector<std::pair<std::string, std::string>> build_info() {
  return {
      {"wsbench_version", WSBENCH_VERSION},
      {"wsbench_build_type", WSBENCH_BUILD_TYPE},
      {"compiler", __VERSION__},
      {"gsoap_version", WSBENCH_GSOAP_VERSION},
      {"xmlrpc_c_version", WSBENCH_XMLRPC_VERSION},
      {"protobuf_version", WSBENCH_PROTOBUF_VERSION},
      {"libxml2_version", WSBENCH_LIBXML2_VERSION},
      {"rapidjson_version", WSBENCH_RAPIDJSON_VERSION},
      {"boost_version", WSBENCH_BOOST_VERSION},
      {"google_benchmark_version", WSBENCH_BENCHMARK_VERSION},
      {"openssl_version", WSBENCH_OPENSSL_VERSION},
  };
}

}  // namespace wsb
