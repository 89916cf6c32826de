// Helpers shared by the CUDA backend's unit tests: a source file of the tree read whole, one
// replacement in a kernel's text (the text must hold it), how often a plan or PTX holds a string,
// and a .tile text compiled to its plan, NVVM module and PTX.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cuda_backend/Cuda.h"
#include "cuda_backend/NvvmEmitter.h"
#include "ir/Diag.h"
#include "ir/TileParser.h"

namespace dtsim::test {

// The file at `path` below the source tree (e.g. "tests/gpu/tma_matmul.tile").
inline std::string source_file(const std::string& path) {
  std::ifstream in(std::string(DTSIM_SOURCE_DIR) + "/" + path);
  REQUIRE(in.is_open());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `s` with its first `from` replaced by `to`.
inline std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The number of (possibly overlapping) occurrences of `what` in `text`.
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Compiled {
  std::string plan, ptx;
  NvvmModule nm;
};

// The .tile text `src` (named `name` in its diagnostics), parsed, bound, verified and compiled with `opt`.
inline Compiled compile_tile(const std::string& name, const std::string& src, const CudaOptions& opt) {
  Module m = parse_tile(Sources::add(name, src));
  Bindings b = bind_params(m, {});
  verify_module(m, b);
  Compiled c;
  c.plan = emit_plan(m, b, opt);
  c.nm = emit_nvvm_module(m, b, opt);
  c.ptx = compile_ptx(c.nm.ir, opt);
  return c;
}

}  // namespace dtsim::test
