// Global buffers of a run: f16/bf16 conversions, creation from a module's pointer parameters, and
// seeded random input data.
#include "host/Buffers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace dtsim {

// ---- f16 / bf16 ----

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  // NaN: its payload's top bits kept as they are (an f16 NaN widened and narrowed again, signaling or
  // not, comes back bit for bit), the quiet bit set only where no payload bit would remain
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? ((man >> 13) ? (man >> 13) : 0x200u) : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // f16 subnormal (or zero)
    if (e < -10) return static_cast<uint16_t>(sign);
    uint32_t m24 = man | 0x800000u;
    int shift = 14 - e;
    uint32_t m = m24 >> shift;
    uint32_t rem = m24 & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is correct
  return static_cast<uint16_t>(sign | h);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (man << 13)) : (sign | ((exp - 15 + 127) << 23) | (man << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))  // NaN: its payload's top bits kept (as f32_to_f16)
    return static_cast<uint16_t>((x >> 16) | ((x >> 16) & 0x7fu ? 0u : 0x40u));
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---- fp8 ----

Fp8Format fp8_format(Scalar t) {
  switch (t) {
    case Scalar::F8E4M3: return {3, 7, 448.0f, 448.0f, Fp8Nan::Fn, false};
    case Scalar::F8E5M2: return {2, 15, 57344.0f, 57344.0f, Fp8Nan::Ieee, false};
    case Scalar::F8E4B15: return {3, 15, 1.875f, 1.75f, Fp8Nan::None, true};
    case Scalar::F8E4B8: return {3, 8, 240.0f, 240.0f, Fp8Nan::Fnuz, false};
    case Scalar::F8E5B16: return {2, 16, 57344.0f, 57344.0f, Fp8Nan::Fnuz, false};
    case Scalar::I1:
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32:
    case Scalar::I64:
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32:
    case Scalar::F64: break;
  }
  internal_error("fp8", std::string("not an fp8 type: ") + scalar_name(t));
}

namespace {
// The bits of a finite non-negative value `r` that the format represents exactly.
uint8_t fp8_encode_exact(const Fp8Format& F, double r) {
  if (r == 0) return 0;
  int emin = 1 - F.bias;  // exponent of the smallest normal
  int re = std::max(std::ilogb(r), emin);
  uint32_t man = static_cast<uint32_t>(std::ldexp(r, F.mbits - re));  // with the implicit bit when normal
  uint32_t efield = man >> F.mbits ? static_cast<uint32_t>(re + F.bias) : 0u;
  return static_cast<uint8_t>((efield << F.mbits) | (man & ((1u << F.mbits) - 1u)));
}
}  // namespace

// An f32 NaN as the fp8 byte of a NaN: E4M3's one pattern of its sign, E5M2's with the payload's top
// two bits kept (as fp8_to_f32 widens them), both set where neither is; the fnuz formats' one NaN;
// e4b15 has none: +-1.75 (its sign kept), as Triton's conversion gives.
uint8_t fp8_nan(Scalar t, float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint8_t sign = (x >> 24) & 0x80;
  Fp8Format F = fp8_format(t);
  switch (F.nan) {
    case Fp8Nan::Fn: return static_cast<uint8_t>(sign | 0x7f);
    case Fp8Nan::Fnuz: return 0x80;
    case Fp8Nan::None: return static_cast<uint8_t>(sign | fp8_encode_exact(F, F.sat));
    case Fp8Nan::Ieee: break;
  }
  uint32_t m = (x >> 21) & 3u;
  return static_cast<uint8_t>(sign | 0x7c | (m ? m : 3u));
}

uint8_t f32_to_fp8(Scalar t, float f) {
  Fp8Format F = fp8_format(t);
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (f != f) return fp8_nan(t, f);
  if (std::isinf(f) && F.nan == Fp8Nan::Fnuz) return 0x80;  // fnuz: an infinity becomes the NaN
  double a = std::fabs(static_cast<double>(f));
  int emin = 1 - F.bias;
  int e = a == 0 ? emin : std::max(std::ilogb(a), emin);
  double q = std::ldexp(1.0, e - F.mbits);  // spacing of representable values at a's binade
  double r = (F.ties_away ? std::round(a / q) : std::nearbyint(a / q)) * q;  // a / q is exact
  if (r > F.sat || std::isinf(a)) r = F.sat;
  if (r == 0 && F.nan == Fp8Nan::Fnuz) return 0;  // fnuz: no negative zero
  return static_cast<uint8_t>(sign | fp8_encode_exact(F, r));
}

