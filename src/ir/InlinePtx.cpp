// Inline PTX as tile IR (InlinePtx.h). A register is a tile of bits: a 16- or 32-bit register an
// i32 tile (a 16-bit one in its low half), a 64-bit one an i64 tile, a predicate an i1 tile. Each
// instruction's result is bound to a variable, so the IR stays a sequence of small expressions.
#include "ir/InlinePtx.h"

#include "ir/Fma.h"

#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "ir/Diag.h"

namespace dtsim {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split_top(const std::string& s, char sep) {  // not inside braces
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char ch : s) {
    if (ch == '{') ++depth;
    if (ch == '}') --depth;
    if (ch == sep && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

int elem_bits(Scalar s) {
  switch (s) {
    case Scalar::I8: case Scalar::F8E4M3: case Scalar::F8E5M2: case Scalar::F8E4B15: case Scalar::F8E4B8: case Scalar::F8E5B16: return 8;
    case Scalar::I16: case Scalar::F16: case Scalar::BF16: return 16;
    case Scalar::I32: case Scalar::F32: return 32;
    case Scalar::I64: case Scalar::F64: return 64;
    default: return 0;
  }
}

struct Reg {
  Reg(ExprP value = nullptr, int w = 32) : v(std::move(value)), width(w) {}
  ExprP v;        // null until written
  int width = 32; // 16, 32, 64; 1: a predicate
  // Where the register holds a written value: everywhere (`full`), or only where one of the guards
  // in `under` holds ("p#2" / "!p#2": predicate p as its second setp left it). A guarded write
  // keeps the old value where its guard is false; before any write that old value is 0 (PTX leaves
  // it undefined), which no lane may read: a read outside `under`, or an output not `full` at the
  // end, is an error. Writes under both p and !p of one predicate value make it full.
  bool full = true;
  std::set<std::string> under;
  int version = 0;  // a predicate: how many times it was set
};

class Lowering {
 public:
  Lowering(std::string text, SourceLoc loc, const BindFn& bind, std::vector<StmtP>* effects)
      : text_(std::move(text)), loc_(loc), bind_(bind), effects_(effects) {}

  [[noreturn]] void fail(const std::string& what) {
    std::string q = trim(text_);
    for (char& ch : q)
      if (ch == '\n' || ch == '\t') ch = ' ';
    std::string one;
    for (char ch : q)
      if (!(ch == ' ' && !one.empty() && one.back() == ' ')) one += ch;
    if (one.size() > 160) one = one.substr(0, 157) + "...";
    user_error(loc_, "inline asm '" + one + "': " + what);
  }

  std::vector<ExprP> run(const std::string& constraints, int pack, const std::vector<PtxOperand>& args, const std::vector<Scalar>& results,
                         const Shape& shape) {
    if (pack < 1) fail("pack must be at least 1");
    shape_ = shape;
    pack_ = pack;
    // constraints: one letter per register, outputs ("=r") first
    std::vector<std::string> cons = split_top(constraints, ',');
    std::vector<char> out_c, in_c;
    for (const std::string& c0 : cons) {
      std::string c = trim(c0);
      if (c.rfind("=", 0) == 0) {
        if (!in_c.empty()) fail("output constraint '" + c + "' after an input");
        c = c.substr(1);
        if (c.size() != 1 || std::string("rhlfd").find(c[0]) == std::string::npos) fail("constraint '=" + c + "' is not supported (r, h, l, f, d)");
        out_c.push_back(c[0]);
      } else {
        if (c.size() != 1 || std::string("rhlfd").find(c[0]) == std::string::npos) fail("constraint '" + c + "' is not supported (r, h, l, f, d)");
        in_c.push_back(c[0]);
      }
    }
    if (pack > 1 && (shape.empty() || shape.back() % pack != 0))
      fail("pack=" + std::to_string(pack) + " needs a last dimension that is a multiple of it");
    // registers per value: `per` elements of `bits` share a register of the constraint's width
    int n = 0;
    auto layout = [&](Scalar elem, char c, const char* what) {
      int bits = elem_bits(elem), width = c == 'h' ? 16 : (c == 'l' || c == 'd') ? 64 : 32;
      if (bits == 0) fail(std::string(what) + " element type " + scalar_name(elem) + " cannot be held in a register");
      int per = std::max(1, std::min(pack, width / bits));
      if (bits > width || pack % per != 0) fail(std::string(what) + " of " + std::to_string(pack) + " x " + scalar_name(elem) + " does not fit '" + c + "' registers");
      return std::pair{per, width};
    };
    size_t ci = 0;
    std::vector<std::vector<std::string>> out_regs(results.size());
    std::vector<std::pair<int, int>> out_lay;
    for (size_t r = 0; r < results.size(); ++r) {
      if (ci >= out_c.size()) fail("fewer output constraints than the results' registers");
      auto [per, width] = layout(results[r], out_c[ci], "a result");
      out_lay.push_back({per, width});
      for (int j = 0; j < pack / per; ++j, ++ci) {
        if (ci >= out_c.size()) fail("fewer output constraints than the results' registers");
        out_regs[r].push_back("$" + std::to_string(n));
        regs_["$" + std::to_string(n++)] = Reg{nullptr, width};
      }
    }
    if (ci != out_c.size()) fail("more output constraints than the results' registers");
    ci = 0;
    for (const PtxOperand& a : args) {
      if (ci >= in_c.size()) fail("fewer input constraints than the operands' registers");
      auto [per, width] = layout(a.elem, in_c[ci], "an operand");
      std::vector<ExprP> packed = pack_bits(a, per, width);
      for (ExprP& p : packed) {
        if (ci >= in_c.size()) fail("fewer input constraints than the operands' registers");
        ++ci;
        std::string name = "$" + std::to_string(n++);
        regs_[name] = Reg{hold("in", p), width};
      }
    }
    if (ci != in_c.size()) fail("more input constraints than the operands' registers");
    exec_all();
    std::vector<ExprP> out;
    for (size_t r = 0; r < results.size(); ++r) {
      std::vector<ExprP> rv;
      for (const std::string& name : out_regs[r]) {
        if (!regs_[name].v && only_barriers_) regs_[name].v = k(0, out_lay[r].second == 64 ? Scalar::I64 : Scalar::I32);  // `bar.sync 0;`'s result
        if (!regs_[name].v) fail("it never writes " + name);
        if (!regs_[name].full) fail("it writes " + name + " only under " + guards_text(regs_[name]) + ", so it is undefined where " + (regs_[name].under.size() > 1 ? "none of those holds" : "that predicate does not hold"));
        rv.push_back(cp(regs_[name].v));
      }
      out.push_back(unpack_bits(rv, results[r], out_lay[r].first, out_lay[r].second));
    }
    return out;
  }

 private:
  std::string text_;
  SourceLoc loc_;
  const BindFn& bind_;
  Shape shape_;
  int pack_ = 1;
  std::map<std::string, Reg> regs_;
  std::string inst_;  // the instruction being lowered (for messages)
  std::string guard_lit_;  // the instruction's guard as Reg::under spells it ("" when unguarded)
  bool only_barriers_ = true;  // no instruction but bar.sync / barrier / trap (their outputs read 0)
  std::vector<StmtP>* effects_;  // where `trap`'s assert goes (lower_inline_ptx); null: trap refused

  // ---- IR helpers ----
  static ExprP cp(const ExprP& e) { return clone_expr(e); }
  ExprP k(int64_t v, Scalar t = Scalar::I32) { return int_of(t == Scalar::I32 ? static_cast<int32_t>(v) : v, t, loc_); }
  ExprP fc(double v, Scalar t) {  // a float literal of type t (not a weak one, which would be an f32 first)
    ExprP c = make_const_float(v, loc_);
    c->weak = false;
    c->dtype = t;
    return c;
  }
  ExprP bin(BinOp o, ExprP a, ExprP b) { return make_binary(o, std::move(a), std::move(b), loc_); }
  ExprP un(UnOp o, ExprP a) { return make_unary(o, std::move(a), loc_); }
  ExprP where(ExprP c, ExprP a, ExprP b) { return make_where(std::move(c), std::move(a), std::move(b), loc_); }
  ExprP cast(ExprP a, Scalar t) { return make_cast(std::move(a), t, loc_); }
  ExprP bitcast(ExprP a, Scalar t) { return make_bitcast(std::move(a), t, loc_); }
  ExprP hold(const std::string& base, ExprP e) { return bind_("asm_" + base, std::move(e)); }
  std::vector<ExprP> dims(const Shape& s) {
    std::vector<ExprP> d;
    for (int64_t x : s) d.push_back(make_const_int(x, loc_));
    return d;
  }
  ExprP to_shape(ExprP e, const Shape& s) { return s.empty() ? e : make_broadcast(std::move(e), dims(s), loc_); }

  // The shape of one register tile: the op's shape with its last dimension divided by pack.
  Shape reg_shape() const {
    Shape s = shape_;
    if (pack_ > 1) s.back() /= pack_;
    return s;
  }

  // An element tile's bits, zero-extended into `rt` (i32 or i64).
  ExprP zext_bits(ExprP x, Scalar elem, Scalar rt) {
    int bits = elem_bits(elem);
    ExprP b = bitcast(std::move(x), int_of_bits(bits));
    if (bits == 64) return b;
    b = cast(std::move(b), rt);
    return bin(BinOp::And, std::move(b), k((int64_t{1} << bits) - 1, rt));
  }

  // The registers of one operand: `per` elements each, pack / per of them.
  std::vector<ExprP> pack_bits(const PtxOperand& a, int per, int width) {
    const Scalar rt = width == 64 ? Scalar::I64 : Scalar::I32;
    const int bits = elem_bits(a.elem);
    ExprP x = zext_bits(to_shape(a.value, shape_), a.elem, rt);
    if (pack_ == 1) return {x};
    const int nreg = pack_ / per;
    Shape s = reg_shape();
    Shape split = s;
    split.push_back(nreg);
    split.push_back(per);
    ExprP t = make_reshape(std::move(x), dims(split), loc_);  // [.., N / pack, nreg, per]
    if (per > 1) {
      ExprP shift = bin(BinOp::Mul, cast(make_arange(make_const_int(0, loc_), make_const_int(per, loc_), loc_), rt), k(bits, rt));
      t = make_reduce(RedOp::Sum, bin(BinOp::Shl, std::move(t), std::move(shift)), static_cast<int>(split.size()) - 1, loc_);  // disjoint bits
    } else {
      t = make_reshape(std::move(t), dims([&] {
                         Shape r = s;
                         r.push_back(nreg);
                         return r;
                       }()),
                       loc_);
    }
    ExprP all = hold("pack", std::move(t));  // [.., N / pack, nreg]
    std::vector<ExprP> out;
    const int axis = static_cast<int>(s.size());
    for (int j = 0; j < nreg; ++j) {
      if (nreg == 1) {
        out.push_back(make_reshape(cp(all), dims(s), loc_));
        break;
      }
      ExprP pick = bin(BinOp::Eq, make_arange(make_const_int(0, loc_), make_const_int(nreg, loc_), loc_), k(j));
      out.push_back(make_reduce(RedOp::Sum, where(std::move(pick), cp(all), k(0, rt)), axis, loc_));
    }
    return out;
  }

  // A result's elements from its registers (the inverse of pack_bits).
  ExprP unpack_bits(const std::vector<ExprP>& rv, Scalar elem, int per, int width) {
    const Scalar rt = width == 64 ? Scalar::I64 : Scalar::I32;
    const int bits = elem_bits(elem);
    auto narrow = [&](ExprP b) {  // the low `bits` of b, as `elem`
      if (bits == 64) return bitcast(std::move(b), elem);
      return bitcast(cast(std::move(b), int_of_bits(bits)), elem);
    };
    if (pack_ == 1) return narrow(cp(rv[0]));
    const int nreg = static_cast<int>(rv.size());
    Shape s = reg_shape();
    const int axis = static_cast<int>(s.size());
    ExprP t;  // [.., N / pack, nreg]
    for (int j = 0; j < nreg; ++j) {
      ExprP e = make_expand_dims(cp(rv[j]), axis, loc_);
      if (nreg > 1) {
        ExprP pick = bin(BinOp::Eq, make_arange(make_const_int(0, loc_), make_const_int(nreg, loc_), loc_), k(j));
        e = where(std::move(pick), std::move(e), k(0, rt));
      }
      t = t ? bin(BinOp::Add, std::move(t), std::move(e)) : std::move(e);
    }
    t = make_expand_dims(std::move(t), axis + 1, loc_);  // [.., N / pack, nreg, 1]
    if (per > 1) {
      ExprP shift = bin(BinOp::Mul, cast(make_arange(make_const_int(0, loc_), make_const_int(per, loc_), loc_), rt), k(bits, rt));
      t = bin(BinOp::And, bin(BinOp::Shr, std::move(t), std::move(shift)), k((int64_t{1} << bits) - 1, rt));
    }
    return narrow(make_reshape(std::move(t), dims(shape_), loc_));
  }

  // ---- the instructions ----
  void exec_all() {
    // comments end at a newline; statements end at ';'; braces only group
    std::string body;
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_.compare(i, 2, "//") == 0) {
        while (i < text_.size() && text_[i] != '\n') ++i;
        body += ' ';
        continue;
      }
      char ch = text_[i];
      body += (ch == '\n' || ch == '\t' || ch == '\r') ? ' ' : ch;
    }
    std::string cur;
    int depth = 0;
    std::vector<std::string> stmts;
    for (char ch : body) {  // a `{a, b}` vector operand keeps its braces; a block's braces are dropped
      if (ch == '{') {
        if (trim(cur).empty() || trim(cur).back() == ';') {
          cur.clear();
          continue;  // opens a block
        }
        ++depth;
      }
      if (ch == '}') {
        if (depth == 0) continue;  // closes a block
        --depth;
      }
      if (ch == ';' && depth == 0) {
        stmts.push_back(trim(cur));
        cur.clear();
        continue;
      }
      cur += ch;
    }
    if (!trim(cur).empty()) fail("'" + trim(cur) + "' has no ';'");
    for (const std::string& s : stmts)
      if (!s.empty()) exec(s);
  }

  void declare(const std::string& s) {  // .reg .b32 a, b<4>;
    std::string rest = trim(s.substr(4));
    size_t sp = rest.find(' ');
    if (sp == std::string::npos) fail("'" + s + "' declares no register");
    std::string ty = rest.substr(0, sp);
    int width = ty == ".pred" ? 1 : (ty == ".b8" || ty == ".u8" || ty == ".s8") ? 8 : (ty == ".b16" || ty == ".u16" || ty == ".s16" || ty == ".f16" || ty == ".bf16") ? 16
              : (ty == ".b64" || ty == ".u64" || ty == ".s64" || ty == ".f64") ? 64
              : (ty == ".b32" || ty == ".u32" || ty == ".s32" || ty == ".f32" || ty == ".f16x2" || ty == ".bf16x2") ? 32 : 0;
    if (width == 0) fail("register type '" + ty + "' is not supported");
    for (const std::string& n0 : split_top(rest.substr(sp + 1), ',')) {
      std::string n = trim(n0);
      size_t lt = n.find('<');
      if (lt != std::string::npos && n.back() == '>') {  // b<7>: b0 .. b6
        int cnt = std::atoi(n.substr(lt + 1).c_str());
        for (int i = 0; i < cnt; ++i) regs_[n.substr(0, lt) + std::to_string(i)] = Reg{nullptr, width};
      } else {
        regs_[n] = Reg{nullptr, width};
      }
    }
  }

  Reg& reg(const std::string& name) {
    auto it = regs_.find(name);
    if (it == regs_.end() && name.size() > 1 && name[0] == '%') {
      // Special registers: the machine's clocks and SM ids (tl.extra.cuda.globaltimer(), smid()),
      // read once per block, and the instance's ids, which are program_id / num_programs.
      if (std::optional<MachineReg> m = parse_machine_reg(name.substr(1))) {
        const bool wide = machine_reg_type(*m) == Scalar::I64;
        return regs_[name] = Reg{hold(name.substr(1), make_machine(*m, loc_)), wide ? 64 : 32};
      }
      for (int ax = 0; ax < 3; ++ax) {
        const std::string sfx = std::string(".") + "xyz"[ax];
        if (name == "%ctaid" + sfx) return regs_[name] = Reg{make_program_id(ax, loc_), 32};
        if (name == "%nctaid" + sfx) return regs_[name] = Reg{make_num_programs(ax, loc_), 32};
      }
      static const char* threads[] = {"%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%lanemask", "%clusterid", "%nclusterid",
                                      "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster"};
      for (const char* sp : threads)
        if (name.rfind(sp, 0) == 0)
          fail("'" + inst_ + "' reads the special register '" + name + "', a thread's or cluster's position, which tile semantics do not have (an element of a tile has no thread)");
      static const char* others[] = {"%gridid", "%dynamic_smem_size", "%total_smem_size", "%pm", "%envreg", "%reserved_smem"};
      for (const char* sp : others)
        if (name.rfind(sp, 0) == 0) fail("'" + inst_ + "' reads the special register '" + name + "', which dtsim does not model");
    }
    if (it == regs_.end()) fail("'" + inst_ + "' names '" + name + "', which is no operand or declared register");
    return it->second;
  }

  // An integer immediate (decimal, 0x, 0b, negative), if `s` is one.
  static std::optional<int64_t> int_imm(const std::string& s) {
    if (s.empty()) return std::nullopt;
    size_t i = s[0] == '-' ? 1 : 0;
    int base = 10;
    if (s.compare(i, 2, "0x") == 0 || s.compare(i, 2, "0X") == 0) base = 16, i += 2;
    else if (s.compare(i, 2, "0b") == 0 || s.compare(i, 2, "0B") == 0) base = 2, i += 2;
    if (i >= s.size()) return std::nullopt;
    uint64_t v = 0;
    for (size_t j = i; j < s.size(); ++j) {
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[j])));
      int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : 99;
      if (j + 1 == s.size() && c == 'u') break;  // 4U
      if (d >= base) return std::nullopt;
      v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    return s[0] == '-' ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  // An operand's bits as a register value of `width` (a register, or an immediate; `fl`: a float
  // instruction's, whose decimal immediates are values, 0fXXXXXXXX bits).
  ExprP read(const std::string& s, int width, char fl = 0) {
    Scalar rt = width == 64 ? Scalar::I64 : Scalar::I32;
    if (s.empty()) fail("'" + inst_ + "' misses an operand");
    if (s[0] == '$' || std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == '%') {
      Reg& r = reg(s);
      if (!r.v) fail("'" + inst_ + "' reads " + s + " before anything writes it");
      if (r.width == 1) fail("'" + inst_ + "' reads predicate " + s + " as a value");
      if (!r.full && !r.under.count(guard_lit_))
        fail("'" + inst_ + "' reads " + s + (guard_lit_.empty() ? "" : " under @" + lit_text(guard_lit_)) + ", which is written only under " + guards_text(r) +
             " before it (undefined elsewhere)");
      ExprP v = cp(r.v);
      if (r.width == 64 && width < 64) v = cast(bin(BinOp::And, std::move(v), k(0xFFFFFFFFll, Scalar::I64)), Scalar::I32);
      else if (r.width < 64 && width == 64) v = bin(BinOp::And, cast(std::move(v), Scalar::I64), k(0xFFFFFFFFll, Scalar::I64));
      if (width < 32 && r.width > width) v = bin(BinOp::And, std::move(v), k((int64_t{1} << width) - 1));
      return v;
    }
    if ((s.size() == 10 && (s.rfind("0f", 0) == 0 || s.rfind("0F", 0) == 0)) || (s.size() == 18 && (s.rfind("0d", 0) == 0 || s.rfind("0D", 0) == 0))) {
      uint64_t b = std::stoull(s.substr(2), nullptr, 16);
      return k(static_cast<int64_t>(b), rt);
    }
    if (fl) {
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (end && *end == 0) {
        if (fl == 'd') return k(std::bit_cast<int64_t>(d), Scalar::I64);
        if (fl == 'h' || fl == 'b') {  // a 16-bit float's bits
          float f = static_cast<float>(d);
          uint32_t u = std::bit_cast<uint32_t>(f);
          if (fl == 'b') return k((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
          fail("'" + inst_ + "': f16 immediates are not supported (write the bits)");
        }
        return k(std::bit_cast<uint32_t>(static_cast<float>(d)), rt);
      }
    }
    if (auto v = int_imm(s)) return k(width < 32 ? (*v & ((int64_t{1} << width) - 1)) : *v, rt);
    fail("'" + inst_ + "': operand '" + s + "' is not supported");
  }

  void write(const std::string& d, ExprP v, const ExprP& guard) {
    Reg& r = reg(d);
    if (r.width == 1) fail("'" + inst_ + "' writes predicate " + d + " as a value");
    if (r.width < 32) v = bin(BinOp::And, std::move(v), k((int64_t{1} << r.width) - 1));
    if (guard) {
      if (!r.v) {  // the first write: undefined (0) where the guard does not hold
        r.v = k(0, r.width == 64 ? Scalar::I64 : Scalar::I32);
        r.full = false;
        r.under.clear();
      }
      v = where(cp(guard), std::move(v), cp(r.v));
      if (!r.full) {
        r.under.insert(guard_lit_);
        std::string other = guard_lit_[0] == '!' ? guard_lit_.substr(1) : "!" + guard_lit_;
        if (r.under.count(other)) r.full = true, r.under.clear();
      }
    } else {
      r.full = true;
      r.under.clear();
    }
    r.v = hold(d[0] == '$' ? "out" : d, std::move(v));
  }
  // "!p#2" -> "!p", or "!p (p as its setp 2 of 3 left it)" where p is set more than once
  std::string lit_text(const std::string& lit) {
    size_t h = lit.find('#');
    std::string g = lit.substr(0, h), name = g[0] == '!' ? g.substr(1) : g;
    auto it = regs_.find(name);
    if (it == regs_.end() || it->second.version < 2) return g;
    return g + " (" + name + " as its setp " + lit.substr(h + 1) + " of " + std::to_string(it->second.version) + " left it)";
  }
  std::string guards_text(const Reg& r) {
    std::string t;
    for (const std::string& g : r.under) t += (t.empty() ? "@" : " or @") + lit_text(g);
    return t;
  }

  // f32 <-> bits; 16-bit floats (in an i32's low half) <-> f32 or f64 values
  ExprP f32(ExprP bits) { return bitcast(std::move(bits), Scalar::F32); }
  ExprP f64(ExprP bits) { return bitcast(std::move(bits), Scalar::F64); }
  ExprP bits32(ExprP f) { return bitcast(cast(std::move(f), Scalar::F32), Scalar::I32); }
  ExprP bits64(ExprP f) { return bitcast(cast(std::move(f), Scalar::F64), Scalar::I64); }
  ExprP half_value(ExprP bits16, Scalar h) {  // -> f32 (exact)
    if (h == Scalar::BF16) return f32(bin(BinOp::Shl, std::move(bits16), k(16)));
    return cast(bitcast(cast(std::move(bits16), Scalar::I16), Scalar::F16), Scalar::F32);
  }
  ExprP half_bits(ExprP value, Scalar h) {  // rounded to nearest even
    return bin(BinOp::And, cast(bitcast(cast(std::move(value), h), Scalar::I16), Scalar::I32), k(0xFFFF));
  }
  ExprP fp8_bits(ExprP value, Scalar f8) {  // .satfinite: clamped to the largest finite value first
    double mx = f8 == Scalar::F8E4M3 ? 448.0 : 57344.0;
    ExprP v = hold("v", cast(std::move(value), Scalar::F32));
    ExprP lim = fc(mx, Scalar::F32);
    ExprP c = where(bin(BinOp::Gt, cp(v), cp(lim)), cp(lim), where(bin(BinOp::Lt, cp(v), fc(-mx, Scalar::F32)), fc(-mx, Scalar::F32), cp(v)));
    return bin(BinOp::And, cast(bitcast(cast(std::move(c), f8), Scalar::I8), Scalar::I32), k(0xFF));
  }
  ExprP lo16(ExprP r) { return bin(BinOp::And, std::move(r), k(0xFFFF)); }
  ExprP hi16(ExprP r) { return bin(BinOp::And, bin(BinOp::Shr, std::move(r), k(16)), k(0xFFFF)); }
  ExprP join16(ExprP hi, ExprP lo) { return bin(BinOp::Or, bin(BinOp::Shl, std::move(hi), k(16)), std::move(lo)); }
  ExprP lshr(ExprP a, ExprP s, Scalar rt) { return unsigned_binary(UnsignedOp::Shr, std::move(a), std::move(s), rt, loc_, bind_); }

  // the IR value of a float register of type t ("f32", "f64")
  ExprP fval(const std::string& s, const std::string& t) { return t == "f64" ? f64(read(s, 64, 'd')) : f32(read(s, 32, 'f')); }
  ExprP fbits(ExprP v, const std::string& t) { return t == "f64" ? bits64(std::move(v)) : bits32(std::move(v)); }

  void exec(const std::string& s0) {
    inst_ = s0;
    std::string s = s0;
    if (s.rfind(".reg", 0) == 0) return declare(s);
    ExprP guard;
    guard_lit_.clear();
    if (s[0] == '@') {  // @p / @!p: the instruction where the predicate holds
      size_t sp = s.find(' ');
      if (sp == std::string::npos) fail("'" + s + "' has no instruction after its predicate");
      std::string p = s.substr(1, sp - 1);
      bool neg = !p.empty() && p[0] == '!';
      Reg& pr = reg(neg ? p.substr(1) : p);
      if (pr.width != 1 || !pr.v) fail("'" + s + "': " + p + " is no predicate set before");
      guard = neg ? un(UnOp::Not, cp(pr.v)) : cp(pr.v);
      guard_lit_ = p + "#" + std::to_string(pr.version);
      s = trim(s.substr(sp + 1));
    }
    size_t sp = s.find(' ');
    std::string opc = sp == std::string::npos ? s : s.substr(0, sp);
    if (!opc.empty() && opc.back() == ':') fail("labels and branches ('" + opc + "') are not supported yet");
    std::vector<std::string> ops = sp == std::string::npos ? std::vector<std::string>{} : split_top(s.substr(sp + 1), ',');
    std::vector<std::string> p;  // opcode parts
    for (size_t a = 0, b; a <= opc.size(); a = b + 1) {
      b = opc.find('.', a);
      if (b == std::string::npos) b = opc.size();
      p.push_back(opc.substr(a, b - a));
    }
    const std::string& op = p[0];
    const std::string ty = p.size() > 1 ? p.back() : "";
    auto has = [&](const char* m) {
      for (size_t i = 1; i < p.size(); ++i)
        if (p[i] == m) return true;
      return false;
    };
    auto need = [&](size_t n) {
      if (ops.size() != n) fail("'" + s + "' needs " + std::to_string(n) + " operands");
    };
    auto unsupported = [&]() -> void { fail("'" + opc + "' is not supported yet (docs/triton.md lists the instructions dtsim runs)"); };
    const bool i32 = ty == "b32" || ty == "u32" || ty == "s32";
    const bool i64 = ty == "b64" || ty == "u64" || ty == "s64";
    const bool i16 = ty == "b16" || ty == "u16" || ty == "s16";
    const int w = i64 ? 64 : i16 ? 16 : 32;
    const Scalar rt = i64 ? Scalar::I64 : Scalar::I32;
    if (op == "bar" || op == "barrier") return;  // one instance's statements already run in order
    if (op == "trap") {  // the launch aborts where it runs: an assert that fails wherever the guard holds
      if (!effects_) unsupported();
      need(0);
      auto a = std::make_shared<Stmt>();
      a->kind = StmtKind::Assert;
      a->loc = loc_;
      a->text = "inline PTX '" + s + "' executed (on the GPU the launch aborts here)";
      a->args = {guard ? un(UnOp::Not, cp(guard)) : make_const_bool(false, loc_)};
      effects_->push_back(std::move(a));
      return;  // registers it leaves unwritten read 0, as after a barrier: no instance goes on past it
    }
    only_barriers_ = false;
    if ((op == "max" || op == "min") && has("NaN") && has("xorsign") && has("abs") && ty == "f32") {
      // the larger (smaller) magnitude with the XOR of the signs; the canonical NaN where either is
      // NaN. Magnitudes compare as the integers of their bits without the sign (exact for non-NaN).
      need(3);
      ExprP a = hold("a", read(ops[1], 32, 'f')), b = hold("b", read(ops[2], 32, 'f'));
      ExprP ua = hold("ua", bin(BinOp::And, cp(a), k(0x7fffffff))), ub = hold("ub", bin(BinOp::And, cp(b), k(0x7fffffff)));
      ExprP nan = bin(BinOp::Or, bin(BinOp::Gt, cp(ua), k(0x7f800000)), bin(BinOp::Gt, cp(ub), k(0x7f800000)));
      ExprP mag = where(bin(op == "max" ? BinOp::Gt : BinOp::Lt, cp(ua), cp(ub)), cp(ua), cp(ub));
      ExprP sign = bin(BinOp::And, bin(BinOp::Xor, cp(a), cp(b)), k(INT32_MIN));
      return write(ops[0], where(std::move(nan), k(0x7fffffff), bin(BinOp::Or, std::move(mag), std::move(sign))), guard);
    }
    if (op == "mov") {
      need(2);
      // vector forms: mov.b32 {a, b}, x (16-bit halves) or {a, b, c, d} (bytes), mov.b16 {a, b}, x
      // (bytes), and back; the first part is the low one
      const int vw = ty == "b32" ? 32 : ty == "b16" ? 16 : ty == "b64" ? 64 : 0;
      const Scalar vt = vw == 64 ? Scalar::I64 : Scalar::I32;
      auto vector = [&](const std::string& braced) {  // the parts of `{a, b, ...}` and their width
        auto parts = split_top(braced.substr(1, braced.size() - 2), ',');
        const int n = static_cast<int>(parts.size());
        if (vw == 0 || (n != 2 && n != 4) || vw / n < 8) unsupported();
        return std::pair{parts, vw / n};
      };
      if (ops[0][0] == '{') {
        auto [parts, pw] = vector(ops[0]);
        const int n = static_cast<int>(parts.size());
        ExprP x = hold("x", read(ops[1], vw));
        for (int i = 0; i < n; ++i) {
          ExprP part = i ? lshr(cp(x), k(i * pw, vt), vt) : cp(x);
          if (pw < 64) part = bin(BinOp::And, std::move(part), k(pw == 32 ? 0xFFFFFFFFll : (int64_t{1} << pw) - 1, vt));
          if (vt == Scalar::I64 && pw <= 32) part = cast(std::move(part), Scalar::I32);
          write(parts[static_cast<size_t>(i)], std::move(part), guard);
        }
        return;
      }
      if (ops[1][0] == '{') {
        auto [parts, pw] = vector(ops[1]);
        const int n = static_cast<int>(parts.size());
        ExprP r;
        for (int i = 0; i < n; ++i) {
          ExprP part = read(parts[static_cast<size_t>(i)], pw);
          if (vt == Scalar::I64 && pw <= 32) part = bin(BinOp::And, cast(std::move(part), Scalar::I64), k(0xFFFFFFFFll, Scalar::I64));
          part = i ? bin(BinOp::Shl, std::move(part), k(i * pw, vt)) : std::move(part);
          r = r ? bin(BinOp::Or, std::move(r), std::move(part)) : std::move(part);
        }
        return write(ops[0], std::move(r), guard);
      }
      if (!(i32 || i64 || i16 || ty == "f32" || ty == "f64")) unsupported();
      return write(ops[0], read(ops[1], ty == "f64" ? 64 : w, ty[0] == 'f' ? ty[1] == '6' ? 'd' : 'f' : 0), guard);
    }
    if ((op == "and" || op == "or" || op == "xor") && (i32 || i64 || i16 || ty == "pred")) {
      need(3);
      if (ty == "pred") fail("'" + s + "': predicate logic is not supported yet");
      BinOp b = op == "and" ? BinOp::And : op == "or" ? BinOp::Or : BinOp::Xor;
      return write(ops[0], bin(b, read(ops[1], w), read(ops[2], w)), guard);
    }
    if (op == "not" && (i32 || i64 || i16)) {
      need(2);
      return write(ops[0], un(UnOp::Not, read(ops[1], w)), guard);
    }
    if (op == "lop3" && ty == "b32") {
      need(5);
      auto lut = int_imm(ops[4]);
      if (!lut) fail("'" + s + "': the lookup table must be an immediate");
      ExprP a = hold("a", read(ops[1], 32)), b = hold("b", read(ops[2], 32)), c = hold("c", read(ops[3], 32));
      ExprP r = k(0);
      for (int m = 0; m < 8; ++m) {
        if (!((*lut >> m) & 1)) continue;
        auto lit = [&](const ExprP& x, bool on) { return on ? cp(x) : un(UnOp::Not, cp(x)); };
        r = bin(BinOp::Or, std::move(r), bin(BinOp::And, bin(BinOp::And, lit(a, m & 4), lit(b, m & 2)), lit(c, m & 1)));
      }
      return write(ops[0], std::move(r), guard);
    }
    if ((op == "shl" || op == "shr") && (i32 || i64 || i16)) {
      need(3);
      ExprP a = read(ops[1], w);
      ExprP n = hold("n", read(ops[2], 32));
      if (w == 64) n = cast(std::move(n), Scalar::I64);
      // PTX clamps the shift count: at or past the width a left or logical shift gives 0, an
      // arithmetic one the sign
      ExprP big = bin(BinOp::Ne, bin(BinOp::And, cp(n), k(~int64_t(w - 1), rt)), k(0, rt));
      ExprP amt = bin(BinOp::And, cp(n), k(w - 1, rt));
      if (op == "shl") return write(ops[0], where(std::move(big), k(0, rt), bin(BinOp::Shl, std::move(a), std::move(amt))), guard);
      if (ty[0] == 's') {
        if (w == 16) a = cast(cast(std::move(a), Scalar::I16), Scalar::I32);
        return write(ops[0], bin(BinOp::Shr, std::move(a), where(std::move(big), k(w - 1, rt), std::move(amt))), guard);
      }
      return write(ops[0], where(std::move(big), k(0, rt), lshr(std::move(a), std::move(amt), rt)), guard);
    }
    if ((op == "add" || op == "sub") && (i32 || i64 || i16) && p.size() == 2) {
      need(3);
      return write(ops[0], bin(op == "add" ? BinOp::Add : BinOp::Sub, read(ops[1], w), read(ops[2], w)), guard);
    }
    if ((op == "mul" || op == "mad") && has("lo") && (i32 || i64)) {
      need(op == "mul" ? 3 : 4);
      ExprP r = bin(BinOp::Mul, read(ops[1], w), read(ops[2], w));
      if (op == "mad") r = bin(BinOp::Add, std::move(r), read(ops[3], w));
      return write(ops[0], std::move(r), guard);
    }
    if (op == "mul" && has("hi") && (ty == "u32" || ty == "s32")) {
      need(3);
      ExprP a = read(ops[1], 32), b = read(ops[2], 32);
      if (ty == "u32") return write(ops[0], unsigned_binary(UnsignedOp::MulHi, std::move(a), std::move(b), Scalar::I32, loc_, bind_), guard);
      ExprP p = bin(BinOp::Mul, cast(std::move(a), Scalar::I64), cast(std::move(b), Scalar::I64));
      return write(ops[0], cast(bin(BinOp::Shr, std::move(p), k(32, Scalar::I64)), Scalar::I32), guard);
    }
    if ((op == "add" || op == "sub") && has("sat") && ty == "s32") {
      need(3);
      ExprP r = hold("wide", bin(op == "add" ? BinOp::Add : BinOp::Sub, cast(read(ops[1], 32), Scalar::I64), cast(read(ops[2], 32), Scalar::I64)));
      ExprP c = where(bin(BinOp::Gt, cp(r), k(INT32_MAX, Scalar::I64)), k(INT32_MAX, Scalar::I64),
                      where(bin(BinOp::Lt, cp(r), k(INT32_MIN, Scalar::I64)), k(INT32_MIN, Scalar::I64), cp(r)));
      return write(ops[0], cast(std::move(c), Scalar::I32), guard);
    }
    if ((op == "popc" || op == "brev" || op == "clz") && ty == "b32") {
      need(2);
      ExprP x = hold("x", read(ops[1], 32));
      auto sh = [&](const ExprP& v, int n, int64_t mask) { return bin(BinOp::And, bin(BinOp::Shr, cp(v), k(n)), k(mask)); };
      if (op == "popc") {
        ExprP v = hold("v", bin(BinOp::Sub, cp(x), sh(x, 1, 0x55555555)));
        v = hold("v", bin(BinOp::Add, bin(BinOp::And, cp(v), k(0x33333333)), sh(v, 2, 0x33333333)));
        v = hold("v", bin(BinOp::And, bin(BinOp::Add, cp(v), bin(BinOp::Shr, cp(v), k(4))), k(0x0F0F0F0F)));
        return write(ops[0], bin(BinOp::Shr, bin(BinOp::Mul, cp(v), k(0x01010101)), k(24)), guard);
      }
      if (op == "brev") {
        ExprP v = x;
        for (auto [n, m] : {std::pair{1, 0x55555555ll}, {2, 0x33333333ll}, {4, 0x0F0F0F0Fll}, {8, 0x00FF00FFll}})
          v = hold("v", bin(BinOp::Or, sh(v, n, m), bin(BinOp::Shl, bin(BinOp::And, cp(v), k(m)), k(n))));
        return write(ops[0], bin(BinOp::Or, sh(v, 16, 0xFFFF), bin(BinOp::Shl, cp(v), k(16))), guard);
      }
      // clz: a binary search, the leading zeros counted in halves, quarters, ...
      ExprP v = x, n = k(0);
      for (int b : {16, 8, 4, 2, 1}) {
        ExprP top = bin(BinOp::Eq, sh(v, 32 - b, (int64_t{1} << b) - 1), k(0));  // the top b bits all zero
        ExprP t = hold("top", std::move(top));
        n = hold("n", bin(BinOp::Add, std::move(n), where(cp(t), k(b), k(0))));
        v = hold("v", where(cp(t), bin(BinOp::Shl, cp(v), k(b)), cp(v)));
      }
      return write(ops[0], bin(BinOp::Add, std::move(n), where(bin(BinOp::Eq, cp(v), k(0)), k(1), k(0))), guard);
    }
    if (op == "fns" && ty == "b32") {
      // fns.b32 d, mask, base, offset: the position of the |offset|-th set bit of mask counted from
      // bit `base` (itself included) toward the top for offset > 0, toward bit 0 for offset < 0;
      // offset 0: base itself where that bit is set; 0xffffffff where there is none. Unrolled over
      // the 32 positions in each direction, a running count of the set bits met.
      need(4);
      ExprP m = hold("mask", read(ops[1], 32)), b = hold("base", read(ops[2], 32)), o = hold("offset", read(ops[3], 32));
      auto scan = [&](bool up) {
        ExprP want = hold("want", up ? cp(o) : un(UnOp::Neg, cp(o)));
        ExprP cnt = k(0), d = k(-1);
        for (int i = 0; i < 32; ++i) {
          const int pos = up ? i : 31 - i;
          ExprP bit = bin(BinOp::And, lshr(cp(m), k(pos), Scalar::I32), k(1));
          ExprP on = hold("on", where(bin(up ? BinOp::Ge : BinOp::Le, k(pos), cp(b)), std::move(bit), k(0)));
          cnt = hold("count", bin(BinOp::Add, std::move(cnt), cp(on)));
          d = hold("found", where(bin(BinOp::And, bin(BinOp::Ne, cp(on), k(0)), bin(BinOp::Eq, cp(cnt), cp(want))), k(pos), std::move(d)));
        }
        return d;
      };
      ExprP up = scan(true), down = scan(false);
      ExprP at = where(bin(BinOp::Ne, bin(BinOp::And, lshr(cp(m), cp(b), Scalar::I32), k(1)), k(0)), cp(b), k(-1));
      return write(ops[0], where(bin(BinOp::Eq, cp(o), k(0)), std::move(at), where(bin(BinOp::Gt, cp(o), k(0)), std::move(up), std::move(down))), guard);
    }
    if (op == "copysign" && (ty == "f32" || ty == "f64")) {  // copysign d, a, b: b's magnitude with a's sign
      need(3);
      const int ww = ty == "f64" ? 64 : 32;
      const Scalar vt = ww == 64 ? Scalar::I64 : Scalar::I32;
      const int64_t sign = ww == 64 ? INT64_MIN : INT32_MIN;
      ExprP a = read(ops[1], ww, ty == "f64" ? 'd' : 'f'), b = read(ops[2], ww, ty == "f64" ? 'd' : 'f');
      return write(ops[0], bin(BinOp::Or, bin(BinOp::And, std::move(a), k(sign, vt)), bin(BinOp::And, std::move(b), k(~sign, vt))), guard);
    }
    if ((op == "max" || op == "min") && has("NaN") && !has("xorsign") && ty == "f32") {  // NaN where either is NaN
      need(3);
      ExprP a = hold("a", f32(read(ops[1], 32, 'f'))), b = hold("b", f32(read(ops[2], 32, 'f')));
      ExprP nan = bin(BinOp::Or, bin(BinOp::Ne, cp(a), cp(a)), bin(BinOp::Ne, cp(b), cp(b)));
      ExprP pick = op == "max" ? bin(BinOp::Gt, cp(a), cp(b)) : bin(BinOp::Lt, cp(a), cp(b));
      return write(ops[0], where(std::move(nan), k(0x7fffffff), bits32(where(std::move(pick), cp(a), cp(b)))), guard);
    }
    if ((op == "min" || op == "max") && (i32 || i64)) {
      need(3);
      ExprP a = hold("a", read(ops[1], w)), b = hold("b", read(ops[2], w));
      if (ty[0] == 'u') return write(ops[0], unsigned_binary(op == "min" ? UnsignedOp::Min : UnsignedOp::Max, std::move(a), std::move(b), rt, loc_, bind_), guard);
      ExprP lt = bin(BinOp::Lt, cp(a), cp(b));
      return write(ops[0], op == "min" ? where(std::move(lt), cp(a), cp(b)) : where(std::move(lt), cp(b), cp(a)), guard);
    }
    if (op == "bfe" && (ty == "u32" || ty == "s32")) {
      need(4);
      auto pos = int_imm(ops[2]), len = int_imm(ops[3]);
      if (!pos || !len || *pos < 0 || *len < 0 || *pos > 31 || *len > 32) fail("'" + s + "': position and length must be immediates in range");
      ExprP a = read(ops[1], 32);
      if (*len == 0) return write(ops[0], k(0), guard);
      int64_t top = std::min<int64_t>(*pos + *len, 32);
      if (ty == "s32") {  // sign-extended from the field's top bit
        ExprP up = bin(BinOp::Shl, std::move(a), k(32 - top));
        return write(ops[0], bin(BinOp::Shr, std::move(up), k(32 - top + *pos)), guard);
      }
      ExprP f = *pos ? lshr(std::move(a), k(*pos), Scalar::I32) : std::move(a);
      return write(ops[0], top - *pos >= 32 ? std::move(f) : bin(BinOp::And, std::move(f), k((int64_t{1} << (top - *pos)) - 1)), guard);
    }
    if (op == "bfi" && ty == "b32") {
      need(5);
      auto pos = int_imm(ops[3]), len = int_imm(ops[4]);
      if (!pos || !len || *pos < 0 || *len < 0 || *pos > 31 || *len > 32) fail("'" + s + "': position and length must be immediates in range");
      int64_t l = std::min<int64_t>(*len, 32 - *pos);
      int64_t m = l >= 32 ? -1 : ((int64_t{1} << l) - 1) << *pos;
      ExprP ins = bin(BinOp::And, bin(BinOp::Shl, read(ops[1], 32), k(*pos)), k(m));
      return write(ops[0], bin(BinOp::Or, bin(BinOp::And, read(ops[2], 32), k(~m)), std::move(ins)), guard);
    }
    if (op == "shf" && ty == "b32" && p.size() == 4 && (p[1] == "l" || p[1] == "r") && (p[2] == "wrap" || p[2] == "clamp")) {
      // funnel shift of the 64 bits b:a (b high) by c (wrap: c mod 32; clamp: at most 32, unsigned):
      // l keeps the upper 32 bits of the shifted value, r the lower
      need(4);
      const int64_t low = 0xFFFFFFFFll;
      ExprP a = read(ops[1], 32), b = read(ops[2], 32);
      ExprP c = hold("c", bin(BinOp::And, cast(read(ops[3], 32), Scalar::I64), k(low, Scalar::I64)));
      ExprP n = p[2] == "wrap" ? bin(BinOp::And, cp(c), k(31, Scalar::I64)) : where(bin(BinOp::Gt, cp(c), k(32, Scalar::I64)), k(32, Scalar::I64), cp(c));
      ExprP v = hold("v", bin(BinOp::Or, bin(BinOp::Shl, bin(BinOp::And, cast(std::move(b), Scalar::I64), k(low, Scalar::I64)), k(32, Scalar::I64)),
                              bin(BinOp::And, cast(std::move(a), Scalar::I64), k(low, Scalar::I64))));
      ExprP r = p[1] == "l" ? bin(BinOp::Shr, bin(BinOp::Shl, cp(v), std::move(n)), k(32, Scalar::I64)) : bin(BinOp::Shr, cp(v), std::move(n));
      return write(ops[0], cast(std::move(r), Scalar::I32), guard);
    }
    if (op == "prmt" && ty == "b32" && p.size() == 2) {  // the default mode
      need(4);
      ExprP a = hold("a", read(ops[1], 32)), b = hold("b", read(ops[2], 32)), c = hold("c", read(ops[3], 32));
      ExprP r;
      for (int i = 0; i < 4; ++i) {
        ExprP nib = hold("sel", bin(BinOp::And, bin(BinOp::Shr, cp(c), k(4 * i)), k(15)));
        ExprP shift = bin(BinOp::Mul, bin(BinOp::And, cp(nib), k(3)), k(8));  // the byte within a or b
        ExprP in_a = bin(BinOp::Eq, bin(BinOp::And, cp(nib), k(4)), k(0));
        ExprP byte = hold("byte", bin(BinOp::And, where(std::move(in_a), bin(BinOp::Shr, cp(a), cp(shift)), bin(BinOp::Shr, cp(b), cp(shift))), k(255)));
        ExprP sign = where(bin(BinOp::Ne, bin(BinOp::And, cp(byte), k(128)), k(0)), k(255), k(0));
        byte = where(bin(BinOp::Ne, bin(BinOp::And, std::move(nib), k(8)), k(0)), std::move(sign), cp(byte));
        ExprP placed = bin(BinOp::Shl, std::move(byte), k(8 * i));
        r = r ? bin(BinOp::Or, std::move(r), std::move(placed)) : std::move(placed);
      }
      return write(ops[0], std::move(r), guard);
    }
    if (op == "setp" && p.size() == 3) {  // setp.cmp.type p, a, b
      need(3);
      const std::string& cmp = p[1];
      Reg& pr = reg(ops[0]);
      if (pr.width != 1) fail("'" + s + "': " + ops[0] + " is no predicate");
      ExprP c;
      if (ty == "f32" || ty == "f64") {
        ExprP a = fval(ops[1], ty), b = fval(ops[2], ty);
        BinOp o = cmp == "eq" ? BinOp::Eq : cmp == "ne" ? BinOp::Ne : cmp == "lt" ? BinOp::Lt : cmp == "le" ? BinOp::Le : cmp == "gt" ? BinOp::Gt
                : cmp == "ge" ? BinOp::Ge : BinOp::Add;
        if (o == BinOp::Add) unsupported();
        c = bin(o, std::move(a), std::move(b));
      } else if (i32 || i64) {
        ExprP a = read(ops[1], w), b = read(ops[2], w);
        bool uns = ty[0] == 'u' || ty[0] == 'b' || cmp == "lo" || cmp == "ls" || cmp == "hi" || cmp == "hs";
        BinOp o = cmp == "eq" ? BinOp::Eq : cmp == "ne" ? BinOp::Ne : (cmp == "lt" || cmp == "lo") ? BinOp::Lt : (cmp == "le" || cmp == "ls") ? BinOp::Le
                : (cmp == "gt" || cmp == "hi") ? BinOp::Gt : (cmp == "ge" || cmp == "hs") ? BinOp::Ge : BinOp::Add;
        if (o == BinOp::Add) unsupported();
        c = uns && o != BinOp::Eq && o != BinOp::Ne ? unsigned_compare(o, std::move(a), std::move(b), rt, loc_) : bin(o, std::move(a), std::move(b));
      } else {
        unsupported();
      }
      pr.v = hold(ops[0], guard ? where(cp(guard), std::move(c), pr.v ? cp(pr.v) : make_const_int(0, loc_)) : std::move(c));
      ++pr.version;
      return;
    }
    if (op == "selp" && (i32 || i64 || ty == "f32" || ty == "f64")) {
      need(4);
      Reg& pr = reg(ops[3]);
      if (pr.width != 1 || !pr.v) fail("'" + s + "': " + ops[3] + " is no predicate set before");
      int ww = ty == "f64" ? 64 : w;
      char fl = ty[0] == 'f' ? (ty == "f64" ? 'd' : 'f') : 0;
      return write(ops[0], where(cp(pr.v), read(ops[1], ww, fl), read(ops[2], ww, fl)), guard);
    }
    // f32 / f64 arithmetic (.rn and .ftz accepted; subnormals are kept: docs/triton.md)
    if ((ty == "f32" || ty == "f64") && (op == "add" || op == "sub" || op == "mul" || op == "div" || op == "fma" || op == "min" || op == "max" ||
                                         op == "neg" || op == "abs" || op == "sqrt" || op == "rsqrt" || op == "rcp" || op == "ex2" || op == "lg2" ||
                                         op == "sin" || op == "cos" || op == "tanh")) {
      for (size_t i = 1; i + 1 < p.size(); ++i)
        if (p[i] != "rn" && p[i] != "ftz" && p[i] != "approx" && p[i] != "full" && p[i] != "f32") unsupported();
      ExprP r;
      if (op == "neg" || op == "abs" || op == "sqrt" || op == "rsqrt" || op == "rcp" || op == "ex2" || op == "lg2" || op == "sin" || op == "cos" ||
          op == "tanh") {
        need(2);
        ExprP a = fval(ops[1], ty);
        UnOp u = op == "neg" ? UnOp::Neg : op == "abs" ? UnOp::Abs : op == "sqrt" ? UnOp::Sqrt : op == "rsqrt" ? UnOp::Rsqrt : op == "ex2" ? UnOp::Exp2
               : op == "lg2" ? UnOp::Log2 : op == "sin" ? UnOp::Sin : op == "cos" ? UnOp::Cos : UnOp::Tanh;
        r = op == "rcp" ? bin(BinOp::Div, fc(1.0, ty == "f64" ? Scalar::F64 : Scalar::F32), std::move(a))
                        : un(u, std::move(a));
      } else if (op == "fma") {  // rounded once (ir/Fma.h), as tl.fma
        need(4);
        r = fused_multiply_add(fval(ops[1], ty), fval(ops[2], ty), fval(ops[3], ty), ty == "f64" ? Scalar::F64 : Scalar::F32, loc_, bind_);
      } else {
        need(3);
        ExprP a = hold("a", fval(ops[1], ty)), b = hold("b", fval(ops[2], ty));
        if (op == "min" || op == "max") {  // the other operand where one is NaN
          ExprP pick = op == "min" ? bin(BinOp::Lt, cp(a), cp(b)) : bin(BinOp::Gt, cp(a), cp(b));
          ExprP an = bin(BinOp::Ne, cp(a), cp(a));
          r = where(std::move(an), cp(b), where(bin(BinOp::Or, std::move(pick), bin(BinOp::Ne, cp(b), cp(b))), cp(a), cp(b)));
        } else {
          BinOp o = op == "add" ? BinOp::Add : op == "sub" ? BinOp::Sub : op == "mul" ? BinOp::Mul : BinOp::Div;
          r = bin(o, std::move(a), std::move(b));
        }
      }
      return write(ops[0], fbits(std::move(r), ty), guard);
    }
    // packed halves: add, sub, mul, fma.rn on f16x2 / bf16x2 (each half computed in f64 and rounded once)
    if ((ty == "f16x2" || ty == "bf16x2") && (op == "add" || op == "sub" || op == "mul" || op == "fma")) {
      const Scalar h = ty == "f16x2" ? Scalar::F16 : Scalar::BF16;
      for (size_t i = 1; i + 1 < p.size(); ++i)
        if (p[i] != "rn" && p[i] != "ftz") unsupported();
      need(op == "fma" ? 4 : 3);
      std::vector<ExprP> in;
      for (size_t i = 1; i < ops.size(); ++i) in.push_back(hold("h", read(ops[i], 32)));
      auto half = [&](bool hi) {
        auto v = [&](size_t i) { return cast(half_value(hi ? hi16(cp(in[i])) : lo16(cp(in[i])), h), Scalar::F64); };
        ExprP r = op == "add" ? bin(BinOp::Add, v(0), v(1)) : op == "sub" ? bin(BinOp::Sub, v(0), v(1)) : bin(BinOp::Mul, v(0), v(1));
        if (op == "fma") r = bin(BinOp::Add, std::move(r), v(2));
        return half_bits(std::move(r), h);
      };
      return write(ops[0], join16(half(true), half(false)), guard);
    }
    // packed halves: min, max (each half the smaller / larger operand's bits; where one is NaN the
    // other, where both are the canonical NaN 0x7FFF; Triton's f32 -> float8e4b15 conversion clamps so)
    if ((ty == "f16x2" || ty == "bf16x2") && (op == "min" || op == "max") && p.size() == 2) {
      const Scalar h = ty == "f16x2" ? Scalar::F16 : Scalar::BF16;
      need(3);
      ExprP x = hold("h", read(ops[1], 32)), y = hold("h", read(ops[2], 32));
      auto half = [&](bool hi) {
        ExprP ba = hold("hb", hi ? hi16(cp(x)) : lo16(cp(x))), bb = hold("hb", hi ? hi16(cp(y)) : lo16(cp(y)));
        ExprP a = hold("hv", half_value(cp(ba), h)), b = hold("hv", half_value(cp(bb), h));
        ExprP pick = op == "min" ? bin(BinOp::Lt, cp(a), cp(b)) : bin(BinOp::Gt, cp(a), cp(b));
        ExprP bnan = hold("hn", bin(BinOp::Ne, cp(b), cp(b)));
        ExprP keep_b = where(cp(bnan), k(0x7FFF), cp(bb));  // a is NaN
        ExprP pick_a = where(bin(BinOp::Or, std::move(pick), cp(bnan)), cp(ba), cp(bb));
        return where(bin(BinOp::Ne, cp(a), cp(a)), std::move(keep_b), std::move(pick_a));
      };
      return write(ops[0], join16(half(true), half(false)), guard);
    }
    if (op == "cvt") return exec_cvt(s, p, ops, guard);
    unsupported();
  }

  // cvt: f32 <-> f16/bf16 (one or two), f32 -> two fp8 (satfinite), two fp8 -> f16x2, f32 <-> s32/u32
  void exec_cvt(const std::string& s, const std::vector<std::string>& p, const std::vector<std::string>& ops, const ExprP& guard) {
    auto unsupported = [&]() -> void { fail("'" + s.substr(0, s.find(' ')) + "' is not supported yet (docs/triton.md lists the instructions dtsim runs)"); };
    if (p.size() < 3) unsupported();
    const std::string& to = p[p.size() - 2];
    const std::string& from = p.back();
    std::string mode;
    bool sat = false;
    for (size_t i = 1; i + 2 < p.size(); ++i) {
      if (p[i] == "satfinite" || p[i] == "sat") sat = true;  // (float to integer saturates either way)
      else if (p[i] == "ftz") continue;
      else if (mode.empty()) mode = p[i];
      else unsupported();
    }
    auto half_t = [](const std::string& t) { return t == "f16" ? Scalar::F16 : Scalar::BF16; };
    auto fp8_t = [](const std::string& t) { return t == "e4m3x2" ? Scalar::F8E4M3 : Scalar::F8E5M2; };
    if (to == "ue8m0x2" && from == "f32" && (mode == "rp" || mode == "rz")) {
      // each f32 to an e8m0 byte (a's in bits 8-15): its biased exponent, with rp plus one where the
      // value is above that power of two (a nonzero mantissa; a subnormal above 2^-127); NaN, and
      // without satfinite an infinity or a round-up past 2^127, give 0xFF, with satfinite 0xFE; the
      // sign is not read
      if (ops.size() != 3) unsupported();
      ExprP byte[2];
      for (int i = 0; i < 2; ++i) {
        ExprP bits = hold("f32_bits", read(ops[1 + i], 32, 'f'));
        ExprP e = hold("f32_exp", bin(BinOp::And, bin(BinOp::Shr, cp(bits), k(23)), k(255)));
        ExprP m = hold("f32_man", bin(BinOp::And, cp(bits), k(0x7FFFFF)));
        ExprP r = cp(e);
        if (mode == "rp") {
          ExprP above = where(bin(BinOp::Eq, cp(e), k(0)), bin(BinOp::Gt, cp(m), k(0x400000)), bin(BinOp::Ne, cp(m), k(0)));
          r = bin(BinOp::Add, std::move(r), cast(std::move(above), Scalar::I32));
        }
        r = hold("e8m0", std::move(r));
        ExprP nan = bin(BinOp::And, bin(BinOp::Eq, cp(e), k(255)), bin(BinOp::Ne, cp(m), k(0)));
        byte[i] = where(bin(BinOp::Ge, cp(r), k(255)), where(std::move(nan), k(255), k(sat ? 254 : 255)), cp(r));
      }
      return write(ops[0], bin(BinOp::Or, bin(BinOp::Shl, std::move(byte[0]), k(8)), std::move(byte[1])), guard);
    }
    if ((to == "f16x2" || to == "bf16x2") && from == "f32" && mode == "rn") {  // a to the upper half, b the lower
      if (ops.size() != 3) unsupported();
      Scalar h = half_t(to.substr(0, to.size() - 2));
      return write(ops[0], join16(half_bits(f32(read(ops[1], 32, 'f')), h), half_bits(f32(read(ops[2], 32, 'f')), h)), guard);
    }
    if ((to == "e4m3x2" || to == "e5m2x2") && from == "f32" && mode == "rn") {
      if (!sat) fail("'" + s + "': PTX converts f32 to fp8 pairs only with .satfinite");
      if (ops.size() != 3) unsupported();
      Scalar f8 = fp8_t(to);
      return write(ops[0], bin(BinOp::Or, bin(BinOp::Shl, fp8_bits(f32(read(ops[1], 32, 'f')), f8), k(8)), fp8_bits(f32(read(ops[2], 32, 'f')), f8)), guard);
    }
    if (to == "f16x2" && (from == "e4m3x2" || from == "e5m2x2") && mode == "rn") {  // each byte to f16, in place
      if (ops.size() != 2) unsupported();
      Scalar f8 = fp8_t(from);
      ExprP x = hold("x", read(ops[1], 16));
      auto one = [&](ExprP byte) {
        ExprP v = cast(bitcast(cast(std::move(byte), Scalar::I8), f8), Scalar::F32);
        return half_bits(std::move(v), Scalar::F16);
      };
      return write(ops[0], join16(one(bin(BinOp::And, bin(BinOp::Shr, cp(x), k(8)), k(255))), one(bin(BinOp::And, cp(x), k(255)))), guard);
    }
    if (to == "f16x2" && from == "e2m1x2" && mode == "rn") {  // each nibble to f16, in place (the high one to the upper half)
      if (ops.size() != 2) unsupported();
      ExprP x = hold("x", read(ops[1], 8));
      auto one = [&](ExprP nib) {  // e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6; the sign in bit 3
        ExprP c = hold("e2m1", std::move(nib));
        ExprP m = hold("mag", bin(BinOp::And, cp(c), k(7)));
        ExprP v = fc(6.0, Scalar::F32);
        const double vals[7] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0};
        for (int i = 6; i >= 0; --i) v = where(bin(BinOp::Eq, cp(m), k(i)), fc(vals[i], Scalar::F32), std::move(v));
        v = where(bin(BinOp::Ne, bin(BinOp::And, cp(c), k(8)), k(0)), un(UnOp::Neg, cp(v)), cp(v));
        return half_bits(std::move(v), Scalar::F16);
      };
      return write(ops[0], join16(one(bin(BinOp::And, bin(BinOp::Shr, cp(x), k(4)), k(15))), one(bin(BinOp::And, cp(x), k(15)))), guard);
    }
    if (to == "f32" && from == "f32" && (mode == "rni" || mode == "rzi" || mode == "rmi" || mode == "rpi")) {  // rounded to an integral value
      if (ops.size() != 2) unsupported();
      UnOp r = mode == "rni" ? UnOp::Rint : mode == "rzi" ? UnOp::Trunc : mode == "rmi" ? UnOp::Floor : UnOp::Ceil;
      return write(ops[0], bits32(un(r, f32(read(ops[1], 32, 'f')))), guard);
    }
    if ((to == "f16" || to == "bf16") && from == "f32" && mode == "rn") {
      if (ops.size() != 2) unsupported();
      return write(ops[0], half_bits(f32(read(ops[1], 32, 'f')), half_t(to)), guard);
    }
    if (to == "f32" && (from == "f16" || from == "bf16") && mode.empty()) {
      if (ops.size() != 2) unsupported();
      return write(ops[0], bits32(half_value(read(ops[1], 16), half_t(from))), guard);
    }
    auto int_bits = [](const std::string& t) -> int {  // s8 .. u64 (b too): the width, else 0
      if (t.size() < 2 || (t[0] != 's' && t[0] != 'u' && t[0] != 'b')) return 0;
      std::string n = t.substr(1);
      return n == "8" ? 8 : n == "16" ? 16 : n == "32" ? 32 : n == "64" ? 64 : 0;
    };
    const int tb = int_bits(to), fb = int_bits(from);
    if (to == "f32" && fb && fb <= 32 && (mode == "rn" || mode.empty())) {  // an integer (its low fb bits) to f32
      if (ops.size() != 2) unsupported();
      ExprP a = read(ops[1], fb);
      if (from[0] == 's' && fb < 32) a = bin(BinOp::Shr, bin(BinOp::Shl, std::move(a), k(32 - fb)), k(32 - fb));  // sign-extended
      ExprP v = from[0] == 's' || fb < 32 ? cast(std::move(a), Scalar::F32) : unsigned_convert(std::move(a), Scalar::I32, Scalar::F32, loc_, bind_);
      return write(ops[0], bits32(std::move(v)), guard);
    }
    auto range = [&](const ExprP& v, int bits, bool sgn, Scalar vt) {  // v clamped to the type's range
      int64_t lo = sgn ? -(int64_t{1} << (bits - 1)) : 0, hi = bits == 64 ? INT64_MAX : sgn ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
      auto lit = [&](int64_t x) { return vt == Scalar::F64 ? fc(static_cast<double>(x), Scalar::F64) : k(x, vt); };
      return where(bin(BinOp::Lt, cp(v), lit(lo)), lit(lo), where(bin(BinOp::Gt, cp(v), lit(hi)), lit(hi), cp(v)));
    };
    if (tb && tb <= 32 && to[0] != 'b' && from == "f32" && (mode == "rni" || mode == "rzi" || mode == "rmi" || mode == "rpi")) {
      // rounded to an integer, clamped to the type's range (NaN: 0), sign- or zero-extended into the register
      if (ops.size() != 2) unsupported();
      ExprP v = hold("f", f32(read(ops[1], 32, 'f')));
      UnOp r = mode == "rni" ? UnOp::Rint : mode == "rzi" ? UnOp::Trunc : mode == "rmi" ? UnOp::Floor : UnOp::Ceil;
      ExprP w = hold("w", cast(un(r, cast(cp(v), Scalar::F64)), Scalar::F64));
      ExprP c = hold("c", range(w, tb, to[0] == 's', Scalar::F64));
      ExprP i = cast(where(bin(BinOp::Ne, cp(v), cp(v)), fc(0.0, Scalar::F64), cp(c)), Scalar::I64);
      return write(ops[0], cast(std::move(i), Scalar::I32), guard);
    }
    if (tb && fb && tb <= 32 && fb <= 32 && (mode.empty() || sat)) {  // integer to integer: extended, then narrowed or clamped
      if (ops.size() != 2) unsupported();
      ExprP a = read(ops[1], fb);
      ExprP v = a;
      if (from[0] == 's' && fb < 32) v = bin(BinOp::Shr, bin(BinOp::Shl, std::move(v), k(32 - fb)), k(32 - fb));
      ExprP wide = hold("wide", from[0] == 's' ? cast(std::move(v), Scalar::I64) : bin(BinOp::And, cast(std::move(v), Scalar::I64), k(0xFFFFFFFFll, Scalar::I64)));
      if (sat) wide = hold("wide", range(wide, tb, to[0] == 's', Scalar::I64));
      ExprP r = cast(bin(BinOp::And, cp(wide), k(tb == 32 ? 0xFFFFFFFFll : (int64_t{1} << tb) - 1, Scalar::I64)), Scalar::I32);
      if (to[0] == 's' && tb < 32) r = bin(BinOp::Shr, bin(BinOp::Shl, std::move(r), k(32 - tb)), k(32 - tb));
      return write(ops[0], std::move(r), guard);
    }
    if (to == "tf32" && from == "f32" && (mode == "rna" || mode == "rn" || mode == "rz")) {
      // the f32 with its 13 low mantissa bits dropped: rounded half away from zero (rna), to nearest even (rn), or cut
      if (ops.size() != 2) unsupported();
      ExprP b = hold("b", read(ops[1], 32, 'f'));
      ExprP nan = bin(BinOp::Gt, bin(BinOp::And, cp(b), k(0x7fffffff)), k(0x7f800000));
      ExprP add = mode == "rna" ? k(0x1000) : mode == "rz" ? k(0) : bin(BinOp::Add, k(0xFFF), bin(BinOp::And, bin(BinOp::Shr, cp(b), k(13)), k(1)));
      ExprP r = bin(BinOp::And, bin(BinOp::Add, cp(b), std::move(add)), k(static_cast<int32_t>(0xFFFFE000u)));
      return write(ops[0], where(std::move(nan), cp(b), std::move(r)), guard);
    }
    if (to == "e2m1x2" && from == "f32" && mode == "rn") {
      // two f32 to e2m1 nibbles (a to the high one): to nearest even on 0, 0.5, 1, 1.5, 2, 3, 4, 6,
      // saturating at 6 (NaN too), the sign in bit 3
      if (!sat) fail("'" + s + "': PTX converts f32 to e2m1 pairs only with .satfinite");
      if (ops.size() != 3) unsupported();
      auto nibble = [&](const std::string& o) {
        ExprP b = hold("b", read(o, 32, 'f'));
        ExprP a = hold("a", un(UnOp::Abs, f32(cp(b))));
        ExprP code = k(0);
        for (auto [t, inclusive] : {std::pair{0.25, false}, {0.75, true}, {1.25, false}, {1.75, true}, {2.5, false}, {3.5, true}, {5.0, false}}) {
          ExprP th = fc(t, Scalar::F32);
          code = bin(BinOp::Add, std::move(code), cast(bin(inclusive ? BinOp::Ge : BinOp::Gt, cp(a), std::move(th)), Scalar::I32));
        }
        code = where(bin(BinOp::Ne, cp(a), cp(a)), k(7), std::move(code));
        return bin(BinOp::Or, std::move(code), where(bin(BinOp::Lt, cp(b), k(0)), k(8), k(0)));
      };
      return write(ops[0], bin(BinOp::Or, bin(BinOp::Shl, nibble(ops[1]), k(4)), nibble(ops[2])), guard);
    }
    unsupported();
  }
};

}  // namespace

