// One checker per shared run option (see RunOptions.h).
#include "interp/RunOptions.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace dtsim {

namespace {

bool parse_int(const std::string& v, int64_t lo, int64_t hi, int64_t& out) {
  if (v.empty() || v[0] == ' ' || v[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || x < lo || x > hi) return false;
  out = x;
  return true;
}

std::string int_range(int64_t lo, int64_t hi, const std::string& v) {
  return "expects an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'";
}

}  // namespace

std::string set_run_option(RunSettings& s, const std::string& raw_name, const std::string& v) {
  std::string name = raw_name;
  for (char& c : name)
    if (c == '_') c = '-';
  if (name == "sanitize") {
    if (v == "none") s.sanitize = Sanitize::None;
    else if (v == "bounds") s.sanitize = Sanitize::Bounds;
    else if (v == "conflicts") s.sanitize = Sanitize::Conflicts;
    else if (v == "all") s.sanitize = Sanitize::All;
    else return "expects none, bounds, conflicts or all, got '" + v + "'";
    return "";
  }
  if (name == "threads") {
    int64_t x = 0;
    if (!parse_int(v, 1, kMaxThreads, x)) return int_range(1, kMaxThreads, v);
    s.threads = static_cast<int>(x);
    return "";
  }
  if (name == "order") {
    if (v == "sequential") s.order = Order::Sequential;
    else if (v == "reverse") s.order = Order::Reverse;
    else if (v.rfind("shuffle:", 0) == 0) {
      int64_t seed = 0;
      if (!parse_int(v.substr(8), 0, INT64_MAX, seed))
        return "expects shuffle:SEED with SEED an integer in [0, " + std::to_string(INT64_MAX) + "], got '" + v + "'";
      s.order = Order::Shuffle;
      s.shuffle_seed = static_cast<uint64_t>(seed);
    } else {
      return "expects sequential, reverse or shuffle:SEED, got '" + v + "'";
    }
    return "";
  }
  if (name == "keep-going") {
    if (v == "" || v == "1" || v == "true" || v == "True") s.keep_going = true;
    else if (v == "0" || v == "false" || v == "False") s.keep_going = false;
    else return "expects true or false, got '" + v + "'";
    return "";
  }
  if (name == "equal-stores") {
    if (v == "warn") s.equal_stores_conflict = false;
    else if (v == "conflict") s.equal_stores_conflict = true;
    else return "expects warn or conflict, got '" + v + "'";
    return "";
  }
  if (name == "max-steps") {
    int64_t x = 0;
    if (!parse_int(v, 1, INT64_MAX, x)) return int_range(1, INT64_MAX, v);
    s.max_steps = x;
    return "";
  }
  if (name == "timeout") {
    errno = 0;
    char* end = nullptr;
    double t = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno == ERANGE || !(t > 0) || t > 1e9)
      return "expects a number of seconds > 0, got '" + v + "'";
    s.timeout_s = t;
    return "";
  }
  if (name == "backend") {
    if (v == "interp" || v == "interpreter") s.backend = "interp";
    else if (v == "cuda") s.backend = "cuda";
    else return "expects interp or cuda, got '" + v + "'";
    return "";
  }
  return "is not a run option";
}

}  // namespace dtsim
