// .npy files (format 1.0-3.0, little-endian, C order): read into / write from a Buffer.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "host/Buffers.h"
#include "host/Output.h"

namespace dtsim {

// Reads `path`; dtype from the header (<f2 -> f16, <f4, <f8, |i1 -> i8, <i2 -> i16, <i4, <i8, |b1;
// bf16 stored as <u2 or <f4 is read only when `want` is BF16; fp8 from <f4 (rounded) or |u1 bit
// patterns when `want` is an fp8 type; |u1 as i8 and <u2 as i16 (the same bits) when `want` is that
// type, |u1 as i1 otherwise). UserError "path: error: ..." on a missing, truncated or malformed
// file, or an unsupported dtype.
// The data is read a piece (8 MiB) at a time; `poll`, when given, is called before each piece and
// may throw (host/Interrupt.h's WorkStopped) to stop the read of a huge file. A FIFO or device is
// read whole first. `header_only`: checks the header against the file's size, reads no data (the
// buffer has its dtype and shape, no bytes): see read_npy_info.
using NpyPoll = std::function<void()>;
Buffer read_npy(const std::string& path, const std::string& name, std::optional<Scalar> want = std::nullopt,
                const NpyPoll& poll = {}, bool header_only = false);
// The dtype and shape of the array in `path` (as read_npy would read it), from its header alone.
struct NpyInfo {
  Scalar dtype;
  Shape shape;
};
NpyInfo read_npy_info(const std::string& path, std::optional<Scalar> want = std::nullopt);
// The same from the file's bytes (`path` only names it in messages).
Buffer parse_npy(const std::string& data, const std::string& path, const std::string& name,
                 std::optional<Scalar> want = std::nullopt);
// The bytes of `b` as a .npy file (format 1.0, or 2.0 for a long header), given in pieces without
// copying the data (bf16 is written as <f4, numpy having no bf16). `b` must outlive the content.
OutputContent npy_content(const Buffer& b);
// Writes one .npy file as an OutputSet does (host/Output.h): atomically over a regular file,
// through a character device or FIFO; nothing is left behind on failure. UserError when the file
// cannot be written.
void write_npy(const std::string& path, const Buffer& b);
// Checks, before a run, that an output file can be written at `path` (check_output_target).
// UserError "path: error: cannot write WHAT: ..." otherwise (`what` names the flag, e.g. "--out z").
void check_output_path(const std::string& path, const std::string& what);

}  // namespace dtsim