std::vector<ExprP> lower_inline_ptx(const std::string& text, const std::string& constraints, int pack, const std::vector<PtxOperand>& args,
                                    const std::vector<Scalar>& results, const Shape& shape, SourceLoc loc, const BindFn& bind,
                                    std::vector<StmtP>* effects) {
  Lowering l(text, loc, bind, effects);
  if (pack <= 1 || (!shape.empty() && shape.back() % pack == 0)) return l.run(constraints, pack, args, results, shape);
  // A last dimension that is no multiple of `pack` (a scalar, a [1, 1] tile; Triton's float8e4b15
  // conversion of a `tl.zeros((1, 1))` other=): the elements in a row of `total`, a multiple of pack
  // (extents are powers of two: every element once where there are at least `pack`, else each
  // repeated `reps` times, as the GPU fills a pack's unused slots), and each result's first copy back.
  auto dims = [&](const Shape& sh) {
    std::vector<ExprP> v;
    for (int64_t d : sh) v.push_back(make_const_int(d, loc));
    return v;
  };
  const int64_t n = shape_numel(shape), total = n % pack == 0 ? n : pack, reps = total / n;
  std::vector<PtxOperand> flat;
  for (const PtxOperand& a : args) {
    ExprP x = a.value;
    if (!shape.empty()) x = make_reshape(make_broadcast(x, dims(shape), loc), dims({1, n}), loc);
    flat.push_back(PtxOperand{make_reshape(make_broadcast(x, dims({reps, n}), loc), dims({total}), loc), a.elem});
  }
  std::vector<ExprP> rs = l.run(constraints, pack, flat, results, {total});
  for (size_t i = 0; i < rs.size(); ++i) {
    if (reps == 1) {
      rs[i] = make_reshape(rs[i], dims(shape), loc);
      continue;
    }
    // the first of the `reps` copies, its bits kept: the max of the integer bits at copy 0 and the
    // width's least integer elsewhere
    const Scalar bi = int_of_bits(8 * scalar_bytes(results[i]));
    ExprP v = make_reshape(rs[i], dims({reps, n}), loc);
    if (bi != results[i]) v = make_bitcast(v, bi, loc);
    ExprP first = make_broadcast(make_binary(BinOp::Eq, make_expand_dims(make_arange(make_const_int(0, loc), make_const_int(reps, loc), loc), 1, loc),
                                             make_const_int(0, loc), loc),
                                 dims({reps, n}), loc);
    const int64_t least = bi == Scalar::I64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (8 * scalar_bytes(results[i]) - 1));
    ExprP r = make_reduce(RedOp::Max, make_where(first, v, int_of(least, bi, loc), loc), 0, loc);
    if (bi != results[i]) r = make_bitcast(r, results[i], loc);
    rs[i] = shape.empty() ? make_reduce(RedOp::Max, r, 0, loc) : make_reshape(r, dims(shape), loc);
  }
  return rs;
}

}  // namespace dtsim