float fp8_to_f32(Scalar t, uint8_t b) {
  Fp8Format F = fp8_format(t);
  bool neg = b & 0x80;
  uint32_t efield = (b & 0x7f) >> F.mbits, man = b & ((1u << F.mbits) - 1u);
  uint32_t emax = (1u << (7 - F.mbits)) - 1u;
  bool ieee = F.nan == Fp8Nan::Ieee;
  if ((ieee && efield == emax && man) || (F.nan == Fp8Nan::Fn && efield == emax && man == (1u << F.mbits) - 1u) ||
      (F.nan == Fp8Nan::Fnuz && b == 0x80)) {
    // NaN: its sign and payload in the f32's top mantissa bits (fp8_nan narrows it back to these bits)
    uint32_t bits = (neg ? 0x80000000u : 0u) | 0x7f800000u | (man << (23 - F.mbits));
    if (F.nan == Fp8Nan::Fnuz) bits = 0x7fc00000u;
    float nan;
    std::memcpy(&nan, &bits, 4);
    return nan;
  }
  float v;
  if (ieee && efield == emax) v = std::numeric_limits<float>::infinity();
  else if (efield == 0) v = std::ldexp(static_cast<float>(man), 1 - F.bias - F.mbits);
  else v = std::ldexp(static_cast<float>(man | (1u << F.mbits)), static_cast<int>(efield) - F.bias - F.mbits);
  return neg ? -v : v;
}

uint8_t fp8_bits(Scalar t, float f) {
  if (t == Scalar::F8E5M2 && std::isinf(f)) return std::signbit(f) ? 0xfc : 0x7c;
  if (t == Scalar::F8E4B15 && std::fabs(f) == 1.875f) return std::signbit(f) ? 0xff : 0x7f;  // beyond what conversions give
  return f32_to_fp8(t, f);
}

float round_to(Scalar t, float v) {
  switch (t) {
    case Scalar::F16: return f16_to_f32(f32_to_f16(v));
    case Scalar::BF16: return bf16_to_f32(f32_to_bf16(v));
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return fp8_to_f32(t, f32_to_fp8(t, v));
    case Scalar::I1:
    case Scalar::I8:
    case Scalar::I16:
    case Scalar::I32:
    case Scalar::I64:
    case Scalar::F32:
    case Scalar::F64:
      return v;
  }
  return v;
}

// ---- Buffer ----

double Buffer::get(int64_t i) const {
  switch (dtype) {
    case Scalar::I1: return as<uint8_t>()[i] ? 1.0 : 0.0;
    case Scalar::I8: return as<int8_t>()[i];
    case Scalar::I16: return as<int16_t>()[i];
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return fp8_to_f32(dtype, as<uint8_t>()[i]);
    case Scalar::I32: return as<int32_t>()[i];
    case Scalar::I64: return static_cast<double>(as<int64_t>()[i]);
    case Scalar::F16: return f16_to_f32(as<uint16_t>()[i]);
    case Scalar::BF16: return bf16_to_f32(as<uint16_t>()[i]);
    case Scalar::F32: return as<float>()[i];
    case Scalar::F64: return as<double>()[i];
  }
  return 0;
}

void Buffer::set(int64_t i, double v) {
  switch (dtype) {
    case Scalar::I1: as<uint8_t>()[i] = v != 0; return;
    case Scalar::I8: as<int8_t>()[i] = static_cast<int8_t>(wrap_to(dtype, static_cast<int64_t>(v))); return;
    case Scalar::I16: as<int16_t>()[i] = static_cast<int16_t>(wrap_to(dtype, static_cast<int64_t>(v))); return;
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: as<uint8_t>()[i] = f32_to_fp8(dtype, static_cast<float>(v)); return;
    case Scalar::I32: as<int32_t>()[i] = static_cast<int32_t>(static_cast<int64_t>(v)); return;
    case Scalar::I64: as<int64_t>()[i] = static_cast<int64_t>(v); return;
    case Scalar::F16: as<uint16_t>()[i] = f32_to_f16(static_cast<float>(v)); return;
    case Scalar::BF16: as<uint16_t>()[i] = f32_to_bf16(static_cast<float>(v)); return;
    case Scalar::F32: as<float>()[i] = static_cast<float>(v); return;
    case Scalar::F64: as<double>()[i] = v; return;
  }
}

Buffer Buffer::view(std::string name, Scalar dtype, Shape shape, BufIO io, void* mem) {
  Buffer b;
  b.name = std::move(name);
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.io = io;
  b.defined = true;
  b.external = static_cast<uint8_t*>(mem);
  return b;
}

