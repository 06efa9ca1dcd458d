#include "support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace iotx::test {
namespace {

void CheckSys(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& input,
                         const std::string& cwd) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  CheckSys(pipe2(in_pipe, O_CLOEXEC), "pipe");
  CheckSys(pipe2(out_pipe, O_CLOEXEC), "pipe");
  CheckSys(pipe2(err_pipe, O_CLOEXEC), "pipe");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }

  // Feed stdin and drain stdout/stderr together so neither side blocks on a full pipe.
  ProcessResult result;
  size_t written = 0;
  signal(SIGPIPE, SIG_IGN);
  if (input.empty()) {
    close(in_pipe[1]);
    in_pipe[1] = -1;
  }
  int open_outputs = 2;
  char buffer[65536];
  while (open_outputs > 0 || in_pipe[1] >= 0) {
    pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {in_pipe[1], POLLOUT, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
        if (n > 0) {
          (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          close(fds[i].fd);
          (i == 0 ? out_pipe[0] : err_pipe[0]) = -1;
          --open_outputs;
        }
      }
    }
    if (in_pipe[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in_pipe[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == input.size()) {
        close(in_pipe[1]);
        in_pipe[1] = -1;
      }
    }
  }

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

ProcessResult RunTool(const std::vector<std::string>& args, const std::string& cwd) {
#ifdef IOTX_TOOL_PATH
  std::vector<std::string> argv = {IOTX_TOOL_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, "", cwd);
#else
  throw std::runtime_error("the iotx tool is not part of this build");
#endif
}

ProcessResult RunPython(const std::string& code, const std::vector<std::string>& args,
                        const std::string& input) {
  std::vector<std::string> argv = {IOTX_PYTHON, "-c", code};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, input);
}

bool PythonHasNumpy() {
  static const bool has = RunPython("import numpy").exit_code == 0;
  return has;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

}  // namespace iotx::test
