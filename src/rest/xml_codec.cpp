#include "rest/rest_codecs.h"
namespace wsb::rest {
std::unique_ptr<Codec> make_xml_codec() { throw std::logic_error("TODO"); }
std::unique_ptr<Codec> make_protobuf_codec() { throw std::logic_error("TODO"); }
}  // namespace wsb::rest
