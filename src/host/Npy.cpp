// .npy reading and writing (format versions 1.0-3.0, little-endian, C order) for --in / --out.
#include "host/Npy.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace dtsim {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

[[noreturn]] void npy_error(const std::string& path, const std::string& msg) {
  // The message names its file itself, so that it reads "x.npy: error: ...".
  throw UserError(path + ": error: " + msg);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) npy_error(path, std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) npy_error(path, "read failed");
  return ss.str();
}

// ---- a tiny reader for the header's Python dict literal: {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), } ----
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

  struct Header {
    std::string descr;
    bool fortran = false;
    Shape shape;
    bool has_descr = false, has_fortran = false, has_shape = false;
  };

  Header parse() {
    Header h;
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') break;
      std::string key = string_lit();
      expect(':');
      if (key == "descr") {
        h.descr = string_lit();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = bool_lit();
        h.has_fortran = true;
      } else if (key == "shape") {
        h.shape = tuple_lit();
        h.has_shape = true;
      } else {
        bad("unexpected key '" + key + "' in header");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      if (peek() != '}') bad("malformed header dictionary");
    }
    if (!h.has_descr || !h.has_fortran || !h.has_shape)
      bad("header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& msg) { npy_error(path_, "malformed .npy header: " + msg); }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() { return i_ < s_.size() ? s_[i_] : '\0'; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_lit() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') bad("expected a string");
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string v = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return v;
  }
  bool bool_lit() {
    skip_ws();
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  Shape tuple_lit() {
    expect('(');
    Shape sh;
    for (;;) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        return sh;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("expected a dimension in 'shape'");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        v = v * 10 + (s_[i_++] - '0');
        if (v > (int64_t(1) << 40)) bad("dimension too large");
      }
      sh.push_back(v);
      skip_ws();
      if (peek() == ',') ++i_;
      else if (peek() != ')') bad("expected ',' or ')' in 'shape'");
    }
  }

  const std::string& path_;
  const std::string& s_;
  size_t i_ = 0;
};

uint32_t read_le(const std::string& s, size_t at, int bytes) {
  uint32_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | static_cast<uint8_t>(s[at + static_cast<size_t>(k)]);
  return v;
}

// The file's element type: descr -> (scalar type as stored, bytes per element). `want` decides how
// to read `<u2` (bf16 bit patterns) and `|u1`.
struct FileType {
  Scalar stored;
  int bytes;
  bool bf16_from_u2 = false;
  bool bf16_from_f4 = false;
  bool bool_from_u1 = false;
  bool fp8_from_f4 = false;  // f32 values rounded to the fp8 type `stored`
};

FileType file_type(const std::string& path, const std::string& descr, std::optional<Scalar> want) {
  if (descr.size() < 3) npy_error(path, "unsupported dtype '" + descr + "'");
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order == '>') npy_error(path, "big-endian data ('" + descr + "') is not supported; save it little-endian");
  if (order != '<' && order != '|' && order != '=')
    npy_error(path, "unsupported dtype '" + descr + "'");
  bool bf16 = want && *want == Scalar::BF16;
  bool fp8 = want && is_fp8(*want);
  if (code == "f2") return {Scalar::F16, 2};
  if (code == "f4" && fp8) return FileType{*want, 4, false, false, false, true};
  if (code == "f4") return bf16 ? FileType{Scalar::BF16, 4, false, true} : FileType{Scalar::F32, 4};
  if (code == "i1") return {Scalar::I8, 1};
  if (code == "i2") return {Scalar::I16, 2};
  // Unsigned data for a signless buffer: the same bits (uint8 for i8 or fp8 bit patterns, uint16 for i16).
  if (code == "u1" && want && (*want == Scalar::I8 || fp8)) return {*want, 1};
  if (code == "u2" && want && *want == Scalar::I16) return {Scalar::I16, 2};
  if (code == "f8") return {Scalar::F64, 8};
  if (code == "i4") return {Scalar::I32, 4};
  if (code == "i8") return {Scalar::I64, 8};
  if (code == "b1") return {Scalar::I1, 1};
  if (code == "u1") return {Scalar::I1, 1, false, false, true};
  if (code == "u2" && bf16) return {Scalar::BF16, 2, true};
  npy_error(path, "unsupported dtype '" + descr +
                      "' (supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |b1 |u1, <u2 for i16 buffers or holding bf16 bit patterns)");
}

