// Output targets and all-or-none writing (see Output.h).
#include "host/Output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "host/Interrupt.h"
#include "ir/Diag.h"

namespace dtsim {

namespace {

[[noreturn]] void cannot(const std::string& path, const std::string& what, const std::string& why) {
  throw UserError(path + ": error: cannot write " + what + ": " + why);
}

[[noreturn]] void write_failed(const std::string& path, int err) {
  throw UserError(path + ": error: cannot write file: " + std::strerror(err));
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// Paths that name a descriptor this process already has open: written through, whatever it is.
bool names_open_descriptor(const std::string& p) {
  if (p == "/dev/stdout" || p == "/dev/stderr" || starts_with(p, "/dev/fd/") || starts_with(p, "/proc/self/fd/")) return true;
  if (!starts_with(p, "/proc/")) return false;
  size_t i = 6;
  while (i < p.size() && p[i] >= '0' && p[i] <= '9') ++i;
  return i > 6 && p.compare(i, 4, "/fd/") == 0;
}

// The descriptor of this process that `p` names (/dev/stdout, /dev/fd/N, ...), else -1.
int descriptor_of(const std::string& p) {
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  for (const char* pre : {"/dev/fd/", "/proc/self/fd/"})
    if (starts_with(p, pre)) {
      std::string n = p.substr(std::strlen(pre));
      if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
      return std::stoi(n);
    }
  return -1;
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

std::string dir_of(const std::string& p) {
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

std::string base_of(const std::string& p) {
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string file_identity(const struct stat& st) { return "inode:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino); }

// Writes all of `data` to `fd`, retrying short writes and EINTR; false with errno set on failure.
// A non-blocking descriptor (a FIFO, a device) that is full is waited on in steps of 0.1 s, calling
// `poll` between them, so that a reader that stops reading cannot hold off a stop request.
bool write_all(int fd, const char* data, size_t n, const std::function<void()>& poll) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (poll) poll();
        struct pollfd pfd{fd, POLLOUT, 0};
        ::poll(&pfd, 1, 100);
        continue;
      }
      return false;
    }
    if (w == 0) {
      errno = EIO;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Feeds `content` to `fd` in pieces of at most 4 MiB, calling `poll` between them. Throws the
// write error (UserError naming `path`) or what `poll` throws.
void feed(int fd, const std::string& path, const OutputContent& content, const std::function<void()>& poll) {
  constexpr size_t kPiece = size_t(4) << 20;
  content([&](const char* p, size_t n) {
    while (n > 0) {
      if (poll) poll();
      size_t k = std::min(n, kPiece);
      if (!write_all(fd, p, k, poll)) write_failed(path, errno);
      p += k;
      n -= k;
    }
  });
  if (poll) poll();
}

}  // namespace

OutputTarget check_output_target(const std::string& path, const std::string& what) {
  OutputTarget t;
  t.path = path;
  t.what = what;
  if (path.empty() || path.back() == '/') cannot(path, what, "expected a file name, got a directory");
  struct stat lst, st;
  bool exists = ::lstat(path.c_str(), &lst) == 0;
  if (exists && S_ISLNK(lst.st_mode) && ::stat(path.c_str(), &st) != 0) {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    std::string to = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
    cannot(path, what, "it is a symbolic link to '" + to + "', which does not exist");
  }
  if (exists) {
    if (::stat(path.c_str(), &st) != 0) cannot(path, what, std::strerror(errno));
    if (S_ISDIR(st.st_mode)) cannot(path, what, "it is a directory");
    t.identity = file_identity(st);
    if (names_open_descriptor(path) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      t.kind = OutputTarget::Stream;
      t.real = path;
      if (S_ISFIFO(st.st_mode) && !names_open_descriptor(path)) {
        // A FIFO needs a reader, or writing would wait forever: look now.
        int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) cannot(path, what, errno == ENXIO ? "it is a FIFO that no process reads" : std::strerror(errno));
        ::close(fd);
      } else if (::access(path.c_str(), W_OK) != 0) {
        cannot(path, what, std::string(S_ISCHR(st.st_mode) ? "character device: " : "") + std::strerror(errno));
      }
      return t;
    }
    if (!S_ISREG(st.st_mode))
      cannot(path, what, std::string("it is a ") + (S_ISBLK(st.st_mode) ? "block device" : S_ISSOCK(st.st_mode) ? "socket" : "special file") +
                             "; outputs are regular files, character devices (such as /dev/null) or FIFOs");
    t.kind = OutputTarget::RegularFile;
    t.real = real_path(path);
    if (t.real.empty()) cannot(path, what, std::strerror(errno));
  } else {
    t.kind = OutputTarget::NewFile;
    t.real = path;
  }
  std::string dir = dir_of(t.real);
  if (::stat(dir.c_str(), &st) != 0) cannot(path, what, "directory '" + dir_of(path) + "' does not exist");
  if (!S_ISDIR(st.st_mode)) cannot(path, what, "'" + dir_of(path) + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) cannot(path, what, "directory '" + dir + "' is not writable");
  if (t.kind == OutputTarget::NewFile) {
    std::string rd = real_path(dir);
    t.identity = "path:" + (rd.empty() ? dir : rd) + "/" + base_of(path);
  }
  return t;
}

void OutputSet::add(const std::string& path, const std::string& what) {
  OutputTarget t = check_output_target(path, what);
  for (const OutputTarget& o : targets_)
    if (o.identity == t.identity)
      cannot(path, what, o.path == path ? "it is also the output of " + o.what : "it is the same file as " + o.path + ", the output of " + o.what);
  targets_.push_back(std::move(t));
}

void OutputSet::write(const std::vector<OutputContent>& contents, const std::function<void()>& poll) const {
  std::vector<std::string> temps(targets_.size());
  auto remove_temps = [&] {
    for (const std::string& tmp : temps)
      if (!tmp.empty()) {
        ::unlink(tmp.c_str());
        unregister_temp_file(tmp);
      }
  };
  try {
    // 1. Every file to its temporary file (the targets are untouched so far).
    for (size_t i = 0; i < targets_.size(); ++i) {
      const OutputTarget& t = targets_[i];
      if (t.kind == OutputTarget::Stream) continue;
      std::string tmp = t.real + ".tmp." + std::to_string(::getpid());
      if (!register_temp_file(tmp)) write_failed(t.path, ENAMETOOLONG);
      temps[i] = tmp;
      int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      if (fd < 0) write_failed(t.path, errno);
      try {
        feed(fd, t.path, contents[i], poll);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) write_failed(t.path, errno);
    }
    // 2. The streams, written through (a failure here still leaves every file as it was).
    for (size_t i = 0; i < targets_.size(); ++i) {
      const OutputTarget& t = targets_[i];
      if (t.kind != OutputTarget::Stream) continue;
      // An open descriptor is written at its own offset (as a shell redirection expects); a
      // device or FIFO is opened non-blocking (a FIFO without a reader fails instead of waiting,
      // and a full one is waited on while polling for a stop).
      int own = descriptor_of(t.path);
      int fd = own >= 0 ? ::fcntl(own, F_DUPFD_CLOEXEC, 3) : ::open(t.real.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) write_failed(t.path, errno == ENXIO ? EPIPE : errno);
      try {
        feed(fd, t.path, contents[i], poll);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) write_failed(t.path, errno);
    }
  } catch (...) {
    remove_temps();
    throw;
  }
  // 3. Every temporary file over its target.
  for (size_t i = 0; i < targets_.size(); ++i) {
    if (temps[i].empty()) continue;
    if (::rename(temps[i].c_str(), targets_[i].real.c_str()) != 0) {
      int e = errno;
      remove_temps();
      write_failed(targets_[i].path, e);
    }
    unregister_temp_file(temps[i]);
    temps[i].clear();
  }
}

void write_output_file(const std::string& path, const std::string& what, const std::string& text, const std::function<void()>& poll) {
  OutputSet set;
  set.add(path, what);
  set.write({[&](const std::function<void(const char*, size_t)>& put) { put(text.data(), text.size()); }}, poll);
}

}  // namespace dtsim
