// Output files that never damage what they are written over, checked before the work that makes
// them, and written as a set (all or none).
//
// A target is one of: a new file, a regular file (replaced atomically: written to a temporary file
// beside it, `NAME.tmp.PID`, then renamed over it), or a stream, written through in place and
// never replaced: a character device (/dev/null, /dev/full, a terminal), a FIFO (it must have a
// reader) or an already open descriptor (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N). A
// symbolic link is followed: the file it points to is replaced and the link stays a link (a link to
// nothing is refused). Block devices, sockets and directories are refused. Two outputs of one set
// that name the same file (the same path, another path to it, a hard link) are refused.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace dtsim {

struct OutputTarget {
  enum Kind { NewFile, RegularFile, Stream } kind = NewFile;
  std::string path;  // as given (messages)
  std::string real;  // where it is written (symlinks followed)
  std::string what;  // the flag that names it, e.g. "--out z", "-o"
  std::string identity;  // equal for two paths of the same file
};

// Checks that `path` can be written as output `what`; UserError "path: error: cannot write WHAT:
// why" otherwise (a missing or read-only directory, a directory, a block device, a socket, a
// dangling symlink, a character device or FIFO that cannot be opened for writing).
OutputTarget check_output_target(const std::string& path, const std::string& what);

// The bytes of one output, given piece by piece to `put` (which may throw to stop the writing).
using OutputContent = std::function<void(const std::function<void(const char*, size_t)>& put)>;

class OutputSet {
 public:
  // Checks the target (check_output_target) and that no earlier output of the set is the same
  // file: UserError "path: error: cannot write WHAT: it is also the output of OTHER".
  void add(const std::string& path, const std::string& what);
  size_t size() const { return targets_.size(); }
  const OutputTarget& target(size_t i) const { return targets_[i]; }
  // Writes output i's content (contents.size() == size()): every regular file to its temporary
  // file first, then the streams, then every temporary file renamed over its target. `poll` is
  // called between pieces of at most a few MiB and may throw (a stop request): then, as on any
  // write error (UserError "path: error: cannot write file: why", e.g. "No space left on device"),
  // every temporary file is removed and no target was replaced. Temporary files are registered
  // (host/Interrupt.h), so a signal that ends the process removes them too.
  void write(const std::vector<OutputContent>& contents, const std::function<void()>& poll = {}) const;

 private:
  std::vector<OutputTarget> targets_;
};

// One output, checked and written at once (emit -o, viz -o, tune --csv).
void write_output_file(const std::string& path, const std::string& what, const std::string& text,
                       const std::function<void()>& poll = {});

}  // namespace dtsim
