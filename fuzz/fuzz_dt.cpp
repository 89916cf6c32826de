// libFuzzer target: the DT parser and checks, the lowering to tile IR, and the verification of what
// the lowering produced. UserError is the expected answer to a bad program; anything else is a finding.
#include "frontend/DT.h"
#include "fuzz/FuzzUtil.h"
#include "ir/Printer.h"
#include "ir/Verify.h"

using namespace dtsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzSource src(data, size, "<fuzz>.dt");
  try {
    std::shared_ptr<DtProgram> p = parse_dt(src.id);
    std::string ast = print_dt_ast(*p);
    Module m = lower_dt(*p);
    Bindings b = bind_params(m, {});
    verify_module(m, b);
    std::string tile = print_module(m);
  } catch (const UserError&) {
  }
  return 0;
}
