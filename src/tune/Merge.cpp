// Reading a `dtsim tune --json` result back and merging the results of shards (Tune.h): a small
// JSON reader (objects, arrays, strings, numbers, true/false/null) with located errors.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

#include "ir/Diag.h"
#include "tune/Tune.h"

namespace dtsim {

namespace {

struct Json {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> arr;
  // An object's members, keys[i] -> vals[i] (two vectors: a pair holding Json would need Json complete).
  std::vector<std::string> keys;
  std::vector<Json> vals;
  int line = 1, col = 1;

  const Json* get(const std::string& k) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return &vals[i];
    return nullptr;
  }
};

class JsonReader {
 public:
  JsonReader(const std::string& text, const std::string& path) : t_(text), path_(path) {}

  Json document() {
    Json v = value();
    space();
    if (i_ < t_.size()) fail("text after the JSON value");
    return v;
  }

  [[noreturn]] void fail(const std::string& what, int line = 0, int col = 0) const {
    throw UserError(path_ + ":" + std::to_string(line ? line : line_) + ":" + std::to_string(line ? col : col_) +
                    ": error: not a dtsim tune JSON result: " + what);
  }

 private:
  void advance() {
    if (t_[i_] == '\n') ++line_, col_ = 1;
    else ++col_;
    ++i_;
  }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) advance();
  }
  void expect(char c) {
    space();
    if (i_ >= t_.size() || t_[i_] != c) fail(std::string("expected '") + c + "'");
    advance();
  }
  bool word(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (t_.compare(i_, n, w) != 0) return false;
    for (size_t k = 0; k < n; ++k) advance();
    return true;
  }

  Json value() {
    space();
    Json v;
    v.line = line_, v.col = col_;
    if (i_ >= t_.size()) fail("unexpected end of the file");
    char c = t_[i_];
    if (c == '{') {
      v.kind = Json::Obj;
      advance();
      space();
      if (i_ < t_.size() && t_[i_] == '}') return advance(), v;
      for (;;) {
        space();
        if (i_ >= t_.size() || t_[i_] != '"') fail("expected a key");
        std::string k = string();
        expect(':');
        Json member = value();
        v.keys.push_back(k);
        v.vals.push_back(std::move(member));
        space();
        if (i_ < t_.size() && t_[i_] == ',') {
          advance();
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::Arr;
      advance();
      space();
      if (i_ < t_.size() && t_[i_] == ']') return advance(), v;
      for (;;) {
        v.arr.push_back(value());
        space();
        if (i_ < t_.size() && t_[i_] == ',') {
          advance();
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::Str;
      v.str = string();
      return v;
    }
    if (word("true")) return v.kind = Json::Bool, v.b = true, v;
    if (word("false")) return v.kind = Json::Bool, v;
    if (word("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      const char* start = t_.c_str() + i_;
      char* end = nullptr;
      v.num = std::strtod(start, &end);
      for (size_t n = static_cast<size_t>(end - start); n > 0; --n) advance();
      v.kind = Json::Num;
      return v;
    }
    fail(std::string("unexpected '") + c + "'");
  }

  std::string string() {
    advance();  // the opening quote
    std::string s;
    for (;;) {
      if (i_ >= t_.size()) fail("a string without its closing quote");
      char c = t_[i_];
      advance();
      if (c == '"') return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (i_ >= t_.size()) fail("a string without its closing quote");
      char e = t_[i_];
      advance();
      if (e == 'n') s += '\n';
      else if (e == 't') s += '\t';
      else if (e == 'r') s += '\r';
      else if (e == 'b') s += '\b';
      else if (e == 'f') s += '\f';
      else if (e == 'u') {
        if (i_ + 4 > t_.size()) fail("a bad \\u escape");
        unsigned cp = static_cast<unsigned>(std::strtoul(t_.substr(i_, 4).c_str(), nullptr, 16));
        for (int k = 0; k < 4; ++k) advance();
        if (cp < 0x80) s += static_cast<char>(cp);
        else if (cp < 0x800) s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
        else s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), s += static_cast<char>(0x80 | (cp & 0x3F));
      } else s += e;
    }
  }

  const std::string& t_;
  std::string path_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
};

// Typed access to the keys of a result, with located errors.
struct Fields {
  const Json& o;
  const JsonReader& rd;
  const Json& need(const std::string& k, Json::Kind kind) const {
    const Json* v = o.get(k);
    if (!v) rd.fail("no key \"" + k + "\"", o.line, o.col);
    if (v->kind != kind && !(kind == Json::Num && v->kind == Json::Null)) rd.fail("\"" + k + "\" has the wrong type", v->line, v->col);
    return *v;
  }
  std::string str(const std::string& k) const { return need(k, Json::Str).str; }
  double num(const std::string& k) const {
    const Json& v = need(k, Json::Num);
    return v.kind == Json::Null ? NAN : v.num;
  }
  uint64_t count(const std::string& k) const {
    double v = num(k);
    if (!(v >= 0) || v != std::floor(v)) rd.fail("\"" + k + "\" is not a count", o.get(k)->line, o.get(k)->col);
    return static_cast<uint64_t>(v);
  }
};

}  // namespace

TuneResult tune_result_from_json(const std::string& text, const std::string& path) {
  JsonReader rd(text, path);
  Json doc = rd.document();
  if (doc.kind != Json::Obj) rd.fail("not an object", doc.line, doc.col);
  Fields f{doc, rd};
  TuneResult r;
  r.file = f.str("file");
  r.sizes = f.str("sizes");
  r.backend = f.str("backend");
  r.device = f.str("device");
  r.space = f.count("space");
  r.configs = f.count("configs");
  r.mode = f.str("mode");
  r.timing = f.str("timing");
  r.seconds = f.num("seconds");
  r.check_seconds = f.num("check_seconds");
  r.timing_seconds = f.num("timing_seconds");
  r.compile_wait_seconds = f.num("compile_wait_seconds");
  r.overlap_seconds = doc.get("overlap_seconds") ? f.num("overlap_seconds") : 0;  // results written before it was reported: 0
  // results written before the checking threads' stages were reported: 0
  r.lower_seconds = doc.get("lower_seconds") ? f.num("lower_seconds") : 0;
  r.interp_seconds = doc.get("interp_seconds") ? f.num("interp_seconds") : 0;
  r.compile_seconds = doc.get("compile_seconds") ? f.num("compile_seconds") : 0;
  r.bytes = static_cast<int64_t>(f.count("bytes"));
  r.flops = f.num("flops");
  if (!std::isfinite(r.flops)) r.flops = 0;
  r.ptx_cache_hits = static_cast<int64_t>(f.count("ptx_cache_hits"));
  r.ptx_cache_misses = static_cast<int64_t>(f.count("ptx_cache_misses"));
  r.seed = f.count("seed");
  r.budget = f.count("budget");
  r.time_s = f.num("time_limit");
  r.rounds = f.count("rounds");
  r.workers = f.count("workers");
  r.worker_seconds = f.num("worker_seconds");
  const Json& shard = f.need("shard", Json::Str);
  size_t slash = shard.str.find('/');
  if (slash == std::string::npos) rd.fail("\"shard\" is not I/N", shard.line, shard.col);
  r.shard = std::strtoull(shard.str.c_str(), nullptr, 10);
  r.shards = std::strtoull(shard.str.c_str() + slash + 1, nullptr, 10);
  if (r.shards == 0 || r.shard >= r.shards) rd.fail("\"shard\" is not I/N with I < N", shard.line, shard.col);
  for (const Json& s : f.need("shards_merged", Json::Arr).arr) {
    if (s.kind != Json::Num) rd.fail("\"shards_merged\" holds a non-number", s.line, s.col);
    r.shards_merged.push_back(static_cast<uint64_t>(s.num));
  }
  if (const Json* g = doc.get("gpu_timed")) {  // results written before it was reported: none
    if (g->kind != Json::Arr) rd.fail("\"gpu_timed\" is not an array", g->line, g->col);
    for (const Json& n : g->arr) {
      if (n.kind != Json::Num) rd.fail("\"gpu_timed\" holds a non-number", n.line, n.col);
      r.gpu_timed.push_back(static_cast<uint64_t>(n.num));
    }
  }
  for (const Json& ref : f.need("references", Json::Arr).arr) {
    if (ref.kind != Json::Obj) rd.fail("a reference is not an object", ref.line, ref.col);
    Fields g{ref, rd};
    r.references.push_back({g.str("name"), g.num("ms")});
  }
  for (const Json& c : f.need("candidates", Json::Arr).arr) {
    if (c.kind != Json::Obj) rd.fail("a candidate is not an object", c.line, c.col);
    Fields g{c, rd};
    TuneCandidate t;
    t.index = g.count("index");
    t.draw = g.count("draw");
    t.status = g.str("status");
    t.phase = g.str("phase");
    double ms = g.num("ms");
    if (std::isfinite(ms)) t.ms = ms;
    t.reason = g.str("reason");
    t.schedule = g.str("schedule");
    r.candidates.push_back(std::move(t));
  }
  return r;
}

TuneResult merge_tune_results(const std::vector<TuneResult>& parts, std::string* note) {
  if (parts.empty()) throw UserError("--merge: no results given");
  const TuneResult& a = parts.front();
  TuneResult r;
  r.file = a.file, r.sizes = a.sizes, r.backend = a.backend, r.space = a.space, r.configs = a.configs;
  r.seed = a.seed, r.budget = a.budget, r.time_s = a.time_s, r.shards = a.shards, r.bytes = a.bytes, r.flops = a.flops;
  r.workers = 0;
  std::set<uint64_t> have;
  std::set<std::string> devices, modes;
  std::vector<std::pair<const TuneResult*, uint64_t>> order;  // (part, its first shard) for the references
  bool timed = false;
  std::string skipped;
  for (const TuneResult& p : parts) {
    auto differs = [&](const std::string& what, const std::string& x, const std::string& y) {
      if (x != y) throw UserError("--merge: the results are not shards of one search: " + what + " '" + x + "' and '" + y + "'");
    };
    differs("file", a.file, p.file);
    differs("sizes", a.sizes, p.sizes);
    differs("backend", a.backend, p.backend);
    differs("space", std::to_string(a.space), std::to_string(p.space));
    differs("seed", std::to_string(a.seed), std::to_string(p.seed));
    differs("budget", std::to_string(a.budget), std::to_string(p.budget));
    differs("time", std::to_string(a.time_s), std::to_string(p.time_s));
    differs("shard count", std::to_string(a.shards), std::to_string(p.shards));
    std::vector<uint64_t> mine = p.shards_merged.empty() ? std::vector<uint64_t>{p.shard} : p.shards_merged;
    for (uint64_t s : mine)
      if (!have.insert(s).second) throw UserError("--merge: shard " + std::to_string(s) + "/" + std::to_string(p.shards) + " is given twice");
    order.push_back({&p, *std::min_element(mine.begin(), mine.end())});
    if (!p.device.empty()) devices.insert(p.device);
    modes.insert(p.mode);
    if (p.timing == "done") timed = true;
    else if (skipped.empty()) skipped = p.timing;
    r.seconds = std::max(r.seconds, p.seconds);
    r.check_seconds += p.check_seconds;
    r.timing_seconds += p.timing_seconds;
    r.compile_wait_seconds += p.compile_wait_seconds;
    r.overlap_seconds += p.overlap_seconds;
    r.lower_seconds += p.lower_seconds;
    r.interp_seconds += p.interp_seconds;
    r.compile_seconds += p.compile_seconds;
    r.ptx_cache_hits += p.ptx_cache_hits;
    r.ptx_cache_misses += p.ptx_cache_misses;
    r.rounds = std::max(r.rounds, p.rounds);
    r.workers += p.workers;
    r.worker_seconds += p.worker_seconds > 0 ? p.worker_seconds : p.seconds;
    r.candidates.insert(r.candidates.end(), p.candidates.begin(), p.candidates.end());
  }
  std::sort(order.begin(), order.end(), [](auto& x, auto& y) { return x.second < y.second; });
  r.references = order.front().first->references;
  for (const auto& [part, first] : order) r.gpu_timed.insert(r.gpu_timed.end(), part->gpu_timed.begin(), part->gpu_timed.end());
  r.shard = *have.begin();
  r.shards_merged.assign(have.begin(), have.end());
  for (const std::string& d : devices) r.device += (r.device.empty() ? "" : ", ") + d;
  r.mode = modes.size() == 1 ? *modes.begin() : "sampled";
  r.timing = timed ? "done" : skipped;
  std::stable_sort(r.candidates.begin(), r.candidates.end(), [](const TuneCandidate& x, const TuneCandidate& y) { return x.draw < y.draw; });
  // Shards that refine around their own fastest may draw the same schedule: it counts once (the
  // first drawn; the same schedule's times differ only by noise).
  std::set<uint64_t> seen;
  size_t before = r.candidates.size();
  r.candidates.erase(std::remove_if(r.candidates.begin(), r.candidates.end(), [&](const TuneCandidate& c) { return !seen.insert(c.index).second; }),
                     r.candidates.end());
  std::vector<std::string> notes;
  if (r.candidates.size() < before)
    notes.push_back(std::to_string(before - r.candidates.size()) + " schedule(s) drawn by more than one shard, counted once");
  if (have.size() < r.shards) {
    std::string missing;
    for (uint64_t s = 0, n = 0; s < r.shards && n < 8; ++s)
      if (!have.count(s)) missing += (missing.empty() ? "" : ", ") + std::to_string(s) + "/" + std::to_string(r.shards), ++n;
    notes.push_back("the merged result holds " + std::to_string(have.size()) + " of " + std::to_string(r.shards) + " shards (missing " + missing +
                    (r.shards - have.size() > 8 ? ", ..." : "") + ")");
  }
  if (note) {
    note->clear();
    for (const std::string& n : notes) *note += (note->empty() ? "" : "; ") + n;
  }
  return r;
}

}  // namespace dtsim
