// Unit tests of the fp8 and narrow-integer element formats (host/Buffers.h): every fp8 bit pattern
// decoded and encoded again, rounding from f32 checked against torch's conversion (fp8_tables.inc;
// e4b15, which torch has not got, against a model of Triton's PTX conversion written here),
// saturation by hand, i8/i16 wraparound, and .npy I/O of the new types.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "host/Buffers.h"
#include "host/Npy.h"

using namespace dtsim;

namespace {

#include "fp8_tables.inc"

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void check_all_patterns(Scalar t, const uint32_t* table) {
  for (int b = 0; b < 256; ++b) {
    float want = from_bits(table[b]);
    float got = fp8_to_f32(t, static_cast<uint8_t>(b));
    CAPTURE(b);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
      CHECK(f32_to_fp8(t, got) == b);  // a NaN's sign and payload come back (e4m3 has one NaN per sign)
      CHECK(fp8_bits(t, got) == b);
      continue;
    }
    CHECK(bits_of(got) == table[b]);  // exact, the sign of zero included
    if (std::isinf(want)) {            // e5m2's infinities: the conversion saturates (satfinite),
      CHECK(f32_to_fp8(t, got) == ((b & 0x80) | 0x7b));
      CHECK(fp8_bits(t, got) == b);    // a stored value stays infinite
      continue;
    }
    CHECK(f32_to_fp8(t, got) == b);  // and back to the same pattern
    CHECK(fp8_bits(t, got) == b);
  }
}

template <size_t N> void check_rounding(Scalar t, const uint32_t (&cases)[N][2]) {
  for (const auto& c : cases) {
    CAPTURE(c[0]);
    CHECK(f32_to_fp8(t, from_bits(c[0])) == c[1]);
  }
}

}  // namespace

TEST_CASE("fp8 e4m3: every bit pattern decodes as torch.float8_e4m3fn and encodes back") {
  check_all_patterns(Scalar::F8E4M3, kE4m3Decode);
}

TEST_CASE("fp8 e5m2: every bit pattern decodes as torch.float8_e5m2 and encodes back") {
  check_all_patterns(Scalar::F8E5M2, kE5m2Decode);
}

TEST_CASE("fp8: f32 rounds to nearest even as torch does (midpoints, their neighbours, random values)") {
  CHECK(sizeof(kE4m3Round) / sizeof(kE4m3Round[0]) > 500);
  check_rounding(Scalar::F8E4M3, kE4m3Round);
  check_rounding(Scalar::F8E5M2, kE5m2Round);
}

TEST_CASE("fp8: finite overflow and infinities saturate to the largest finite value (satfinite)") {
  const float inf = std::numeric_limits<float>::infinity();
  // e4m3: 448 = S.1111.110 (0x7e); no infinities.
  CHECK(f32_to_fp8(Scalar::F8E4M3, 448.0f) == 0x7e);
  CHECK(f32_to_fp8(Scalar::F8E4M3, 464.0f) == 0x7e);  // the midpoint past 448 (torch gives NaN)
  CHECK(f32_to_fp8(Scalar::F8E4M3, 1e6f) == 0x7e);
  CHECK(f32_to_fp8(Scalar::F8E4M3, inf) == 0x7e);
  CHECK(f32_to_fp8(Scalar::F8E4M3, -inf) == 0xfe);
  CHECK(round_to(Scalar::F8E4M3, 500.0f) == 448.0f);
  // e5m2: 57344 = S.11110.11 (0x7b); 0x7c is infinity, which the conversion does not produce.
  CHECK(f32_to_fp8(Scalar::F8E5M2, 57344.0f) == 0x7b);
  CHECK(f32_to_fp8(Scalar::F8E5M2, 61440.0f) == 0x7b);
  CHECK(f32_to_fp8(Scalar::F8E5M2, inf) == 0x7b);
  CHECK(f32_to_fp8(Scalar::F8E5M2, -inf) == 0xfb);
  CHECK(std::isinf(fp8_to_f32(Scalar::F8E5M2, 0x7c)));
  CHECK(std::isnan(round_to(Scalar::F8E5M2, std::nanf(""))));
  CHECK(std::isnan(round_to(Scalar::F8E4M3, std::nanf(""))));
}

