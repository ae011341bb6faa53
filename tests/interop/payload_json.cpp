// payload_json LABEL...: prints each catalogue payload as the json codec
// writes it, one line per label. The interop tests compare what clients
// written elsewhere (Python's xmlrpc.client, zeep) receive with these.
#include <exception>
#include <iostream>
#include <string>

#include "common/codec.h"
#include "common/payload.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: payload_json LABEL... (e.g. ints/200 message-a/100)\n";
    return 2;
  }
  const auto codec = wsb::find_codec("json").make();
  std::string body;
  for (int i = 1; i < argc; ++i) {
    try {
      codec->encode(wsb::generate(wsb::parse_spec(argv[i])), body);
    } catch (const std::exception& e) {
      std::cerr << "payload_json: " << argv[i] << ": " << e.what() << "\n";
      return 2;
    }
    std::cout << body << '\n';
  }
  return 0;
}
