// The `.tile` text form: parser. Grammar and semantics are in docs/tile-language.md.
#pragma once

#include <string>

#include "ir/IR.h"

namespace dtsim {

// Parses a registered source text (Sources::add / Sources::load) holding one or more kernels.
// Throws UserError with the location of the first syntax error. The result is not yet verified.
Module parse_tile(int file_id);
Module parse_tile_file(const std::string& path);

// Parses a single expression in `.tile` syntax (debugger `print EXPR`, `--break-if` conditions).
// Also accepts `&&`, `||` and `!` (logical and/or/not). Throws UserError pointing into the text.
ExprP parse_tile_expr(int file_id);

}  // namespace dtsim
