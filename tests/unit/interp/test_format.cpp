// Printing of values (format_value, format_summary): numpy-style tiles against the golden file
// tests/golden/print/tiles.expected (DTSIM_UPDATE_GOLDEN=1 rewrites it), plus the rules one by one.
// The golden case also runs as the CTest `golden/print` (label golden).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "interp/Interp.h"

using namespace dtsim;
namespace fs = std::filesystem;

namespace {

template <class T> Value make(Scalar s, Shape shape, const std::function<double(int64_t)>& f) {
  std::vector<size_t> xs(shape.begin(), shape.end());
  xt::xarray<T> a = xt::xarray<T>::from_shape(xs);
  for (size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<T>(f(static_cast<int64_t>(i)));
  return Value{Type{s, false, shape}, a};
}
Value f32(Shape s, const std::function<double(int64_t)>& f) { return make<float>(Scalar::F32, s, f); }
Value f64(Shape s, const std::function<double(int64_t)>& f) { return make<double>(Scalar::F64, s, f); }
Value i32(Shape s, const std::function<double(int64_t)>& f) { return make<int32_t>(Scalar::I32, s, f); }
Value i1(Shape s, const std::function<double(int64_t)>& f) { return make<uint8_t>(Scalar::I1, s, f); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every case of the golden file: a title line, then the rendering.
std::string golden_text() {
  std::ostringstream o;
  auto show = [&](const std::string& title, const std::string& text) { o << "== " << title << "\n" << text << "\n"; };
  Value f4 = f32({4}, [](int64_t i) { return std::vector<double>{-0.5, 0.25, 1, 12.125}[static_cast<size_t>(i)]; });
  Value f35 = f32({3, 5}, [](int64_t i) { return static_cast<double>(i) * 0.37 - 2; });
  Value fbig = f32({128, 128}, [](int64_t i) { return static_cast<double>(i) / 7 - 1000; });
  Value i4 = i32({4}, [](int64_t i) { return i * 7 - 10; });
  Value i35 = i32({3, 5}, [](int64_t i) { return (i / 5) * 100 - (i % 5) * 3; });
  Value ibig = i32({128, 128}, [](int64_t i) { return (i / 128) * 128 - (i % 128); });
  Value m4 = i1({4}, [](int64_t i) { return i != 2; });
  Value m35 = i1({3, 5}, [](int64_t i) { return (i / 5 + i % 5) % 3 != 0; });
  Value mbig = i1({128, 128}, [](int64_t i) { return i / 128 >= i % 128; });
  show("f32[4]", format_value(f4));
  show("f32[3, 5]", format_value(f35));
  show("f32[128, 128]", format_value(fbig));
  show("i32[4]", format_value(i4));
  show("i32[3, 5]", format_value(i35));
  show("i32[128, 128]", format_value(ibig));
  show("f32[4] masked (lane 2 off)", format_value(f4, &m4));
  show("f32[3, 5] masked", format_value(f35, &m35));
  show("i32[3, 5] masked", format_value(i35, &m35));
  show("f32[128, 128] masked (upper triangle off)", format_value(fbig, &mbig));
  show("i32[128, 128] masked (upper triangle off)", format_value(ibig, &mbig));
  show("i1[3, 5]", format_value(m35));
  show("f32[4] exponent form (ratio > 1000)", format_value(f32({4}, [](int64_t i) { return std::vector<double>{1e-5, 2.5e-5, 1, 3}[static_cast<size_t>(i)]; })));
  show("f32[4] exponent form (>= 1e8)", format_value(f32({4}, [](int64_t i) { return 1.5e8 * static_cast<double>(i + 1); })));
  show("f32[4] nan and inf", format_value(f32({4}, [](int64_t i) { return std::vector<double>{NAN, 1.5, -INFINITY, 0}[static_cast<size_t>(i)]; })));
  show("f32[4] 0.1 steps (f32 precision)", format_value(f32({4}, [](int64_t i) { return 0.1 * static_cast<double>(i + 1); })));
  show("f64[4] 0.1 steps (f64 precision)", format_value(f64({4}, [](int64_t i) { return 0.1 * static_cast<double>(i + 1); })));
  show("f32[4] more than 8 digits", format_value(f32({4}, [](int64_t i) { return 1.0 / 3.0 + static_cast<double>(i); })));
  show("i32[2, 3, 4]", format_value(i32({2, 3, 4}, [](int64_t i) { return i; })));
  show("f32[32] wraps at 75 columns", format_value(f32({32}, [](int64_t i) { return static_cast<double>(i) * 1.25 - 7; })));
  show("i32[2048] elided", format_value(i32({2048}, [](int64_t i) { return i; })));
  show("f32[3, 5] indented 4 columns", "x = " + format_value(f35, nullptr, 4));
  show("summary f32[128, 128]", format_summary(fbig));
  show("summary f32[128, 128] masked", format_summary(fbig, &mbig));
  show("summary i32[128, 128]", format_summary(ibig));
  show("one line: i32[4], then f32[128, 128]", format_one_line(i4) + "\n" + format_one_line(fbig));
  return o.str();
}

}  // namespace

TEST_CASE("format golden: tiles print as tests/golden/print/tiles.expected") {
  const bool update = std::getenv("DTSIM_UPDATE_GOLDEN") && std::string(std::getenv("DTSIM_UPDATE_GOLDEN")) == "1";
  const fs::path golden = fs::path(DTSIM_SOURCE_DIR) / "tests/golden/print/tiles.expected";
  std::string now = golden_text();
  if (update) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << now;
    return;
  }
  REQUIRE_MESSAGE(fs::exists(golden), "missing " << golden.string() << " (run with DTSIM_UPDATE_GOLDEN=1)");
  CHECK(slurp(golden) == now);
}

TEST_CASE("format rules") {
  // floats: decimal points aligned, each element its own shortest digits padded with spaces
  CHECK(format_value(f32({3}, [](int64_t i) { return std::vector<double>{0.5, 1.25, -3}[static_cast<size_t>(i)]; })) ==
        "[ 0.5   1.25 -3.  ]");
  // integers right-aligned, no decimals
  CHECK(format_value(i32({3}, [](int64_t i) { return std::vector<double>{1, -2, 30}[static_cast<size_t>(i)]; })) == "[ 1 -2 30]");
  // 2-D: one row per line, the second row indented under the first
  CHECK(format_value(i32({2, 2}, [](int64_t i) { return i; })) == "[[0 1]\n [2 3]]");
  CHECK(format_value(i32({2, 2}, [](int64_t i) { return i; }), nullptr, 3) == "[[0 1]\n    [2 3]]");
  // elision keeps 3 items at each end
  CHECK(format_value(i32({1001}, [](int64_t i) { return i; })) == "[   0    1    2 ...  998  999 1000]");
  CHECK(format_value(i32({1000}, [](int64_t i) { return i; })).find("...") == std::string::npos);
  // masked lanes do not count for the precision
  Value x = f32({2}, [](int64_t i) { return i ? 0.125 : 1; });
  Value m = i1({2}, [](int64_t i) { return i == 0; });
  CHECK(format_value(x, &m) == "[1. --]");
  CHECK(format_summary(x, &m) == "f32[2] (1 of 2 lanes active) min=1 max=1 mean=1");
  // scalars keep their shortest form
  CHECK(format_value(f32({}, [](int64_t) { return 0.1; })) == "0.1");
}
