#include "soap/soap_codecs.h"
namespace wsb::soap {
std::unique_ptr<Codec> make_soap_codec() { throw std::logic_error("TODO"); }
std::unique_ptr<Codec> make_soap_mtom_codec() { throw std::logic_error("TODO"); }
}  // namespace wsb::soap
