// SOAP codecs via gSOAP (schema and operations: wsbench_service.h).
#pragma once

#include <memory>

#include "common/codec.h"
#include "common/rpc_binding.h"

namespace wsb::soap {

// SOAP 1.1 document/literal getResponse envelope, binaries inline as base64.
std::unique_ptr<Codec> make_soap_codec();

// The soap codec writing as gSOAP does with chunked output
// (SOAP_IO_CHUNK): no counting pass over the message, which the default
// output (every codec here) makes for the HTTP Content-Length. Its bytes
// are the HTTP chunked body carrying the same envelope, and it reads such
// bodies (the bench's encode-chunked/soap rows).
std::unique_ptr<Codec> make_soap_chunked_codec();
// The same envelope as the root of an MTOM/XOP multipart/related package,
// binaries as raw MIME parts.
std::unique_ptr<Codec> make_soap_mtom_codec();
// The same envelope as the root of a SOAP with Attachments multipart/related
// package, binaries as MIME parts referenced by href="cid:...".
std::unique_ptr<Codec> make_soap_swa_codec();

// Their RPC bindings (soap_rpc.cpp): the gsoap stack's call and reply
// envelopes, MTOM packages for soap-mtom, SwA packages for soap-swa.
std::unique_ptr<RpcBinding> make_soap_rpc();
std::unique_ptr<RpcBinding> make_soap_mtom_rpc();
std::unique_ptr<RpcBinding> make_soap_swa_rpc();

}  // namespace wsb::soap
