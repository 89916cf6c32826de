// Helpers shared by the `.tile` parser/printer unit tests.
#pragma once

#include <string>

#include "ir/Printer.h"
#include "ir/TileParser.h"
#include "ir/Verify.h"

namespace dtsim::tiletest {

// Registers `text` as a source named `name` and parses it as a module.
inline Module parse_text(const std::string& text, const std::string& name = "<test>") {
  return parse_tile(Sources::add(name, text));
}

// Parses a single expression and prints it back.
inline std::string reprint_expr(const std::string& text) {
  return print_expr(parse_tile_expr(Sources::add("<expr>", text)));
}

// The rendered UserError of parsing + binding + verifying `text` with default parameters, or ""
// when it is accepted.
inline std::string error_of(const std::string& text, const std::string& name = "<test>") {
  try {
    Module m = parse_text(text, name);
    verify_module(m, bind_params(m, {}));
  } catch (const UserError& e) {
    return e.render();
  }
  return "";
}

}  // namespace dtsim::tiletest
