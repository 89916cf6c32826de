// Unit tests of the .npy reader and writer: round trips per dtype, and the precise error for each
// kind of bad file.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "host/Interrupt.h"
#include "host/Npy.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("dtsim-npy-test-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return (d / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A v1.0 .npy file with the given header dict and raw data.
std::string npy_bytes(const std::string& dict, const std::string& data) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

std::string error_of(const std::string& path, std::optional<Scalar> want = std::nullopt) {
  try {
    read_npy(path, "x", want);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

Buffer make(Scalar t, Shape s) {
  Buffer b;
  b.name = "b";
  b.dtype = t;
  b.shape = s;
  b.bytes.resize(static_cast<size_t>(shape_numel(s) * scalar_bytes(t)));
  b.defined = true;
  return b;
}

}  // namespace

TEST_CASE("npy round trip for every dtype") {
  for (Scalar t : {Scalar::I1, Scalar::I32, Scalar::I64, Scalar::F16, Scalar::F32, Scalar::F64}) {
    Buffer b = make(t, {3, 5});
    for (int64_t i = 0; i < b.numel(); ++i) b.set(i, t == Scalar::I1 ? (i % 3 == 0) : (i - 7) * 0.5);
    if (is_int(t) && t != Scalar::I1)
      for (int64_t i = 0; i < b.numel(); ++i) b.set(i, static_cast<double>(i - 7));
    std::string p = temp_path(std::string("rt_") + scalar_name(t) + ".npy");
    write_npy(p, b);
    Buffer r = read_npy(p, "b", t);
    CHECK(r.dtype == t);
    CHECK(r.shape == Shape{3, 5});
    CHECK(r.bytes == b.bytes);
    CHECK(r.defined);
  }
}

TEST_CASE("npy: bf16 is written as f32 and read back as bf16") {
  Buffer b = make(Scalar::BF16, {4});
  for (int i = 0; i < 4; ++i) b.set(i, 1.5 * i - 2);
  std::string p = temp_path("bf16.npy");
  write_npy(p, b);
  Buffer asf32 = read_npy(p, "b");
  CHECK(asf32.dtype == Scalar::F32);
  CHECK(asf32.get(3) == doctest::Approx(2.5));
  Buffer asbf16 = read_npy(p, "b", Scalar::BF16);
  CHECK(asbf16.dtype == Scalar::BF16);
  CHECK(asbf16.bytes == b.bytes);
}

TEST_CASE("npy: header shapes and data alignment") {
  Buffer s = make(Scalar::F32, {7});
  std::string p = temp_path("shape.npy");
  write_npy(p, s);
  std::ifstream in(p, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(all.find("'shape': (7,)") != std::string::npos);
  CHECK(all.size() % 64 == 28 % 64);  // 64-byte header block + 7 * 4 data bytes
  CHECK((all.size() - 28) % 64 == 0);
}

TEST_CASE("npy: precise errors") {
  std::string p = temp_path("bad.npy");
  CHECK(error_of(temp_path("absent.npy")).find("absent.npy: error: cannot open file") != std::string::npos);

  write_bytes(p, "hello world, not numpy");
  CHECK(error_of(p).find("bad magic") != std::string::npos);

  write_bytes(p, std::string("\x93NUMPY\x01\x00\x40\x00{'descr'", 18));
  CHECK(error_of(p).find("truncated header") != std::string::npos);

  write_bytes(p, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(12, '\0')));
  CHECK(error_of(p).find("truncated data") != std::string::npos);

  write_bytes(p, npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0')));
  CHECK(error_of(p).find("Fortran-order") != std::string::npos);

  write_bytes(p, npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')));
  CHECK(error_of(p).find("big-endian") != std::string::npos);

  write_bytes(p, npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')));
  CHECK(error_of(p).find("unsupported dtype '<c8'") != std::string::npos);

  write_bytes(p, npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", std::string(4, '\0')));
  CHECK(error_of(p).find("unsupported dtype '<u2'") != std::string::npos);
  CHECK(error_of(p, Scalar::BF16).empty());  // bf16 bit patterns

  write_bytes(p, npy_bytes("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')));
  CHECK(error_of(p).find("malformed .npy header") != std::string::npos);

  write_bytes(p, npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", std::string("\x01\x07", 2)));
  CHECK(error_of(p).find("only 0 and 1") != std::string::npos);
}

TEST_CASE("npy: a failed write leaves nothing behind") {
  Buffer b = make(Scalar::F32, {2});
  std::string dir = temp_path("no_such_dir");
  CHECK_THROWS_AS(write_npy(dir + "/sub/out.npy", b), UserError);
  CHECK(!fs::exists(dir + "/sub/out.npy"));
}

TEST_CASE("npy: reads version 2.0 and 3.0 headers") {
  for (char v : {'\x02', '\x03'}) {
    std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    h.append((64 - (12 + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += v;
    bytes += '\0';
    uint32_t n = static_cast<uint32_t>(h.size());
    for (int k = 0; k < 4; ++k) bytes += static_cast<char>((n >> (8 * k)) & 0xff);
    int32_t data[2] = {5, -6};
    bytes += h + std::string(reinterpret_cast<const char*>(data), 8);
    std::string p = temp_path("v2.npy");
    write_bytes(p, bytes);
    Buffer r = read_npy(p, "x");
    CHECK(r.dtype == Scalar::I32);
    CHECK(r.get(1) == -6);
  }
}

TEST_CASE("npy: a huge shape in a small file is truncated data, not an overflow") {
  std::string p = temp_path("huge.npy");
  write_bytes(p, npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776, 64), }",
                           std::string(64, 0)));
  CHECK(error_of(p).find("truncated data") != std::string::npos);
  write_bytes(p, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(16, 0)));
  CHECK(error_of(p).find("trailing bytes") != std::string::npos);
}

TEST_CASE("npy: a file is read in pieces, polled before each, and agrees with parse_npy") {
  // 5 million f32 (20 MB, three 8 MiB pieces), with a pattern that shows a misplaced piece.
  const int64_t n = 5'000'000;
  std::string data(static_cast<size_t>(n) * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    float f = static_cast<float>(i % 1000003) - 7.5f;
    std::memcpy(&data[static_cast<size_t>(i) * 4], &f, 4);
  }
  std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (5000000,), }", data);
  std::string p = temp_path("pieces.npy");
  write_bytes(p, bytes);
  int polls = 0;
  Buffer b = read_npy(p, "x", std::nullopt, [&] { ++polls; });
  CHECK(polls >= 3);
  REQUIRE(b.bytes.size() == data.size());
  CHECK(std::memcmp(b.bytes.data(), data.data(), data.size()) == 0);
  Buffer same = parse_npy(bytes, p, "x");
  CHECK(same.bytes == b.bytes);
  // bf16 read from <f4 converts piece by piece too.
  Buffer h = read_npy(p, "x", Scalar::BF16);
  CHECK(h.dtype == Scalar::BF16);
  CHECK(h.bytes == parse_npy(bytes, p, "x", Scalar::BF16).bytes);
  // A poll that throws stops the read between pieces; the exception comes through.
  int calls = 0;
  CHECK_THROWS_AS(read_npy(p, "x", std::nullopt, [&] {
                    if (++calls == 2) throw WorkStopped{false, "while reading"};
                  }),
                  WorkStopped);
  CHECK(calls == 2);
  // The header alone: dtype and shape, no data read (a file truncated after the header is still
  // refused, by its size).
  NpyInfo info = read_npy_info(p);
  CHECK(info.dtype == Scalar::F32);
  CHECK(info.shape == Shape{5'000'000});
  write_bytes(p, bytes.substr(0, bytes.size() - 4));
  CHECK_THROWS_WITH_AS(read_npy_info(p), doctest::Contains("truncated data"), UserError);
  CHECK(error_of(p).find("truncated data: shape (5000000,) needs") != std::string::npos);
  fs::remove(p);
}
