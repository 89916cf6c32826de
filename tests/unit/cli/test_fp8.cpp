// Unit tests of the fp8 and narrow-integer element formats (host/Buffers.h): every fp8 bit pattern
// decoded and encoded again, rounding from f32 checked against torch's conversion (fp8_tables.inc),
// saturation by hand, i8/i16 wraparound, and .npy I/O of the new types.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>

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
  for (Scalar t : {Scalar::I8, Scalar::I16, Scalar::F8E4M3, Scalar::F8E5M2}) {
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
