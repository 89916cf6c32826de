// TTIR text -> a tree of ops (TtirParse.h).
#include "ttir/TtirParse.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace dtsim::ttir {

// ---- Cursor ----

void Cursor::ws() {
  while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
}
bool Cursor::at_end() {
  ws();
  return p_ >= s_.size();
}
bool Cursor::peek(const std::string& t) {
  ws();
  return s_.compare(p_, t.size(), t) == 0;
}
bool Cursor::eat(const std::string& t) {
  if (!peek(t)) return false;
  p_ += t.size();
  return true;
}
void Cursor::expect(const std::string& t) {
  if (!eat(t)) fail("'" + t + "'");
}
[[noreturn]] void Cursor::fail(const std::string& what) {
  std::string near = s_.substr(p_, 40);
  user_error(where_, "malformed TTIR: expected " + what + (near.empty() ? " at the end of the op" : " at '" + near + "'"));
}
static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$'; }
bool Cursor::peek_value() { return peek("%"); }
std::string Cursor::value() {
  ws();
  if (p_ >= s_.size() || s_[p_] != '%') fail("a value (%name)");
  size_t b = ++p_;
  while (p_ < s_.size() && (ident_char(s_[p_]) || s_[p_] == '#' || s_[p_] == '-')) ++p_;
  return s_.substr(b, p_ - b);
}
std::string Cursor::ident() {
  ws();
  size_t b = p_;
  while (p_ < s_.size() && ident_char(s_[p_])) ++p_;
  if (b == p_) fail("a name");
  return s_.substr(b, p_ - b);
}
std::string Cursor::type() {
  ws();
  size_t b = p_;
  int depth = 0;
  while (p_ < s_.size()) {
    char c = s_[p_];
    if (c == '<') ++depth;
    else if (c == '>') {
      if (depth == 0) break;
      --depth;
    } else if (depth == 0 && (c == ',' || c == ')' || c == ' ' || c == '{')) {
      break;
    }
    ++p_;
  }
  if (b == p_) fail("a type");
  return s_.substr(b, p_ - b);
}
std::string Cursor::balanced(char open, char close) {
  ws();
  if (p_ >= s_.size() || s_[p_] != open) fail(std::string("'") + open + "'");
  size_t b = p_;
  int depth = 0;
  bool in_str = false;
  for (; p_ < s_.size(); ++p_) {
    char c = s_[p_];
    if (in_str) {
      if (c == '\\') ++p_;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == open) ++depth;
    else if (c == close && --depth == 0) {
      ++p_;
      return s_.substr(b, p_ - b);
    }
  }
  fail(std::string("a closing '") + close + "'");
}
std::string Cursor::number() {
  ws();
  size_t b = p_;
  while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '-' || s_[p_] == '+' || s_[p_] == '.')) ++p_;
  if (b == p_) fail("a number");
  return s_.substr(b, p_ - b);
}
std::string Cursor::string_lit() {
  ws();
  if (p_ >= s_.size() || s_[p_] != '"') fail("a string");
  size_t b = ++p_;
  while (p_ < s_.size() && s_[p_] != '"') {
    if (s_[p_] == '\\') ++p_;
    ++p_;
  }
  std::string out = s_.substr(b, p_ - b);
  if (p_ < s_.size()) ++p_;
  return out;
}
void Cursor::skip_to(char ch) {
  int depth = 0;
  for (; p_ < s_.size(); ++p_) {
    char c = s_[p_];
    if (depth == 0 && c == ch) return;
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    else if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
  }
}
std::string Cursor::rest() {
  ws();
  std::string r = s_.substr(p_);
  p_ = s_.size();
  return r;
}

TypeText split_type(const std::string& t) {
  TypeText out;
  if (t.rfind("tensor<", 0) != 0) {
    out.elem = t;
    return out;
  }
  std::string in = t.substr(7, t.size() - 8);
  size_t p = 0;
  while (p < in.size() && std::isdigit(static_cast<unsigned char>(in[p]))) {
    size_t b = p;
    while (p < in.size() && std::isdigit(static_cast<unsigned char>(in[p]))) ++p;
    if (p >= in.size() || in[p] != 'x') {  // a number that is the element type's start (cannot be)
      out.ok = false;
      return out;
    }
    out.shape.push_back(std::stoll(in.substr(b, p - b)));
    ++p;
  }
  out.elem = in.substr(p);
  // an encoding attribute (", #blocked") is not printed in TTIR; drop one if present
  if (size_t c = out.elem.find(','); c != std::string::npos && out.elem.find('<') == std::string::npos) out.elem = out.elem.substr(0, c);
  return out;
}

