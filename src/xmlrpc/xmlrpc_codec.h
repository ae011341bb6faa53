#pragma once
#include <memory>
#include "common/codec.h"
namespace wsb::xmlrpc {
std::unique_ptr<Codec> make_xmlrpc_codec();
}  // namespace wsb::xmlrpc
