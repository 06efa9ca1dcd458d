// The `iotx` command: one binary, one subcommand per job (command_line.cc lists them).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <system_error>

#include "command.h"
#include "command_line.h"
#include "core/text.h"

namespace {

// Said without allocating: there may be no memory left to build a message with.
constexpr char kOutOfMemory[] =
    "iotx: error: IOTX_E901 out of memory: the command needed more memory than the process may "
    "have (see `ulimit -v` and the sizes of its inputs)\n";

[[noreturn]] void ExitOutOfMemory() {
  const ssize_t ignored = ::write(STDERR_FILENO, kOutOfMemory, sizeof(kOutOfMemory) - 1);
  (void)ignored;
  std::_Exit(iotx::cli::kExitFailure);
}

// The last line of defence: an exception that reaches std::terminate (thrown where none may
// be, such as while another unwinds) is still out of memory with its code and exit status 1,
// never `terminate called ...` and a core dump; anything else is a bug and aborts.
void OnTerminate() {
  if (std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::bad_alloc&) {
      ExitOutOfMemory();
    } catch (...) {
    }
  }
  constexpr char kInternal[] = "iotx: error: IOTX_E900 internal error: std::terminate\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kInternal, sizeof(kInternal) - 1);
  (void)ignored;
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iotx::cli;
  std::set_terminate(OnTerminate);
  try {
    return RunCommandLine(argc, argv);
  } catch (const std::bad_alloc&) {
    ExitOutOfMemory();
  } catch (const std::system_error& e) {
    // A thread that cannot be started (EAGAIN) under a memory limit is out of memory too.
    if (e.code() == std::errc::resource_unavailable_try_again ||
        e.code() == std::errc::not_enough_memory) {
      ExitOutOfMemory();
    }
    std::cerr << "iotx: error: IOTX_E900 internal error: " << iotx::EscapeControl(e.what())
              << '\n';
    return kExitFailure;
  } catch (const std::exception& e) {
    // Library code reports errors as values; reaching here means a bug.
    std::cerr << "iotx: error: IOTX_E900 internal error: " << iotx::EscapeControl(e.what())
              << '\n';
    return kExitFailure;
  }
}