std::string descr_of(Scalar s) {
  switch (s) {
    case Scalar::I1: return "|b1";
    case Scalar::I8: return "|i1";
    case Scalar::I16: return "<i2";
    case Scalar::F8E4M3:
    case Scalar::F8E5M2:
    case Scalar::F8E4B15:
    case Scalar::F8E4B8:
    case Scalar::F8E5B16: return "<f4";  // numpy has no fp8: written as f32 (exact)
    case Scalar::I32: return "<i4";
    case Scalar::I64: return "<i8";
    case Scalar::F16: return "<f2";
    case Scalar::BF16: return "<f4";  // numpy has no bf16: written as f32
    case Scalar::F32: return "<f4";
    case Scalar::F64: return "<f8";
  }
  return "";
}

// numpy's spelling of a shape: "()", "(10,)", "(3, 4)".
std::string shape_tuple(const Shape& s) {
  std::string out = "(";
  if (s.size() == 1) {
    out += std::to_string(s[0]);
    return out += ",)";
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + ")";
}

bool host_is_little_endian() {
  uint16_t one = 1;
  uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

}  // namespace

namespace {

// What the header says and where the data lies, checked against the file's size.
struct Layout {
  Shape shape;
  FileType ft{Scalar::F32, 4};
  size_t data_at = 0;
  int64_t numel = 0;
  size_t need = 0;  // bytes of data
};

// `head`: the file's first bytes (at least up to the end of the header when the file has them);
// `file_size`: the whole file's size.
Layout parse_layout(const std::string& head, size_t file_size, const std::string& path, std::optional<Scalar> want) {
  if (head.size() < kMagicLen + 2 || head.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    npy_error(path, "not a .npy file (bad magic string)");
  int major = static_cast<uint8_t>(head[6]);
  if (major < 1 || major > 3)
    npy_error(path, "unsupported .npy format version " + std::to_string(major) + "." +
                        std::to_string(static_cast<uint8_t>(head[7])));
  size_t len_bytes = major == 1 ? 2 : 4;
  if (head.size() < 8 + len_bytes) npy_error(path, "truncated header");
  size_t header_len = read_le(head, 8, static_cast<int>(len_bytes));
  size_t header_at = 8 + len_bytes;
  if (head.size() < header_at + header_len) npy_error(path, "truncated header");
  std::string header = head.substr(header_at, header_len);
  HeaderParser::Header h = HeaderParser(path, header).parse();
  if (h.fortran) npy_error(path, "Fortran-order data is not supported; save a C-contiguous array");
  Layout l;
  l.ft = file_type(path, h.descr, want);
  l.shape = h.shape;
  l.data_at = header_at + header_len;
  size_t have = file_size - l.data_at;
  // Bytes the shape needs, computed without overflow: once a partial product exceeds the file, the
  // data is short (unless a later extent is 0).
  bool empty = false, too_big = false;
  size_t need = static_cast<size_t>(l.ft.bytes);
  for (int64_t d : h.shape) {
    empty = empty || d == 0;
    if (d != 0 && need > have / static_cast<size_t>(d)) too_big = true;
    if (!too_big) need *= static_cast<size_t>(d);
  }
  if (empty) need = 0;
  if (!empty && too_big)
    npy_error(path, "truncated data: shape " + shape_tuple(h.shape) + " needs more than the " + std::to_string(have) +
                        " bytes the file has");
  if (have < need)
    npy_error(path, "truncated data: shape " + shape_tuple(h.shape) + " needs " + std::to_string(need) +
                        " bytes, the file has " + std::to_string(have));
  if (have > need) npy_error(path, "trailing bytes after the array data");
  l.need = need;
  l.numel = empty ? 0 : shape_numel(h.shape);  // an empty shape may multiply past int64 otherwise
  return l;
}

Buffer empty_buffer(const Layout& l, const std::string& name) {
  Buffer b;
  b.name = name;
  b.dtype = l.ft.stored;
  b.shape = l.shape;
  b.io = BufIO::In;
  b.defined = true;
  return b;
}

// Converts `count` file elements at `src` (element `first` of the array on) into `b.bytes`, which
// already has room for them.
void convert(const Layout& l, const char* src, int64_t first, int64_t count, Buffer& b, const std::string& path) {
  if (l.ft.fp8_from_f4) {
    for (int64_t i = 0; i < count; ++i) {
      float f;
      std::memcpy(&f, src + i * 4, 4);
      b.as<uint8_t>()[first + i] = f32_to_fp8(l.ft.stored, f);
    }
  } else if (l.ft.bf16_from_f4) {
    for (int64_t i = 0; i < count; ++i) {
      float f;
      std::memcpy(&f, src + i * 4, 4);
      b.as<uint16_t>()[first + i] = f32_to_bf16(f);
    }
  } else if (l.ft.bool_from_u1) {
    for (int64_t i = 0; i < count; ++i) {
      uint8_t v = static_cast<uint8_t>(src[i]);
      if (v > 1) npy_error(path, "uint8 data for a boolean buffer holds " + std::to_string(v) + " at index " +
                                     std::to_string(first + i) + " (only 0 and 1 are allowed)");
      b.bytes[static_cast<size_t>(first + i)] = v;
    }
  } else {
    size_t n = static_cast<size_t>(count) * static_cast<size_t>(l.ft.bytes);
    if (n) std::memcpy(b.bytes.data() + static_cast<size_t>(first) * static_cast<size_t>(l.ft.bytes), src, n);
    if (l.ft.stored == Scalar::I1)
      for (int64_t i = 0; i < count; ++i) b.bytes[static_cast<size_t>(first + i)] = b.bytes[static_cast<size_t>(first + i)] != 0;
  }
}

// Closes a FILE* when the read ends, however it ends.
struct FileCloser {
  FILE* f;
  ~FileCloser() {
    if (f) std::fclose(f);
  }
};

}  // namespace

NpyInfo read_npy_info(const std::string& path, std::optional<Scalar> want) {
  Buffer b = read_npy(path, "", want, {}, /*header_only=*/true);
  return NpyInfo{b.dtype, b.shape};
}

Buffer read_npy(const std::string& path, const std::string& name, std::optional<Scalar> want, const NpyPoll& poll,
                bool header_only) {
  if (!host_is_little_endian()) npy_error(path, ".npy I/O needs a little-endian host");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) npy_error(path, std::string("cannot open file: ") + std::strerror(errno));
  FileCloser closer{f};
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    // A pipe or device: read it whole (its size is known only at its end).
    closer.f = nullptr;
    std::fclose(f);
    return parse_npy(read_all(path), path, name, want);
  }
  size_t file_size = static_cast<size_t>(st.st_size);
  // The header: the fixed part, then as many bytes as its length field says.
  std::string head(std::min<size_t>(file_size, 12), '\0');
  if (std::fread(head.data(), 1, head.size(), f) != head.size()) npy_error(path, "read failed");
  if (head.size() >= 10 && head.compare(0, kMagicLen, kMagic, kMagicLen) == 0) {
    int major = static_cast<uint8_t>(head[6]);
    size_t len_bytes = major == 1 ? 2 : 4;
    if ((major >= 1 && major <= 3) && head.size() >= 8 + len_bytes) {
      size_t end = std::min<size_t>(file_size, 8 + len_bytes + read_le(head, 8, static_cast<int>(len_bytes)));
      size_t at = head.size();
      if (end > at) {
        head.resize(end);
        if (std::fread(head.data() + at, 1, end - at, f) != end - at) npy_error(path, "read failed");
      }
    }
  }
  Layout l = parse_layout(head, file_size, path, want);
  Buffer b = empty_buffer(l, name);
  if (header_only) return b;
  // The data, a piece at a time: a signal or --timeout (`poll` throws) stops a huge file within a
  // piece. The buffer's memory is reserved at once but touched (zeroed, then read into) piece by
  // piece, so that no single step takes long.
  size_t total = static_cast<size_t>(l.numel) * static_cast<size_t>(scalar_bytes(l.ft.stored));
  b.bytes.reserve(total);
  if (std::fseek(f, static_cast<long>(l.data_at), SEEK_SET) != 0) npy_error(path, "read failed");
  constexpr int64_t kPieceBytes = int64_t(8) << 20;
  int64_t per_piece = std::max<int64_t>(1, kPieceBytes / l.ft.bytes);
  std::vector<char> piece;
  for (int64_t first = 0; first < l.numel; first += per_piece) {
    if (poll) poll();
    int64_t count = std::min(per_piece, l.numel - first);
    size_t n = static_cast<size_t>(count) * static_cast<size_t>(l.ft.bytes);
    b.bytes.resize(static_cast<size_t>(first + count) * static_cast<size_t>(scalar_bytes(l.ft.stored)));
    bool direct = !l.ft.bf16_from_f4 && !l.ft.bool_from_u1 && !l.ft.fp8_from_f4;
    char* dst = direct ? reinterpret_cast<char*>(b.bytes.data()) + static_cast<size_t>(first) * static_cast<size_t>(l.ft.bytes)
                       : (piece.resize(n), piece.data());
    if (std::fread(dst, 1, n, f) != n) npy_error(path, std::ferror(f) ? "read failed" : "truncated data (the file shrank while being read)");
    if (direct) {
      if (l.ft.stored == Scalar::I1)
        for (int64_t i = 0; i < count; ++i) b.bytes[static_cast<size_t>(first + i)] = b.bytes[static_cast<size_t>(first + i)] != 0;
    } else {
      convert(l, piece.data(), first, count, b, path);
    }
  }
  if (poll) poll();
  return b;
}