// ---- lines -> ops ----

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Splits a trailing ` loc(...)` off `s` (the op's location) and returns it ("" when absent).
std::string take_loc(std::string& s) {
  size_t p = s.rfind(" loc(");
  if (p == std::string::npos) {
    if (s.rfind("loc(", 0) == 0) p = 0;
    else return "";
  }
  std::string l = trim(s.substr(p));
  if (l.size() < 5 || l.back() != ')') return "";
  s = trim(s.substr(0, p));
  return l.substr(4, l.size() - 5);
}

class Parser {
 public:
  Parser(int src) : src_(src) {
    const std::string& text = Sources::text(src);
    size_t b = 0;
    while (b <= text.size()) {
      size_t e = text.find('\n', b);
      if (e == std::string::npos) e = text.size();
      lines_.push_back(text.substr(b, e - b));
      b = e + 1;
    }
  }

  ParsedModule run() {
    ParsedModule m;
    for (i_ = 0; i_ < lines_.size();) {
      std::string l = trim(lines_[i_]);
      if (l.rfind("#loc", 0) == 0) {
        size_t eq = l.find(" = loc(");
        if (eq != std::string::npos && l.back() == ')') m.locs[l.substr(0, eq)] = l.substr(eq + 7, l.size() - eq - 8);
        ++i_;
        continue;
      }
      if (l.rfind("tt.func", 0) == 0) {
        m.funcs.push_back(parse_op());
        continue;
      }
      ++i_;
    }
    if (m.funcs.empty()) user_error(at(0), "no tt.func in this TTIR text");
    return m;
  }

 private:
  SourceLoc at(size_t line) const { return SourceLoc{src_, static_cast<int>(line + 1), 1}; }

  // The values of hint `key` in an attribute dictionary `dict` (`tt.divisibility = dense<16> :
  // tensor<1xi32>`, `dense<[16, 1]> : tensor<2xi32>`, `16 : i32`); nullopt where it is absent.
  static std::optional<std::vector<int64_t>> hint_values(const std::string& dict, const std::string& key) {
    size_t p = dict.find(key + " = ");
    if (p == std::string::npos) return std::nullopt;
    p += key.size() + 3;
    std::string body;
    if (dict.compare(p, 6, "dense<") == 0) {
      size_t e = dict.find('>', p);
      if (e == std::string::npos) return std::nullopt;
      body = dict.substr(p + 6, e - p - 6);
    } else {
      size_t e = dict.find_first_of(":,}", p);
      body = dict.substr(p, e == std::string::npos ? std::string::npos : e - p);
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < body.size();) {
      if (std::isdigit(static_cast<unsigned char>(body[i])) || body[i] == '-') {
        size_t used = 0;
        try {
          out.push_back(std::stoll(body.substr(i), &used));
        } catch (const std::exception&) {
          return std::nullopt;
        }
        i += std::max<size_t>(used, 1);
      } else {
        ++i;
      }
    }
    if (out.empty()) return std::nullopt;
    return out;
  }

  // The text without the attribute dictionaries of compiler hints (`{tt.divisibility = dense<16> :
  // tensor<2xi32>}`, tt.contiguity, tt.constancy: tl.multiple_of, tl.max_contiguous,
  // tl.max_constancy on a value), which say nothing about what the op computes; the hints go to
  // `hints` (Op::hints).
  static std::string strip_hints(std::string t, std::vector<std::pair<std::string, std::vector<int64_t>>>* hints = nullptr) {
    for (const char* key : {"{tt.divisibility", "{tt.contiguity", "{tt.constancy"}) {
      size_t b;
      while ((b = t.find(key)) != std::string::npos) {
        int depth = 0;
        size_t e = b;
        for (; e < t.size(); ++e) {
          if (t[e] == '{') ++depth;
          else if (t[e] == '}' && --depth == 0) break;
        }
        if (e >= t.size()) return t;
        if (hints) {
          std::string dict = t.substr(b, e + 1 - b);
          for (const char* h : {"tt.divisibility", "tt.contiguity", "tt.constancy"})
            if (auto v = hint_values(dict, h)) hints->emplace_back(h, *v);
        }
        size_t from = b > 0 && t[b - 1] == ' ' ? b - 1 : b;
        t.erase(from, e + 1 - from);
      }
    }
    return t;
  }

  // One op starting at line i_ (its regions included); i_ moves past it.
  Op parse_op() {
    Op op;
    op.text_loc = at(i_);
    std::string l = trim(lines_[i_]);
    ++i_;
    // results
    if (!l.empty() && l[0] == '%') {
      size_t eq = l.find(" = ");
      if (eq == std::string::npos) user_error(op.text_loc, "malformed TTIR: a value list without '='");
      std::string res = l.substr(0, eq);
      l = trim(l.substr(eq + 3));
      size_t b = 0;
      while (b < res.size()) {
        size_t e = res.find(',', b);
        if (e == std::string::npos) e = res.size();
        std::string r = trim(res.substr(b, e - b));
        if (!r.empty() && r[0] == '%') r = r.substr(1);
        size_t colon = r.find(':');
        if (colon != std::string::npos) {
          int n = std::stoi(r.substr(colon + 1));
          std::string base = r.substr(0, colon);
          for (int k = 0; k < n; ++k) op.results.push_back(base + "#" + std::to_string(k));
        } else {
          op.results.push_back(r);
        }
        b = e + 1;
      }
    }
    // name: custom form `dialect.op ...` or generic `"dialect.op"(...)`
    size_t n = 0;
    if (!l.empty() && l[0] == '"') {
      size_t q = l.find('"', 1);
      op.name = l.substr(1, q - 1);
      n = q + 1;
    } else {
      while (n < l.size() && ident_char(l[n])) ++n;
      op.name = l.substr(0, n);
    }
    std::string rest = l.substr(n);
    bool generic_region = rest.size() >= 2 && rest.compare(rest.size() - 2, 2, "({") == 0;
    bool custom_region = !generic_region && !rest.empty() && rest.back() == '{';
    if (!generic_region && !custom_region) {
      op.loc = take_loc(rest);
      op.text = strip_hints(trim(rest), &op.hints);
      return op;
    }
    op.text = trim(rest.substr(0, rest.size() - (generic_region ? 2 : 1)));
    // regions: blocks until a line starting with '}'
    for (;;) {
      op.regions.push_back(parse_region());
      if (i_ >= lines_.size()) user_error(op.text_loc, "malformed TTIR: a region is not closed");
      std::string close = trim(lines_[i_]);
      ++i_;
      std::string after = trim(close.substr(1));  // drop '}'
      if (generic_region && !after.empty() && after[0] == ')') after = trim(after.substr(1));
      if (generic_region && after.rfind(", {", 0) == 0) continue;
      if (!after.empty() && after.back() == '{') {  // "} else {", "} do {"
        continue;
      }
      op.loc = take_loc(after);
      op.trailer = after;
      return op;
    }
  }

  Region parse_region() {
    Region r;
    r.blocks.emplace_back();
    while (i_ < lines_.size()) {
      std::string l = trim(lines_[i_]);
      if (l.empty()) {
        ++i_;
        continue;
      }
      if (l[0] == '}') return r;
      if (l[0] == '^') {  // ^bb0(%a: f32 loc(...), %b: f32 loc(...)):
        Block b;
        size_t le = 1;
        while (le < l.size() && (std::isalnum(static_cast<unsigned char>(l[le])) || l[le] == '_')) ++le;
        b.label = l.substr(1, le - 1);
        size_t p = l[le] == '(' ? le : std::string::npos;
        if (p != std::string::npos) {
          std::string args = l.substr(p);
          Cursor c(args, at(i_));
          c.expect("(");
          while (!c.eat(")")) {
            std::string v = c.value();
            c.expect(":");
            std::string t = c.type();
            if (c.peek("loc(")) {
              c.expect("loc");
              c.balanced('(', ')');
            }
            b.args.push_back(v);
            b.arg_types.push_back(t);
            c.eat(",");
          }
        }
        if (r.blocks.size() == 1 && r.blocks[0].ops.empty() && r.blocks[0].args.empty()) r.blocks[0] = std::move(b);
        else r.blocks.push_back(std::move(b));
        ++i_;
        continue;
      }
      r.blocks.back().ops.push_back(parse_op());
    }
    return r;
  }

  int src_;
  std::vector<std::string> lines_;
  size_t i_ = 0;
};

}  // namespace

