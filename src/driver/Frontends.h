// The frontend table: one row per language the driver compiles, with the functions of the stages
// that language has (Driver.h lists the pass list). Adding a frontend is one row in Frontends.cpp.
#pragma once

#include <string>

#include "driver/Driver.h"

namespace dtsim {

using StageFn = void (*)(Program&, const LaunchSpec&);

// One stage of a frontend: the function that runs it, or nullptr with why the language has none.
struct FrontendStage {
  StageFn run = nullptr;
  const char* none = "";
};

struct Frontend {
  FileKind kind;
  const char* name;       // "tile", "dt", "py", "ttir" (dumps, messages)
  const char* extension;  // ".tile", ".dt", ".py"; "" for a kind never chosen by extension (TTIR text)
  // Indexed by Stage: parse, check, bind-sizes, schedule, lower, verify (verify is the driver's own,
  // the same for every row; its entry stays empty).
  FrontendStage stage[6];
  // The program before it is lowered, for dumps (nullptr: nothing exists before `lower`).
  std::string (*dump_before_lowering)(const Program&);
};

// The row of `kind`.
const Frontend& frontend(FileKind kind);

// Binds the module's parameters from the --arg entries the frontend has not consumed (bind_params).
void bind_parameters(Program& p, const LaunchSpec& spec);

}  // namespace dtsim
