// Shared by the fuzz targets: an input as a registered source that is dropped again afterwards, so
// that millions of iterations do not grow the source registry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/Diag.h"

namespace dtsim::fuzz {

struct FuzzSource {
  int id;
  FuzzSource(const uint8_t* data, size_t size, const char* name)
      : id(Sources::add(name, std::string(reinterpret_cast<const char*>(data), size))) {}
  ~FuzzSource() { Sources::drop_from(id); }
};

}  // namespace dtsim::fuzz
