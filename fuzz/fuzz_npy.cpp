// libFuzzer target: the .npy reader (header parser, dtypes, shapes, data size), as `--in` uses it,
// for each element type a parameter may ask for. UserError is the expected answer to a bad file.
#include <optional>

#include "host/Npy.h"
#include "ir/Diag.h"

using namespace dtsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  for (std::optional<Scalar> want : {std::optional<Scalar>{}, std::optional<Scalar>{Scalar::BF16}, std::optional<Scalar>{Scalar::I1},
                                     std::optional<Scalar>{Scalar::I8}, std::optional<Scalar>{Scalar::I16}, std::optional<Scalar>{Scalar::F8E4M3}}) {
    try {
      Buffer b = parse_npy(bytes, "<fuzz>.npy", "x", want);
      if (static_cast<int64_t>(b.bytes.size()) != b.numel() * scalar_bytes(b.dtype)) __builtin_trap();
    } catch (const UserError&) {
    }
  }
  return 0;
}
