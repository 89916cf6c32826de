// The pass list (Driver.h): each stage in turn, by the frontend table's row for the file's kind, and
// the common `verify`. Read top to bottom, compile_more is the whole compiler.
#include "driver/Driver.h"

#include "driver/Frontends.h"
#include "interp/Interp.h"
#include "ir/Printer.h"
#include "ir/Undefined.h"

namespace dtsim {

namespace {

struct StageName {
  Stage stage;
  const char* name;
};
constexpr StageName kStageNames[] = {{Stage::Parse, "parse"},   {Stage::Check, "check"}, {Stage::BindSizes, "bind-sizes"},
                                     {Stage::Schedule, "schedule"}, {Stage::Lower, "lower"}, {Stage::Verify, "verify"}};

// The --arg entries that bind the module's parameters at verify: every one a frontend has not
// consumed already (.dt sizes lowered in, .py specializations).
std::map<std::string, std::string> remaining_args(const Program& p, const std::map<std::string, std::string>& args) {
  std::map<std::string, std::string> rest;
  for (const auto& [k, v] : args)
    if (!p.size_args.count(k)) rest[k] = v;
  return rest;
}

}  // namespace

const char* stage_name(Stage s) {
  for (const StageName& n : kStageNames)
    if (n.stage == s) return n.name;
  return "?";
}

std::optional<Stage> stage_named(const std::string& name) {
  for (const StageName& n : kStageNames)
    if (name == n.name) return n.stage;
  return std::nullopt;
}

std::string stage_list() {
  std::string out;
  for (const StageName& n : kStageNames) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

void bind_parameters(Program& p, const LaunchSpec& spec) {
  p.bindings = bind_params(p.module, remaining_args(p, spec.args));
  p.bound = true;
}

// ---- the pass list ----

void compile_more(Program& p, const LaunchSpec& spec, Stage last) {
  const Frontend& fe = frontend(p.kind);
  for (Stage s : kStages) {
    if (p.done && *p.done >= s) continue;
    if (s > last) break;
    switch (s) {
      case Stage::Parse:      // source text -> syntax tree (.dt) or tile IR (.tile)
      case Stage::Check:      // names, ranks, element types (.dt)
      case Stage::BindSizes:  // the run's sizes: --arg, the --in shapes (.dt); parameters (.tile)
      case Stage::Schedule:   // schedule calls resolved into kernels and loop nests (.dt)
      case Stage::Lower:      // -> tile IR (.dt, .py: the partial evaluator, TTIR)
        if (StageFn fn = fe.stage[static_cast<size_t>(s)].run) fn(p, spec);
        break;
      case Stage::Verify:     // every parameter bound, the module type-checked and annotated
        if (!p.bound) bind_parameters(p, spec);
        verify_module(p.module, p.bindings);
        // the sanitizer's undefined-lanes checks, built from the IR's ops on the verified module
        if (spec.undefined_lanes && track_undefined_lanes(p.module)) verify_module(p.module, p.bindings);
        break;
    }
    if (s == Stage::Lower && p.module.file.empty()) p.module.file = p.path;
    p.done = s;
  }
}

Program compile(const Source& src, const LaunchSpec& spec, Stage last) {
  Program p;
  p.path = src.path;
  p.kind = src.kind ? *src.kind : kind_for_path(src.path);
  p.text = src.text;
  compile_more(p, spec, last);
  return p;
}

Program compile_scheduled(const std::string& path, std::shared_ptr<DtProgram> scheduled, const std::map<std::string, std::string>& args) {
  Program p;
  p.path = path;
  p.kind = FileKind::Dt;
  p.dt = std::move(scheduled);
  p.done = Stage::Schedule;
  LaunchSpec spec;
  spec.args = args;
  compile_more(p, spec);
  return p;
}

Program compile_module(const std::string& path, Module m, const std::map<std::string, std::string>& args) {
  Program p;
  p.path = path;
  p.kind = FileKind::Tile;
  p.module = std::move(m);
  p.done = Stage::Lower;
  LaunchSpec spec;
  spec.args = args;
  compile_more(p, spec);
  return p;
}

Module single_kernel(const Module& m, size_t i, const Bindings& b) {
  Module one;
  one.file = m.file;
  one.kernels.push_back(clone_kernel(m.kernels[i]));
  verify_module(one, b);
  return one;
}

Program Program::clone() const {
  Program q = *this;
  q.module = clone_module(module);
  return q;
}

// ---- dumps ----

std::string dump_program(const Program& p) {
  const Frontend& fe = frontend(p.kind);
  std::string out;
  // The stages this language has not got, up to p.done, each named once.
  for (Stage s : kStages) {
    if (!p.done || s > *p.done) break;
    const FrontendStage& st = fe.stage[static_cast<size_t>(s)];
    if (s != Stage::Verify && !st.run) out += std::string("# ") + fe.name + ": no '" + stage_name(s) + "' stage: " + st.none + "\n";
  }
  if (!p.done) return out;
  bool lowered = *p.done >= Stage::Lower;
  if (!lowered && fe.dump_before_lowering) return out + fe.dump_before_lowering(p);
  if (p.bound) {
    out += "# bound:";
    for (const auto& [name, v] : p.bindings) out += " " + name + "=" + v.str();
    out += "\n";
  }
  if (*p.done == Stage::Verify) {
    out += "# verified";
    for (const Kernel& k : p.module.kernels) {
      std::array<int64_t, 3> g = launch_grid(k, p.bindings);
      out += "; " + k.name + " grid (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) + ")";
    }
    out += "\n";
  }
  return out + print_module(p.module);
}

}  // namespace dtsim
