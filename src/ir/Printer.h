// The `.tile` text form: printer. Output is stable and parses back to the same text
// (print(parse(print(m))) == print(m)).
#pragma once

#include <string>

#include "ir/IR.h"

namespace dtsim {

std::string print_module(const Module& m);
std::string print_kernel(const Kernel& k);
std::string print_stmt(const Stmt& s, int indent = 0);  // one statement (a block prints its body too)
std::string print_expr(const ExprP& e);                 // minimal parentheses
// Shortest decimal form that reads back as the same double, always with a "." or exponent
// ("nan", "inf", "-inf" for the non-finite values).
std::string format_float_literal(double v);

}  // namespace dtsim
