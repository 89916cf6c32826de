// libFuzzer target: the interpreter and its sanitizer on programs that parse and verify, on tiny
// grids with small buffers: at most 64 program instances per kernel, 4096 elements per buffer and
// per tile, 2000 statements per instance (--max-steps). Findings and runtime faults are answers; a crash, a
// sanitizer report from ASan/UBSan or an escaping exception other than UserError is a finding.
#include "fuzz/FuzzUtil.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"

using namespace dtsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzSource src(data, size, "<fuzz>.tile");
  try {
    Module m = parse_tile(src.id);
    Bindings b = bind_params(m, {});
    verify_module(m, b);
    if (!fuzz::small_enough(m, b)) return 0;
    // Both execution forms: they must agree bit for bit on the buffers and on the findings.
    std::vector<Buffers> results;
    std::vector<int64_t> counts;
    for (int fast = 0; fast < 2; ++fast) {
      Buffers bufs;
      counts.push_back(fuzz::run_small(m, b, fast == 1, bufs));
      results.push_back(std::move(bufs));
    }
    if (counts[0] != counts[1]) __builtin_trap();
    for (size_t i = 0; i < results[0].list.size(); ++i)
      if (results[0].list[i].bytes != results[1].list[i].bytes) __builtin_trap();
  } catch (const UserError&) {
  }
  return 0;
}