Buffer* Buffers::find(const std::string& name) {
  for (Buffer& b : list)
    if (b.name == name) return &b;
  return nullptr;
}
const Buffer* Buffers::find(const std::string& name) const {
  for (const Buffer& b : list)
    if (b.name == name) return &b;
  return nullptr;
}
int Buffers::index(const std::string& name) const {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return static_cast<int>(i);
  return -1;
}

// ---- random data ----

namespace {
uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
}  // namespace

void zero_fill(Buffer& buf, const FillPoll& poll) {
  size_t total = static_cast<size_t>(buf.numel()) * static_cast<size_t>(scalar_bytes(buf.dtype));
  if (!poll) {
    buf.bytes.assign(total, 0);
    return;
  }
  buf.bytes.clear();
  buf.bytes.reserve(total);
  constexpr size_t kPiece = size_t(16) << 20;  // bytes zeroed between polls
  while (buf.bytes.size() < total) {
    poll(buf.name);
    buf.bytes.resize(std::min(total, buf.bytes.size() + kPiece));
  }
}

void fill_random(Buffer& buf, uint64_t seed, const FillPoll& poll) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull ^ fnv1a(buf.name);
  int64_t n = buf.numel();
  zero_fill(buf, poll);
  bool nonzero = false;
  for (int64_t i = 0; i < n; ++i) {
    if (poll && (i & ((int64_t(1) << 20) - 1)) == 0) poll(buf.name);
    uint64_t r = splitmix64(state);
    double v = 0;
    if (is_float(buf.dtype)) {
      v = static_cast<double>(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;  // uniform in [-1, 1)
      if (buf.dtype != Scalar::F64) v = static_cast<float>(v);
    } else if (buf.dtype == Scalar::I1) {
      v = static_cast<double>(r >> 63);
    } else {
      v = static_cast<double>(static_cast<int64_t>(r >> 60)) - 8.0;  // [-8, 8)
    }
    buf.set(i, v);
    nonzero = nonzero || buf.get(i) != 0;
  }
  if (!nonzero && n > 0) buf.set(0, 1.0);
  buf.defined = true;
}

Buffers make_buffers(const Module& m, const Bindings& b, uint64_t seed, Buffers preset, const FillPoll& poll) {
  Buffers out;
  for (const Kernel& k : m.kernels) {
    for (const Param& p : k.params) {
      if (p.kind != ParamKind::Pointer || out.find(p.name)) continue;
      Shape shape;
      for (const ExprP& d : p.shape) {
        ScalarValue v = eval_param_expr(d, b);
        if (v.dtype_is_float() || v.i < 0) user_error(d->loc, "buffer '" + p.name + "' has a bad extent " + v.str());
        shape.push_back(v.i);
      }
      if (Buffer* given = preset.find(p.name)) {
        if (given->dtype != p.dtype || given->shape != shape)
          user_error(p.loc, "buffer '" + p.name + "' is declared " + Type{p.dtype, false, shape}.str() + " but its data is " +
                                Type{given->dtype, false, given->shape}.str());
        Buffer buf = std::move(*given);
        buf.io = p.io;
        buf.defined = true;
        out.list.push_back(std::move(buf));
        continue;
      }
      Buffer buf;
      buf.name = p.name;
      buf.dtype = p.dtype;
      buf.shape = shape;
      buf.io = p.io;
      if (p.io == BufIO::In || p.io == BufIO::InOut) {
        fill_random(buf, seed, poll);
      } else {
        zero_fill(buf, poll);
        buf.defined = false;
      }
      out.list.push_back(std::move(buf));
    }
  }
  return out;
}

std::string pid_text(const std::array<int64_t, 3>& pid, size_t grid_rank) {
  size_t n = std::min<size_t>(std::max<size_t>(grid_rank, 1), 3);
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(pid[i]);
  return s + "]";
}

std::string lane_text(int64_t lane, const Shape& shape) {
  return shape.size() >= 2 ? index_text(lane, shape) : std::to_string(lane);
}

std::string index_text(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t i = s.size(); i-- > 1;) {
    if (s[i] == 0) {  // no elements: nothing to divide by
      idx[i] = 0;
      continue;
    }
    int64_t d = s[i], q = flat / d, r = flat % d;
    if (r < 0) r += d, --q;
    idx[i] = r;
    flat = q;
  }
  if (!s.empty()) idx[0] = flat;
  std::string out = "[";
  for (size_t i = 0; i < idx.size(); ++i) out += (i ? ", " : "") + std::to_string(idx[i]);
  return out + "]";
}

}  // namespace dtsim
