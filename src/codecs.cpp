// The codec registry. Adding a wire format: one folder under src/ with a
// factory function, and one line here.
#include "common/codec.h"
#include "common/rpc_binding.h"
#include "rest/rest_codecs.h"
#include "soap/soap_codecs.h"
#include "xmlrpc/xmlrpc_codec.h"

namespace wsb {

const std::vector<CodecEntry>& all_codecs() {
  static const std::vector<CodecEntry> codecs = {
      {"soap", "SOAP 1.1 document/literal via gSOAP, binaries inline as base64",
       soap::make_soap_codec, soap::make_soap_rpc},
      {"soap-mtom", "SOAP 1.1 via gSOAP, binaries as MTOM/XOP attachments",
       soap::make_soap_mtom_codec, soap::make_soap_mtom_rpc},
      {"soap-swa",
       "SOAP 1.1 via gSOAP, binaries as SOAP with Attachments MIME parts (href=\"cid:...\")",
       soap::make_soap_swa_codec, soap::make_soap_swa_rpc},
      {"xmlrpc", "XML-RPC methodResponse via xmlrpc-c", xmlrpc::make_xmlrpc_codec,
       xmlrpc::make_xmlrpc_rpc},
      {"json", "REST body in JSON via RapidJSON, binaries as base64", rest::make_json_codec,
       nullptr},
      {.name = "json-simdjson",
       .description =
           "the json codec's bodies decoded with simdjson's On Demand API (one parser, reused)",
       .make = rest::make_json_simdjson_codec,
       .make_rpc = nullptr,
       .decode_path_of = "json",
       .alternative_of = "json"},
      {"xml", "REST body in plain XML via libxml2 (xmlTextWriter / xmlTextReader)",
       [] { return rest::make_xml_codec(rest::XmlBase64::wrapped); }, nullptr},
      {"xml-dom",
       "the xml codec's bodies decoded through a libxml2 tree (xmlReadMemory, then walk)",
       rest::make_xml_dom_codec, nullptr, "xml"},
      {.name = "xml-unwrapped",
       .description = "the xml codec writing base64 on one line, as gSOAP does (libxml2's "
                      "writer breaks it every 72 characters)",
       .make = [] { return rest::make_xml_codec(rest::XmlBase64::one_line); },
       .make_rpc = nullptr,
       .alternative_of = "xml"},
      {"protobuf", "REST body in proto3 via libprotobuf, binaries as bytes",
       rest::make_protobuf_codec, nullptr},
      {.name = "text",
       .description = "REST body as text/plain UTF-8, texts only (ping, primes, define): no markup",
       .make = rest::make_text_codec,
       .make_rpc = nullptr,
       .texts_only = true},
  };
  return codecs;
}

const CodecEntry& find_codec(std::string_view name) {
  for (const auto& entry : all_codecs())
    if (entry.name == name) return entry;
  throw std::invalid_argument("unknown codec '" + std::string(name) + "'");
}

}  // namespace wsb
