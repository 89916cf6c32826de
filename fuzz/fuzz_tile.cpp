// libFuzzer target: the .tile parser, the verifier (default bindings) and the printer. A UserError is
// the expected answer to a bad input; anything else escaping (InternalError, a crash, a sanitizer
// report) is a finding.
#include "fuzz/FuzzUtil.h"
#include "ir/Printer.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"

using namespace dtsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzSource src(data, size, "<fuzz>.tile");
  try {
    Module m = parse_tile(src.id);
    std::string printed = print_module(m);
    Bindings b = bind_params(m, {});
    verify_module(m, b);
  } catch (const UserError&) {
  }
  return 0;
}