Buffer parse_npy(const std::string& data, const std::string& path, const std::string& name, std::optional<Scalar> want) {
  Layout l = parse_layout(data, data.size(), path, want);
  Buffer b = empty_buffer(l, name);
  b.bytes.resize(static_cast<size_t>(l.numel) * static_cast<size_t>(scalar_bytes(l.ft.stored)));
  convert(l, data.data() + l.data_at, 0, l.numel, b, path);
  return b;
}

OutputContent npy_content(const Buffer& b) {
  return [&b](const std::function<void(const char*, size_t)>& put) {
    std::string header = "{'descr': '" + descr_of(b.dtype) + "', 'fortran_order': False, 'shape': " + shape_tuple(b.shape) + ", }";
    // Pad with spaces so that the data starts at a multiple of 64 bytes; the header ends in '\n'.
    size_t total = kMagicLen + 2 + 2 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    bool v2 = header.size() > 0xffff;
    std::string head(kMagic, kMagicLen);
    head += static_cast<char>(v2 ? 2 : 1);
    head += '\0';
    uint32_t len = static_cast<uint32_t>(header.size());
    for (size_t k = 0; k < (v2 ? 4u : 2u); ++k) head += static_cast<char>((len >> (8 * k)) & 0xff);
    head += header;
    put(head.data(), head.size());
    if (b.dtype == Scalar::BF16 || is_fp8(b.dtype)) {  // widened to <f4 a piece at a time
      std::vector<float> piece;
      constexpr int64_t kPiece = int64_t(1) << 20;
      for (int64_t i = 0; i < b.numel(); i += kPiece) {
        int64_t n = std::min(kPiece, b.numel() - i);
        piece.resize(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j)
          piece[static_cast<size_t>(j)] = b.dtype == Scalar::BF16 ? bf16_to_f32(b.as<uint16_t>()[i + j]) : fp8_to_f32(b.dtype, b.as<uint8_t>()[i + j]);
        put(reinterpret_cast<const char*>(piece.data()), static_cast<size_t>(n) * 4);
      }
    } else {
      put(reinterpret_cast<const char*>(b.data()), b.size_bytes());
    }
  };
}

void write_npy(const std::string& path, const Buffer& b) {
  if (!host_is_little_endian()) throw UserError(path + ": error: .npy I/O needs a little-endian host");
  OutputSet set;
  set.add(path, "file");
  set.write({npy_content(b)});
}

void check_output_path(const std::string& path, const std::string& what) { check_output_target(path, what); }

}  // namespace dtsim