ParsedModule parse_ttir(int source_id) { return Parser(source_id).run(); }

PyLoc resolve_loc(const ParsedModule& m, const std::string& body0) {
  PyLoc out;
  std::string body = trim(body0);
  for (int depth = 0; depth < 64 && !body.empty(); ++depth) {
    if (body[0] == '#') {
      auto it = m.locs.find(body);
      if (it == m.locs.end()) return out;
      body = trim(it->second);
      continue;
    }
    if (body.rfind("callsite(", 0) == 0) {  // callsite(#callee at #caller): the callee's position
      size_t at = body.find(" at ");
      body = trim(body.substr(9, (at == std::string::npos ? body.size() - 1 : at) - 9));
      continue;
    }
    if (body.rfind("fused", 0) == 0) {  // fused[#a, #b] / fused<...>[...]: the first
      size_t b = body.find('[');
      if (b == std::string::npos) return out;
      size_t e = body.find_first_of(",]", b);
      body = trim(body.substr(b + 1, e - b - 1));
      continue;
    }
    if (body[0] == '"') {
      size_t q = body.find('"', 1);
      std::string s = body.substr(1, q - 1);
      std::string after = body.substr(q + 1);
      if (!after.empty() && after[0] == '(') {  // a name loc: "name"(child)
        if (out.name.empty()) out.name = s;
        body = trim(after.substr(1, after.size() - 2));
        continue;
      }
      if (!after.empty() && after[0] == ':') {  // "file":line:col
        out.file = s;
        size_t c2 = after.find(':', 1);
        out.line = std::atoi(after.substr(1, c2 - 1).c_str());
        out.col = c2 == std::string::npos ? 0 : std::atoi(after.substr(c2 + 1).c_str());
        return out;
      }
      return out;
    }
    return out;  // unknown
  }
  return out;
}

}  // namespace dtsim::ttir