TEST_CASE("fp8: subnormals and the smallest values, hand-derived") {
  // e4m3: smallest subnormal 2^-9, smallest normal 2^-6; e5m2: 2^-16 and 2^-14.
  CHECK(fp8_to_f32(Scalar::F8E4M3, 0x01) == std::ldexp(1.0f, -9));
  CHECK(fp8_to_f32(Scalar::F8E4M3, 0x08) == std::ldexp(1.0f, -6));
  CHECK(fp8_to_f32(Scalar::F8E5M2, 0x01) == std::ldexp(1.0f, -16));
  CHECK(fp8_to_f32(Scalar::F8E5M2, 0x04) == std::ldexp(1.0f, -14));
  CHECK(f32_to_fp8(Scalar::F8E4M3, std::ldexp(1.0f, -10)) == 0x00);          // half the smallest: ties to even (0)
  CHECK(f32_to_fp8(Scalar::F8E4M3, std::ldexp(1.5f, -10)) == 0x01);          // above the tie
  CHECK(f32_to_fp8(Scalar::F8E4M3, std::ldexp(3.0f, -10)) == 0x02);          // 1.5 * 2^-9: tie to even (2)
  CHECK(f32_to_fp8(Scalar::F8E4M3, -std::ldexp(1.0f, -12)) == 0x80);         // -0
  CHECK(f32_to_fp8(Scalar::F8E5M2, 1.125f) == 0x3c);                          // tie between 1 and 1.25: 1
  CHECK(f32_to_fp8(Scalar::F8E5M2, 1.375f) == 0x3e);                          // tie between 1.25 and 1.5: 1.5
}

TEST_CASE("fp8 fnuz (e4b8, e5b16): every bit pattern decodes as torch.float8_e4m3fnuz / e5m2fnuz and encodes back") {
  check_all_patterns(Scalar::F8E4B8, kE4m3fnuzDecode);
  check_all_patterns(Scalar::F8E5B16, kE5m2fnuzDecode);
  CHECK(std::isnan(fp8_to_f32(Scalar::F8E4B8, 0x80)));  // the one NaN; no negative zero
  CHECK(fp8_to_f32(Scalar::F8E4B8, 0x7f) == 240.0f);
  CHECK(fp8_to_f32(Scalar::F8E5B16, 0x7f) == 57344.0f);
  CHECK(fp8_to_f32(Scalar::F8E4B8, 0x01) == std::ldexp(1.0f, -10));   // smallest subnormal
  CHECK(fp8_to_f32(Scalar::F8E4B8, 0x08) == std::ldexp(1.0f, -7));    // smallest normal
  CHECK(fp8_to_f32(Scalar::F8E5B16, 0x01) == std::ldexp(1.0f, -17));
  CHECK(fp8_to_f32(Scalar::F8E5B16, 0x04) == std::ldexp(1.0f, -15));
}

TEST_CASE("fp8 fnuz: f32 rounds to nearest even as torch does; saturation, NaN and zero as Triton's conversion") {
  CHECK(sizeof(kE4m3fnuzRound) / sizeof(kE4m3fnuzRound[0]) > 500);
  check_rounding(Scalar::F8E4B8, kE4m3fnuzRound);
  check_rounding(Scalar::F8E5B16, kE5m2fnuzRound);
  const float inf = std::numeric_limits<float>::infinity();
  for (Scalar t : {Scalar::F8E4B8, Scalar::F8E5B16}) {
    CAPTURE(scalar_name(t));
    float mx = t == Scalar::F8E4B8 ? 240.0f : 57344.0f;
    CHECK(f32_to_fp8(t, mx) == 0x7f);
    CHECK(f32_to_fp8(t, mx * 1.04f) == 0x7f);  // the midpoint past the largest (torch gives NaN)
    CHECK(f32_to_fp8(t, 1e30f) == 0x7f);
    CHECK(f32_to_fp8(t, -1e30f) == 0xff);
    CHECK(f32_to_fp8(t, inf) == 0x80);   // an infinity becomes the NaN (Triton's fnuz conversion)
    CHECK(f32_to_fp8(t, -inf) == 0x80);
    CHECK(f32_to_fp8(t, std::nanf("")) == 0x80);
    CHECK(f32_to_fp8(t, -std::nanf("")) == 0x80);
    CHECK(f32_to_fp8(t, -0.0f) == 0x00);  // no negative zero
    CHECK(f32_to_fp8(t, -1e-30f) == 0x00);
    CHECK(round_to(t, -1e-30f) == 0.0f);
    CHECK(!std::signbit(round_to(t, -1e-30f)));
    CHECK(std::isnan(round_to(t, inf)));
  }
  CHECK(f32_to_fp8(Scalar::F8E4B8, 1.0625f) == 0x40);  // tie between 1 (0x40) and 1.125: to even
  CHECK(f32_to_fp8(Scalar::F8E4B8, 1.1875f) == 0x42);  // tie between 1.125 and 1.25: to even (1.25)
  CHECK(f32_to_fp8(Scalar::F8E5B16, 1.125f) == 0x40);  // tie between 1 and 1.25
  CHECK(f32_to_fp8(Scalar::F8E4B8, std::ldexp(1.0f, -11)) == 0x00);  // half the smallest subnormal: to even (0)
  CHECK(f32_to_fp8(Scalar::F8E4B8, std::ldexp(3.0f, -11)) == 0x02);  // 1.5 subnormal steps: to even (2)
}

