// Global memory of a run: named, typed, row-major host buffers used by both executors (the CUDA
// backend copies them to the device and back) and by the tools (.npy files, summaries).
#pragma once

#include <array>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Verify.h"

namespace dtsim {

struct Buffer {
  std::string name;
  Scalar dtype = Scalar::F32;
  Shape shape;
  BufIO io = BufIO::In;
  std::vector<uint8_t> bytes;  // numel * scalar_bytes(dtype); f16/bf16 stored as their 16-bit patterns
  bool defined = false;        // true when the content is input data (In/InOut), false when poisoned
  // A view of memory the buffer does not own (the Python package binds the caller's arrays this way):
  // numel * scalar_bytes(dtype) bytes at `external`, read and written in place; `bytes` stays empty.
  // The owner keeps that memory alive for the run. Shadow state (the sanitizer's "written" bytes,
  // conflict maps) lives in the executor, never in the buffer, so a view carries none.
  uint8_t* external = nullptr;
  // Elements of the caller's memory past the last one that the kernel may still reach (a view's
  // storage going on past the view; only with `external`): an access there runs, and the interpreter
  // reports it as a warning instead of out of bounds. No sanitizer state covers them.
  int64_t slack = 0;

  int64_t numel() const { return shape_numel(shape); }
  size_t size_bytes() const { return static_cast<size_t>(numel()) * static_cast<size_t>(scalar_bytes(dtype)); }
  uint8_t* data() { return external ? external : bytes.data(); }
  const uint8_t* data() const { return external ? external : bytes.data(); }
  template <class T> T* as() { return reinterpret_cast<T*>(data()); }
  template <class T> const T* as() const { return reinterpret_cast<const T*>(data()); }
  // Element i converted to double (f16/bf16 decoded).
  double get(int64_t i) const;
  // Stores v converted to the buffer's type (f16/bf16 rounded to nearest even; ints truncated).
  void set(int64_t i, double v);
  // A buffer over `size_bytes()` bytes of caller-owned memory at `mem` (see `external`).
  static Buffer view(std::string name, Scalar dtype, Shape shape, BufIO io, void* mem);
};

struct Buffers {
  std::vector<Buffer> list;
  Buffer* find(const std::string& name);
  const Buffer* find(const std::string& name) const;
  int index(const std::string& name) const;  // -1 when absent
};

// f16 / bf16 <-> f32 conversions, round-to-nearest-even (shared by every executor and the npy I/O);
// NaN payloads are kept both ways (an f16/bf16 NaN, signaling or not, survives a round trip).
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);
// fp8 (F8E4M3: OCP E4M3 "fn", bias 7, no infinities, max 448, NaN S.1111.111; F8E5M2: bias 15,
// IEEE-like with infinities, max 57344; F8E4B15: E4M3 with bias 15, every pattern finite, max 1.875;
// F8E4B8 / F8E5B16: the "fnuz" E4M3 / E5M2, bias 8 / 16, max 240 / 57344, one NaN 0x80, no -0)
// <-> f32. To fp8: round to nearest even; a finite value beyond the largest finite one, or an
// infinity, saturates to it (PTX cvt.rn.satfinite, as Triton on the GPU); NaN stays NaN with its
// sign (E4M3: S.1111.111; E5M2: the payload's top two bits kept, S.11111.11 where they are zero).
// The fnuz formats (Triton's conversion for AMD GPUs): finite values saturate, an infinity or NaN
// gives 0x80, a zero result is +0. F8E4B15 (Triton's conversion on NVIDIA GPUs): ties round away
// from zero, magnitudes from 1.75 up (infinities and NaN included) give +-1.75, the sign kept.
// From fp8: exact, a NaN's sign and payload included.
uint8_t f32_to_fp8(Scalar t, float f);
// What distinguishes the fp8 formats (one description for every executor): the field widths and
// bias, the largest finite value, the value conversions saturate to, where NaN lives, how ties round.
enum class Fp8Nan { Fn, Ieee, Fnuz, None };  // S.1111.111 | IEEE-like with infinities | 0x80 only | no NaN
struct Fp8Format {
  int mbits;       // explicit mantissa bits
  int bias;
  float max;       // largest finite value
  float sat;       // what a conversion saturates to (below max only for F8E4B15: 1.75, as Triton)
  Fp8Nan nan;
  bool ties_away;  // ties round away from zero (F8E4B15's conversion) rather than to even
};
Fp8Format fp8_format(Scalar t);
float fp8_to_f32(Scalar t, uint8_t b);
// The fp8 bits of an fp8 value held as f32 (a tile's element of an fp8 type, being stored): as
// f32_to_fp8, except that an E5M2 infinity stays one and F8E4B15's +-1.875 stays itself (no
// saturation: the value is no conversion's);
// NaN payloads are kept both ways, so fp8 data copied through a tile keeps every byte.
uint8_t fp8_bits(Scalar t, float f);
// Wraps an integer to the width of `t` (two's complement, sign-extended: i8, i16; identity for wider).
inline int64_t wrap_to(Scalar t, int64_t v) {
  if (t == Scalar::I8) return static_cast<int8_t>(static_cast<uint8_t>(v));
  if (t == Scalar::I16) return static_cast<int16_t>(static_cast<uint16_t>(v));
  return v;
}
// Rounds a float to the precision of `t` (identity for f32/f64 and integers).
float round_to(Scalar t, float v);

// Creates one buffer per distinct pointer parameter of a verified module (shapes evaluated with `b`).
// In/InOut buffers are filled by `fill_input` (file data or seeded random data); Out/Scratch start
// poisoned (zero bytes, defined=false). Buffers already in `preset` (e.g. from --in files) are kept
// after their shape and dtype are checked against the parameter (UserError on mismatch).
// `poll`, when given, is called with the buffer's name every million elements filled (or 16 MiB
// zeroed) and may throw to stop (host/Interrupt.h's WorkStopped).
using FillPoll = std::function<void(const std::string& buffer)>;
Buffers make_buffers(const Module& m, const Bindings& b, uint64_t seed, Buffers preset = {}, const FillPoll& poll = {});

// Seeded random data for an input buffer: floats uniform in [-1, 1), ints in [-8, 8) (never all
// zeros), i1 random. The stream depends only on (seed, buffer name).
void fill_random(Buffer& buf, uint64_t seed, const FillPoll& poll = {});
// The buffer's bytes, all zero (in pieces, polling between them, when `poll` is given).
void zero_fill(Buffer& buf, const FillPoll& poll = {});

// "[i, j]" of a flat element index in a row-major shape, as findings and mismatches print it (floor
// division, so a negative index stays readable; dims after an empty one show 0).
std::string index_text(int64_t flat, const Shape& shape);
// A program instance as every message names it: "[p0]" for a 1-D grid, "[p0, p1]", "[p0, p1, p2]".
std::string pid_text(const std::array<int64_t, 3>& pid, size_t grid_rank);
// A lane of a tile of `shape` (row-major flat index `lane`): its coordinates "[8, 0]" for a tile of
// 2 or more dimensions, else the number.
std::string lane_text(int64_t lane, const Shape& shape);

}  // namespace dtsim
