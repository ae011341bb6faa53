#pragma once
#include <memory>
#include "common/codec.h"
namespace wsb::soap {
std::unique_ptr<Codec> make_soap_codec();
std::unique_ptr<Codec> make_soap_mtom_codec();
}  // namespace wsb::soap
