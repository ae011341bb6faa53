// REST body codecs: JSON (RapidJSON; simdjson decodes it too), XML (libxml2), Protocol Buffers, and
// text/plain for texts.
#pragma once

#include <memory>

#include "common/codec.h"

namespace wsb::rest {

std::unique_ptr<Codec> make_json_codec();
// The same JSON, decoded with simdjson's On Demand API.
std::unique_ptr<Codec> make_json_simdjson_codec();
// How the XML codecs write a binary's base64: libxml2's writer breaks it
// every 72 characters (xmlTextWriterWriteBase64); gSOAP writes one line.
// The decoders read both.
enum class XmlBase64 { wrapped, one_line };
std::unique_ptr<Codec> make_xml_codec(XmlBase64 base64 = XmlBase64::wrapped);
// The same XML, decoded through a libxml2 document tree (read, then walk).
std::unique_ptr<Codec> make_xml_dom_codec();
std::unique_ptr<Codec> make_protobuf_codec();
// text/plain: a Text as its UTF-8 bytes; other payloads are unsupported.
std::unique_ptr<Codec> make_text_codec();

}  // namespace wsb::rest