namespace {
// Triton's f32 -> float8e4b15 on NVIDIA GPUs, modelled on its instructions: cvt.rz.f16.f32, then per
// f16 the magnitude's bits min'ed with 1.75's (0x3F00; min.f16x2 gives the number where one side is
// NaN), 0x40 added, shifted right by 7, and the sign or'ed in.
uint8_t e4b15_model(float f) {
  uint32_t u = bits_of(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  double a = std::fabs(static_cast<double>(f));
  uint16_t h;  // |f| in f16, rounded toward zero
  if (std::isnan(f)) h = 0x7e00;
  else if (std::isinf(f)) h = 0x7c00;
  else {
    int e = a == 0 ? -14 : std::max(std::ilogb(a), -14);
    double q = std::ldexp(1.0, e - 10);
    double t = std::min(std::floor(a / q) * q, 65504.0);
    h = f32_to_f16(static_cast<float>(t));  // exact
  }
  bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
  if (nan || h > 0x3f00) h = 0x3f00;
  return static_cast<uint8_t>(((h + 0x40) >> 7) | (sign >> 8));
}
}  // namespace

TEST_CASE("fp8 e4b15: every bit pattern decodes as Triton's PTX widening (the f16 of S.0EEEE.MMM0000000) and encodes back") {
  for (int b = 0; b < 256; ++b) {
    CAPTURE(b);
    float want = f16_to_f32(static_cast<uint16_t>(((b & 0x80) << 8) | ((b & 0x7f) << 7)));
    float got = fp8_to_f32(Scalar::F8E4B15, static_cast<uint8_t>(b));
    CHECK(bits_of(got) == bits_of(want));  // every pattern finite, -0 included
    CHECK(fp8_bits(Scalar::F8E4B15, got) == b);  // a stored value keeps its byte
    if ((b & 0x7f) == 0x7f) CHECK(f32_to_fp8(Scalar::F8E4B15, got) == ((b & 0x80) | 0x7e));  // 1.875: conversions saturate at 1.75
    else CHECK(f32_to_fp8(Scalar::F8E4B15, got) == b);
  }
  CHECK(fp8_to_f32(Scalar::F8E4B15, 0x7f) == 1.875f);
  CHECK(fp8_to_f32(Scalar::F8E4B15, 0x01) == std::ldexp(1.0f, -17));
  CHECK(fp8_to_f32(Scalar::F8E4B15, 0x08) == std::ldexp(1.0f, -14));
}

TEST_CASE("fp8 e4b15: f32 conversion as Triton's (ties away from zero, saturation at 1.75, NaN to +-1.75)") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> vals = {0.0f, -0.0f, 1.75f, 1.8f, 1.8125f, 1.875f, 2.0f, 100.0f, 1e30f, inf, -inf,
                             std::nanf(""), -std::nanf(""), 1e-30f, -1e-30f, 65504.0f, 65520.0f, 1e5f};
  for (int b = 0; b < 127; ++b) {  // every midpoint between neighbours, and the f32s either side of it
    float lo = fp8_to_f32(Scalar::F8E4B15, static_cast<uint8_t>(b)), hi = fp8_to_f32(Scalar::F8E4B15, static_cast<uint8_t>(b + 1));
    float m = (lo + hi) / 2;
    for (float v : {m, std::nextafter(m, inf), std::nextafter(m, -inf)}) {
      vals.push_back(v);
      vals.push_back(-v);
    }
  }
  uint32_t seed = 7;
  for (int i = 0; i < 2000; ++i) {  // random magnitudes around the format's range
    seed = seed * 1664525u + 1013904223u;
    float v = std::ldexp(1.0f + static_cast<float>(seed >> 8) / 16777216.0f, static_cast<int>(seed % 24) - 20);
    vals.push_back(seed & 1 ? v : -v);
  }
  for (float v : vals) {
    CAPTURE(v);
    CHECK(f32_to_fp8(Scalar::F8E4B15, v) == e4b15_model(v));
  }
  CHECK(f32_to_fp8(Scalar::F8E4B15, 1.0625f) == 0x79);   // tie between 1 (0x78) and 1.125: away from zero
  CHECK(f32_to_fp8(Scalar::F8E4B15, -1.0625f) == 0xf9);
  CHECK(f32_to_fp8(Scalar::F8E4B15, std::ldexp(1.0f, -18)) == 0x01);  // half the smallest subnormal: away (1)
  CHECK(f32_to_fp8(Scalar::F8E4B15, 1.8f) == 0x7e);
  CHECK(f32_to_fp8(Scalar::F8E4B15, inf) == 0x7e);
  CHECK(f32_to_fp8(Scalar::F8E4B15, -inf) == 0xfe);
  CHECK(f32_to_fp8(Scalar::F8E4B15, std::nanf("")) == 0x7e);
  CHECK(f32_to_fp8(Scalar::F8E4B15, -0.0f) == 0x80);  // the sign kept
  CHECK(round_to(Scalar::F8E4B15, 1.875f) == 1.75f);
  CHECK(round_to(Scalar::F8E4B15, std::nanf("")) == 1.75f);
}

