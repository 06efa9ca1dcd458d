// Running the built tool, Python and other programs from tests.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace iotx::test {

struct ProcessOptions {
  std::string input{};  // fed on stdin (empty: stdin is at end of file at once)
  std::string cwd{};    // where it runs (empty: here)
  // RLIMIT_FSIZE in bytes (< 0: unchanged). SIGXFSZ is ignored in the child, so a write past
  // the limit fails with EFBIG as on a full disk instead of killing it.
  int64_t file_size_limit = -1;
};

struct ProcessResult {
  int exit_code = -1;  // exit status, or 128 + the signal's number when a signal ended it
  int signal = 0;      // the signal that ended it, 0 when it exited
  std::string out;
  std::string err;
  long max_rss_kib = 0;  // the process's peak resident set (getrusage's ru_maxrss)
};

// A program running in the background (argv[0] looked up on PATH), stdin fed from
// options.input and stdout/stderr collected through pipes. The one way tests start processes.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const ProcessOptions& options = {});
  ~Process();  // kills it if nobody waited
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Feeds stdin, collects the output until the process closes it, and reaps the process.
  ProcessResult Wait();
  // SIGKILLs it (if still running) and waits.
  ProcessResult Kill();

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string input_;
  bool waited_ = false;
  ProcessResult result_;
};

// Runs argv to completion, feeding `input` on stdin.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& input = "",
                         const std::string& cwd = "");

// Runs the built `iotx` tool.
ProcessResult RunTool(const std::vector<std::string>& args, const std::string& cwd = "");
// The same with every option (limits, stdin).
ProcessResult RunToolWith(const std::vector<std::string>& args, const ProcessOptions& options);
// argv for the built tool: its path, then `args`.
std::vector<std::string> ToolArgv(const std::vector<std::string>& args);

// Runs `python3 -c code args...` with the interpreter the build found (it has numpy).
ProcessResult RunPython(const std::string& code, const std::vector<std::string>& args = {},
                        const std::string& input = "");

// True when the Python the build found can import numpy.
bool PythonHasNumpy();

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& contents);

}  // namespace iotx::test
