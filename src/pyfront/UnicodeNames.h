// The names a `\N{NAME}` escape in a Python string accepts, as Python's parser decides: looked up in
// a table generated at build time from python3's unicodedata (src/pyfront/gen_unicode_names.py);
// a build without python3 has no table and checks a name's form only (docs/triton.md).
#pragma once

#include <string_view>

namespace dtsim::py {

// Whether `\N{name}` is a valid escape (name is what stands between the braces): a character name
// or name alias, in any case (the CJK UNIFIED IDEOGRAPH-XXXX and HANGUL SYLLABLE names as CPython
// spells them: upper case), not a named sequence. Without the table (or without its aliases), every
// well-formed name is accepted: words of letters and digits joined by single spaces or hyphens.
bool unicode_name_accepted(std::string_view name);

// "Python X.Y.Z, Unicode A.B.C" for the table this build has; nullptr when the check is the form's only.
const char* unicode_names_source();

}  // namespace dtsim::py
