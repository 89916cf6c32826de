// The `\N{NAME}` lookup (see UnicodeNames.h), over the table gen_unicode_names.py writes: the stored
// names sorted and front-coded in buckets (a binary search over the buckets' whole first names, then
// at most one bucket decoded), CJK unified ideographs and Hangul syllables computed as CPython does.
#include "pyfront/UnicodeNames.h"

#include <cctype>
#include <cstring>
#include <iterator>
#include <string>

#ifdef DTSIM_UNICODE_NAMES
#include "unicode_names.inc"
#endif

namespace dtsim::py {

namespace {

// Every character name and alias is words of A-Z and 0-9 joined by single spaces or hyphens.
bool well_formed(std::string_view nm) {
  bool ok = !nm.empty() && nm.front() != ' ' && nm.back() != ' ' && nm.find("  ") == std::string_view::npos;
  for (char c : nm) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '-');
  return ok;
}

#ifdef DTSIM_UNICODE_NAMES
using namespace uninames;

// CJK UNIFIED IDEOGRAPH-XXXX: four or five upper-case hex digits naming a unified ideograph.
bool cjk(std::string_view hex) {
  if (hex.size() != 4 && hex.size() != 5) return false;
  unsigned v = 0;
  for (char c : hex) {
    if (c >= '0' && c <= '9') v = v * 16 + static_cast<unsigned>(c - '0');
    else if (c >= 'A' && c <= 'F') v = v * 16 + static_cast<unsigned>(c - 'A' + 10);
    else return false;
  }
  for (const auto& r : kCjk)
    if (v >= r[0] && v <= r[1]) return true;
  return false;
}

// The longest of `parts` that `s` starts with (CPython's reading of a syllable, part by part).
size_t jamo(std::string_view s, const char* const* parts, size_t n, bool& found) {
  size_t best = 0;
  found = false;
  for (size_t i = 0; i < n; ++i) {
    size_t len = std::strlen(parts[i]);
    if ((!found || len > best) && s.substr(0, len) == parts[i]) {
      best = len;
      found = true;
    }
  }
  return best;
}

bool hangul(std::string_view s) {
  bool l, v, t;
  s.remove_prefix(jamo(s, kJamoL, std::size(kJamoL), l));
  s.remove_prefix(jamo(s, kJamoV, std::size(kJamoV), v));
  s.remove_prefix(jamo(s, kJamoT, std::size(kJamoT), t));
  return l && v && t && s.empty();
}

// The bucket's first name (stored whole) at kNames[at].
std::string_view head(unsigned at) {
  return std::string_view(kNames + at + 2, static_cast<unsigned char>(kNames[at + 1]));
}

bool stored(const std::string& up) {
  // The last bucket whose first name is <= up.
  size_t lo = 0, hi = std::size(kBucketAt);
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (head(kBucketAt[mid]) <= up) lo = mid;
    else hi = mid;
  }
  unsigned at = kBucketAt[lo];
  unsigned end = lo + 1 < std::size(kBucketAt) ? kBucketAt[lo + 1] : static_cast<unsigned>(sizeof kNames - 1);
  std::string cur;
  while (at < end) {
    size_t keep = static_cast<unsigned char>(kNames[at]), len = static_cast<unsigned char>(kNames[at + 1]);
    cur.resize(keep);
    cur.append(kNames + at + 2, len);
    if (cur == up) return true;
    if (cur > up) return false;
    at += 2 + static_cast<unsigned>(len);
  }
  return false;
}
#endif

}  // namespace

bool unicode_name_accepted(std::string_view name) {
#ifdef DTSIM_UNICODE_NAMES
  // As CPython's lookup: the computed names first (their prefixes matched in upper case only, and a
  // name with such a prefix is not looked up further), then the stored ones without regard to case.
  constexpr std::string_view kCjkPrefix = "CJK UNIFIED IDEOGRAPH-", kHangulPrefix = "HANGUL SYLLABLE ";
  if (name.substr(0, kCjkPrefix.size()) == kCjkPrefix) return cjk(name.substr(kCjkPrefix.size()));
  if (name.substr(0, kHangulPrefix.size()) == kHangulPrefix) return hangul(name.substr(kHangulPrefix.size()));
  std::string up(name);
  for (char& c : up)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  if (stored(up)) return true;
  return !kAliases && well_formed(name);
#else
  return well_formed(name);
#endif
}

const char* unicode_names_source() {
#ifdef DTSIM_UNICODE_NAMES
  return kAliases ? kSource : nullptr;
#else
  return nullptr;
#endif
}

}  // namespace dtsim::py
