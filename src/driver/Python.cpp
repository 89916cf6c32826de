// python3 processes (Python.h).
#include "driver/Python.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace dtsim {

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

PythonResult run_python3(const std::vector<std::string>& args, const std::vector<std::string>& env,
                         const std::function<void(const std::string&)>& line) {
  std::string cmd;
  for (const std::string& e : env) cmd += e + " ";
  cmd += "python3";
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  PythonResult r;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) {
    r.error = "cannot start python3";
    return r;
  }
  r.started = true;
  std::string cur;
  char buf[4096];
  while (fgets(buf, sizeof buf, f)) {
    r.output += buf;
    cur += buf;
    if (!cur.empty() && cur.back() == '\n') {
      cur.pop_back();
      if (line) line(cur);
      cur.clear();
    }
  }
  if (!cur.empty() && line) line(cur);
  int st = pclose(f);
  r.status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

PythonResult run_triton_module(const TritonModuleRun& run) {
  std::string tmpl = "/tmp/" + run.prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    PythonResult r;
    r.error = "cannot create a temporary directory";
    return r;
  }
  std::filesystem::path dir(tmpl);
  struct Remove {
    std::filesystem::path dir;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove{dir};
  for (const auto& [name, text] : run.files) std::ofstream(dir / name) << text;
  std::vector<std::string> args;
  if (!run.files.empty()) args.push_back((dir / run.files[0].first).string());
  args.insert(args.end(), run.args.begin(), run.args.end());
  if (run.prepare) run.prepare(dir, args);
  PythonResult r = run_python3(args, run.env, run.line);
  if (run.collect) run.collect(dir, r);
  return r;
}

}  // namespace dtsim