TEST_CASE("i8 and i16 wrap to their width") {
  CHECK(wrap_to(Scalar::I8, 127) == 127);
  CHECK(wrap_to(Scalar::I8, 128) == -128);
  CHECK(wrap_to(Scalar::I8, 255) == -1);
  CHECK(wrap_to(Scalar::I8, -129) == 127);
  CHECK(wrap_to(Scalar::I16, 32768) == -32768);
  CHECK(wrap_to(Scalar::I16, 65535 + 7) == 6);
  CHECK(wrap_to(Scalar::I32, int64_t{1} << 40) == int64_t{1} << 40);  // wider types unchanged
}

TEST_CASE("Buffer get/set of i8, i16 and fp8 elements") {
  Buffer b;
  for (Scalar t : {Scalar::I8, Scalar::I16, Scalar::F8E4M3, Scalar::F8E5M2}) {
    b.dtype = t;
    b.shape = {4};
    b.bytes.assign(b.size_bytes(), 0);
    CHECK(b.size_bytes() == static_cast<size_t>(4 * scalar_bytes(t)));
    b.set(0, -3);
    b.set(1, 0.3);
    b.set(2, 300);
    CHECK(b.get(0) == -3);
    if (t == Scalar::I8) CHECK(b.get(2) == 44);   // 300 mod 256
    if (t == Scalar::I16) CHECK(b.get(2) == 300);
    if (t == Scalar::F8E4M3) {
      CHECK(b.get(1) == 0.3125);  // 0.3 between 0.28125 and 0.3125: nearer the latter
      CHECK(b.get(2) == 288);     // 300 between 288 and 320
    }
    if (t == Scalar::F8E5M2) CHECK(b.get(2) == 320);  // 300 between 256 and 320
  }
}

TEST_CASE(".npy I/O of i8, i16 and fp8 buffers") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("dtsim-fp8-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (Scalar t : {Scalar::I8, Scalar::I16, Scalar::F8E4M3, Scalar::F8E5M2, Scalar::F8E4B15, Scalar::F8E4B8, Scalar::F8E5B16}) {
    CAPTURE(scalar_name(t));
    Buffer b;
    b.name = "x";
    b.dtype = t;
    b.shape = {2, 3};
    b.bytes.assign(b.size_bytes(), 0);
    for (int i = 0; i < 6; ++i) b.set(i, (i - 3) * 1.5);
    std::string path = (dir / (std::string(scalar_name(t)) + ".npy")).string();
    write_npy(path, b);
    // i8 and i16 as |i1 and <i2; fp8 widened to <f4 (numpy has no fp8), read back as the fp8 type.
    Buffer r = read_npy(path, "x", t);
    CHECK(r.dtype == t);
    CHECK(r.shape == b.shape);
    CHECK(r.bytes == b.bytes);
    NpyInfo info = read_npy_info(path);
    CHECK(info.dtype == (is_fp8(t) ? Scalar::F32 : t));
  }
  // Unsigned data for a signless buffer: the same bits.
  Buffer u;
  u.name = "u";
  u.dtype = Scalar::I8;
  u.shape = {2};
  u.bytes = {200, 7};
  std::string p8 = (dir / "u8.npy").string();
  write_npy(p8, u);
  std::string text;
  {
    std::FILE* f = std::fopen(p8.c_str(), "rb");
    REQUIRE(f);
    char buf[256];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    text.assign(buf, n);
  }
  size_t at = text.find("'|i1'");
  REQUIRE(at != std::string::npos);
  text.replace(at, 5, "'|u1'");
  std::string pu = (dir / "u8_unsigned.npy").string();
  {
    std::FILE* f = std::fopen(pu.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  Buffer r = read_npy(pu, "u", Scalar::I8);
  CHECK(r.dtype == Scalar::I8);
  CHECK(r.get(0) == -56);  // the bits of 200 as i8
  CHECK(read_npy(pu, "u", Scalar::F8E4M3).dtype == Scalar::F8E4M3);  // fp8 bit patterns
  CHECK_THROWS(read_npy(pu, "u", std::nullopt));  // |u1 alone means i1, and 200 is no boolean
  fs::remove_all(dir);
}
