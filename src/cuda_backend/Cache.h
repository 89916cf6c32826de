// Backend-internal: the compile caches (PTX from libNVVM in Libnvvm.cpp, cubins from ptxas in
// Ptxas.cpp) share one folder, CudaOptions::ptx_cache_dir. A file is named by two independent 64-bit
// hashes of everything that decides its content, written whole (temporary file + rename, so a
// concurrent reader, another thread or process, never sees half a file) and read back as bytes.
#pragma once

#include <string>

namespace dtsim::cache {

// DIR/<hash><hash>EXT for `key`.
std::string file(const std::string& dir, const std::string& key, const char* ext);
// The file's bytes; "" when it is missing or unreadable.
std::string load(const std::string& path);
// Stores `bytes` under `path`, creating the folder. A cache that cannot be written is no error: the
// next run compiles again.
void store(const std::string& path, const std::string& bytes);

}  // namespace dtsim::cache
