#include "support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/python_modules.h"

namespace iotx::test {
namespace {

void CheckSys(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const ProcessOptions& options)
    : input_(options.input) {
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Pipes, not files: RLIMIT_FSIZE limits writes to files, and the diagnostic must get out.
  int in_pipe[2], out_pipe[2], err_pipe[2];
  CheckSys(pipe2(in_pipe, O_CLOEXEC), "pipe");
  CheckSys(pipe2(out_pipe, O_CLOEXEC), "pipe");
  CheckSys(pipe2(err_pipe, O_CLOEXEC), "pipe");
  struct rlimit limit = {};
  if (options.file_size_limit >= 0) {
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(options.file_size_limit);
  }
  struct rlimit address_space = {};
  if (options.address_space_limit >= 0) {
    address_space.rlim_cur = address_space.rlim_max =
        static_cast<rlim_t>(options.address_space_limit);
  }
  pid_ = fork();
  if (pid_ == 0) {
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(127);
    if (options.address_space_limit >= 0 && setrlimit(RLIMIT_AS, &address_space) != 0) {
      _exit(127);
    }
    if (options.file_size_limit >= 0) {
      // An ignored signal stays ignored across exec: the program then sees EFBIG.
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(127);
    }
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  const int fork_errno = errno;
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (pid_ < 0) {
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(fork_errno));
  }
  if (input_.empty()) {
    close(in_fd_);
    in_fd_ = -1;
  }
}

Process::~Process() {
  if (!waited_) Kill();
}

ProcessResult Process::Wait() {
  if (waited_) return result_;
  // Feed stdin and drain stdout/stderr together so neither side blocks on a full pipe.
  signal(SIGPIPE, SIG_IGN);
  size_t written = 0;
  char buffer[65536];
  while (out_fd_ >= 0 || err_fd_ >= 0 || in_fd_ >= 0) {
    pollfd fds[3] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}, {in_fd_, POLLOUT, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? out_fd_ : err_fd_;
      if (fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n > 0) {
        (i == 0 ? result_.out : result_.err).append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fd);
        fd = -1;
      }
    }
    if (in_fd_ >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(in_fd_, input_.data() + written, input_.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EINTR) || written == input_.size()) {
        close(in_fd_);
        in_fd_ = -1;
      }
    }
  }
  int status = 0;
  struct rusage usage = {};
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  waited_ = true;
  result_.max_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    result_.signal = WTERMSIG(status);
    result_.exit_code = 128 + result_.signal;
  }
  return result_;
}

ProcessResult Process::Kill() {
  if (!waited_) kill(pid_, SIGKILL);
  return Wait();
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& input,
                         const std::string& cwd) {
  return Process(argv, {.input = input, .cwd = cwd}).Wait();
}

std::vector<std::string> ToolArgv(const std::vector<std::string>& args) {
#ifdef IOTX_TOOL_PATH
  std::vector<std::string> argv = {IOTX_TOOL_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
#else
  throw std::runtime_error("the iotx tool is not part of this build");
#endif
}

ProcessResult RunToolWith(const std::vector<std::string>& args, const ProcessOptions& options) {
  return Process(ToolArgv(args), options).Wait();
}

ProcessResult RunTool(const std::vector<std::string>& args, const std::string& cwd) {
  return RunToolWith(args, {.cwd = cwd});
}

ProcessResult RunPython(const std::string& code, const std::vector<std::string>& args,
                        const std::string& input) {
  std::vector<std::string> argv = {IOTX_PYTHON, "-c", code};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, input);
}

bool PythonHasNumpy() { return IOTX_PYTHON_HAS_NUMPY; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  // One allocation of the file's size, filled by 64 KiB reads: growing a stream's buffer and
  // copying it out cost three copies and their page faults per file.
  std::string bytes;
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec) bytes.reserve(size);
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    bytes.append(chunk, static_cast<size_t>(in.gcount()));
  }
  return bytes;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

}  // namespace iotx::test
