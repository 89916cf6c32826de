// Helpers for the interpreter unit tests: parse, verify and run `.tile` text in-process.
#pragma once

#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "interp/Interp.h"
#include "ir/TileParser.h"

namespace dtsim::test {

struct TileRun {
  Module m;
  Bindings b;
  Buffers bufs;
  RunReport rep;
  std::string out;  // print() output

  double at(const std::string& buf, int64_t i) const { return bufs.find(buf)->get(i); }
  bool has(Finding::Kind k) const {
    for (const Finding& f : rep.findings)
      if (f.kind == k) return true;
    return false;
  }
  std::string messages() const {
    std::string s;
    for (const Finding& f : rep.findings) s += f.message;
    return s;
  }
};

inline std::unique_ptr<TileRun> run_tile(const std::string& name, const std::string& src, InterpOptions opt = {},
                                         const std::map<std::string, std::string>& args = {}, uint64_t seed = 1) {
  auto r = std::make_unique<TileRun>();
  r->m = parse_tile(Sources::add(name, src));
  r->b = bind_params(r->m, args);
  verify_module(r->m, r->b);
  r->bufs = make_buffers(r->m, r->b, seed);
  std::ostringstream os;
  opt.out = &os;
  r->rep = run_module(r->m, r->b, r->bufs, opt);
  r->out = os.str();
  return r;
}

inline std::unique_ptr<TileRun> run_file(const std::string& path, InterpOptions opt = {}) {
  auto r = std::make_unique<TileRun>();
  r->m = parse_tile_file(path);
  r->b = bind_params(r->m, {});
  verify_module(r->m, r->b);
  r->bufs = make_buffers(r->m, r->b, 1);
  std::ostringstream os;
  opt.out = &os;
  r->rep = run_module(r->m, r->b, r->bufs, opt);
  r->out = os.str();
  return r;
}

// Evaluates a tile expression of 8 lanes (`r` = arange(0, 8) is in scope) into an 8-element
// buffer of type `dtype` and returns the buffer's values.
inline std::vector<double> eval8(const std::string& expr, const std::string& dtype = "i32") {
  std::string src = "kernel t(out z: *" + dtype + "[8]) grid(1) {\n  r = arange(0, 8)\n  v = " + expr +
                    "\n  store(z + r, v)\n}\n";
  auto run = run_tile("<eval8>", src);
  std::vector<double> out;
  for (int i = 0; i < 8; ++i) out.push_back(run->at("z", i));
  return out;
}

}  // namespace dtsim::test
