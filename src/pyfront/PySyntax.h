// The whole-file syntax check of a `.py` file, as Python 3.11's own parser (ast.parse) makes it:
// tokens (indentation with tabs and spaces, strings, numbers, brackets), every statement and
// expression of the language (not only the kernel subset), assignment and deletion targets,
// parameter and argument order, f-string fields. The .py reader runs it before reading kernels, so
// a file Python rejects is rejected here, located, whatever part of it is wrong; which constructs
// a kernel may use is the subset parser's and the lowering's business, for the launched kernel and
// what it calls only.
#pragma once

namespace dtsim::py {

// Throws UserError at the first syntax error of registered source `file` (Sources).
void check_python_syntax(int file);

}  // namespace dtsim::py
